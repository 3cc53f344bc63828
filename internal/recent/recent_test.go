package recent

import "testing"

func TestList(t *testing.T) {
	t.Parallel()
	l := List[string, int]{Size: 2}
	if _, ok := l.Get("a"); ok {
		t.Fatal("an empty list found a value")
	}
	l.Put("a", 1)
	l.Put("b", 2)
	if v, ok := l.Get("a"); !ok || v != 1 {
		t.Fatalf("a: %d %v", v, ok)
	}
	l.Put("c", 3) // b is the oldest now: a was read after it
	if _, ok := l.Get("b"); ok {
		t.Fatal("the least recent key was kept")
	}
	if v, ok := l.Get("a"); !ok || v != 1 {
		t.Fatalf("a after c: %d %v", v, ok)
	}
	l.Put("a", 10) // a new value replaces the old, it does not add a key
	if v, _ := l.Get("a"); v != 10 || len(l.entries) != 2 {
		t.Fatalf("a replaced: %d, %d entries", v, len(l.entries))
	}
	if v, ok := l.Find(func(v int) bool { return v == 3 }); !ok || v != 3 {
		t.Fatalf("find 3: %d %v", v, ok)
	}
	if _, ok := l.Find(func(v int) bool { return v == 2 }); ok {
		t.Fatal("found a forgotten value")
	}
	var none List[int, int]
	none.Put(1, 1)
	if _, ok := none.Get(1); ok {
		t.Fatal("a list of size 0 remembered a value")
	}
}
