package android

import (
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

func TestIMEFocusMakesMultiWindow(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.login")
	if roots := p.AccessibilityRoots(); len(roots) != 1 || roots[0].Kind != ui.WindowApp || p.MultiWindow() {
		t.Fatalf("before focus: %d roots", len(roots))
	}
	kinds := func() []string {
		var k []string
		for _, w := range p.Windows() {
			k = append(k, w.Kind)
		}
		return k
	}
	if got := kinds(); len(got) != 2 || got[0] != ui.WindowStatusBar || got[1] != ui.WindowApp {
		t.Fatalf("windows = %v", got)
	}
	sb := p.Windows()[0]
	if sb.Package != systemUIPackage || sb.Bounds != (ui.Rect{Left: 0, Top: 0, Right: 1080, Bottom: 63}) {
		t.Errorf("status bar = %+v", sb)
	}
	tapNode(t, p, byID(t, p, "username"))
	if !byID(t, p, "username").Focused {
		t.Error("tapped field not focused")
	}
	roots := p.AccessibilityRoots()
	if len(roots) != 2 || roots[0].Kind != ui.WindowApp || roots[1].Kind != ui.WindowIME || !p.MultiWindow() {
		t.Fatalf("with keyboard: %+v", roots)
	}
	ime := roots[1]
	if ime.Package != "com.android.inputmethod.latin" || ime.Bounds.Top != 1500 || ime.Root.PackageName != ime.Package {
		t.Errorf("ime window = %+v", ime)
	}
	if got := kinds(); got[0] != ui.WindowIME {
		t.Errorf("z-order = %v, IME should be on top", got)
	}
	// Typing on the soft keyboard.
	for _, k := range []string{"d", "e", "m", "o", "o", "DEL"} {
		key := ime.Root.Find(func(n *ui.Node) bool { return n.Kind == "key" && n.Text == k })
		if key == nil {
			t.Fatalf("no key %q", k)
		}
		tapNode(t, p, key)
	}
	if got := byID(t, p, "username").Text; got != "demo" {
		t.Errorf("typed %q", got)
	}
	if f, ok := p.FocusedField(); !ok || f.Text != "demo" {
		t.Errorf("FocusedField = %+v", f)
	}
	// Moving focus to the password field keeps the keyboard up.
	tapNode(t, p, byID(t, p, "password"))
	if !byID(t, p, "password").Focused || byID(t, p, "username").Focused || !p.IMEShown() {
		t.Error("focus did not move")
	}
	if err := p.Back(); err != nil {
		t.Fatal(err)
	}
	if p.IMEShown() || p.MultiWindow() {
		t.Error("BACK did not hide the keyboard")
	}
	if err := p.InputText("secret"); err != nil {
		t.Errorf("typing into the still-focused field: %v", err)
	}
	if err := p.Home(); err != nil {
		t.Fatal(err)
	}
	if err := p.InputText("x"); err == nil {
		t.Error("typing on the home screen succeeded")
	}
}

func TestTransientOverlay(t *testing.T) {
	t.Parallel()
	// A slower clock than usual: 10 s simulated is 100 ms real, long enough
	// to look at the overlay before it expires, even on a loaded machine.
	p := New(Config{}, clock.NewScaled(100))
	launch(t, p, "com.example.counter")
	inc := byID(t, p, "increment_button")
	v0 := p.Version()
	p.ShowTransientWindow("com.android.systemui", ui.Rect{Left: 0, Top: 1000, Right: 1080, Bottom: 1400}, 10*time.Second)
	if p.Version() == v0 {
		t.Error("overlay did not change the version")
	}
	ws := p.Windows()
	if ws[0].Kind != ui.WindowOverlay || ws[0].Package != "com.android.systemui" || !p.MultiWindow() {
		t.Fatalf("windows: %+v", ws[0])
	}
	tapNode(t, p, inc) // swallowed by the overlay
	if v := byID(t, p, "counter_value").Text; v != "0" {
		t.Errorf("tap went through the overlay: %s", v)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.MultiWindow() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if p.MultiWindow() {
		t.Fatal("overlay did not expire")
	}
	tapNode(t, p, inc)
	if v := byID(t, p, "counter_value").Text; v != "1" {
		t.Errorf("tap after the overlay: %s", v)
	}
}
