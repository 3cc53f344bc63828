package fakemodel

import "testing"

func TestRelativeGoals(t *testing.T) {
	t.Parallel()
	for task, want := range map[string]int{
		"increment the counter once": 1,
		"Increase the counter twice": 2,
		"raise the counter 4 times":  4,
		"将计数器准确增加一次。":                1,
		"将计数器增加两次后才能声明完成":            2,
		"increase the counter to 3":  -1,
		"the counter shows 1":        -1,
		"将计数器设为一":                    -1,
	} {
		n, ok := relativeGoal(task)
		if want < 0 && ok || want >= 0 && (!ok || n != want) {
			t.Errorf("%q: %d %v, want %d", task, n, ok, want)
		}
	}
}
