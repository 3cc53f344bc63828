package android

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse drives one phone from many goroutines at once: input,
// tree snapshots, screenshots, the shell, the file system and logcat. Run
// with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.counter")
	inc := byID(t, p, "increment_button")
	changes := 0
	var mu sync.Mutex
	cancel := p.OnChange(func() {
		mu.Lock()
		changes++
		mu.Unlock()
		_ = p.Windows() // listeners may read the phone
	})
	defer cancel()
	var wg sync.WaitGroup
	const n = 20
	for i := 0; i < n; i++ {
		wg.Add(5)
		go func() { defer wg.Done(); _ = p.Tap(inc.Bounds.CenterX(), inc.Bounds.CenterY()) }()
		go func() { defer wg.Done(); _ = p.Windows(); _ = p.AccessibilityRoots() }()
		go func() { defer wg.Done(); _, _ = p.Screenshot() }()
		go func(i int) {
			defer wg.Done()
			sh(t, p, fmt.Sprintf("echo %d > /sdcard/f%d; cat /sdcard/f%d; dumpsys window >/dev/null", i, i, i))
		}(i)
		go func(i int) { defer wg.Done(); p.Log('I', "T", fmt.Sprint(i)); _ = p.Logcat() }(i)
	}
	wg.Wait()
	if v := byID(t, p, "counter_value").Text; v != fmt.Sprint(n) {
		t.Errorf("counter = %s after %d concurrent taps", v, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if changes < n {
		t.Errorf("%d change notifications for %d taps", changes, n)
	}
}

func TestWaitChange(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	v := p.Version()
	done := make(chan uint64)
	go func() {
		nv, err := p.WaitChange(context.Background(), v)
		if err != nil {
			t.Error(err)
		}
		done <- nv
	}()
	time.Sleep(5 * time.Millisecond)
	launch(t, p, "com.example.counter")
	select {
	case nv := <-done:
		if nv <= v {
			t.Errorf("version %d not above %d", nv, v)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("WaitChange did not wake up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := p.WaitChange(ctx, p.Version()); err == nil {
		t.Error("WaitChange without a change returned no error")
	}
	// A tap on nothing does not count as a change.
	before := p.Version()
	_ = p.Tap(5, 2000)
	if p.Version() != before {
		t.Error("a tap on empty space changed the version")
	}
}

func TestLongPressAndSwipeGestures(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.list")
	item := listItems(p)[1]
	p.ClearLogcat()
	if err := p.LongPress(item.Bounds.CenterX(), item.Bounds.CenterY(), 800*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	logged := false
	for _, e := range p.Logcat() {
		logged = logged || e.Msg == "long press on Item 2"
	}
	if !logged {
		t.Error("long press effect did not run")
	}
	if _, act := p.Foreground(); act != "com.example.list.ListActivity" {
		t.Errorf("long press also clicked: %s", act)
	}
	// A short press is a click; a swipe without movement held long is a
	// long press; both through the shell.
	mustSh(t, p, fmt.Sprintf("input swipe %d %d %d %d 600", item.Bounds.CenterX(), item.Bounds.CenterY(), item.Bounds.CenterX(), item.Bounds.CenterY()))
	if _, act := p.Foreground(); act != "com.example.list.ListActivity" {
		t.Errorf("held swipe clicked: %s", act)
	}
	if err := p.LongPress(item.Bounds.CenterX(), item.Bounds.CenterY(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, act := p.Foreground(); act != "com.example.list.DetailActivity" {
		t.Errorf("short press did not click: %s", act)
	}
	if err := p.Tap(-1, 5); err == nil {
		t.Error("tap off screen accepted")
	}
}
