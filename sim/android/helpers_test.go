package android

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// newTestPhone returns a phone on a fast clock: simulated delays (launch
// times, swipes, sleeps) take a ten-thousandth of their real duration.
func newTestPhone(t testing.TB) *Phone {
	t.Helper()
	return New(Config{}, clock.NewScaled(10000))
}

type shResult struct {
	out, err string
	rc       int
}

func sh(t testing.TB, p *Phone, cmd string) shResult {
	t.Helper()
	return shIn(t, p, cmd, nil)
}

func shIn(t testing.TB, p *Phone, cmd string, stdin []byte) shResult {
	t.Helper()
	var o, e bytes.Buffer
	var in *bytes.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	var rc int
	if in != nil {
		rc = p.RunShell(context.Background(), cmd, in, &o, &e)
	} else {
		rc = p.RunShell(context.Background(), cmd, nil, &o, &e)
	}
	return shResult{o.String(), e.String(), rc}
}

// mustSh runs cmd and fails the test unless it exits 0.
func mustSh(t testing.TB, p *Phone, cmd string) string {
	t.Helper()
	r := sh(t, p, cmd)
	if r.rc != 0 {
		t.Fatalf("%q: rc=%d stdout=%q stderr=%q", cmd, r.rc, r.out, r.err)
	}
	return r.out
}

// byID finds a node of the app window by resource id (full or short).
func byID(t testing.TB, p *Phone, id string) *ui.Node {
	t.Helper()
	w := p.ActiveWindow()
	n := w.Root.Find(func(n *ui.Node) bool {
		return n.ResourceID == id || strings.HasSuffix(n.ResourceID, ":id/"+id)
	})
	if n == nil {
		t.Fatalf("no node %q in %s/%s", id, w.Package, w.Activity)
	}
	return n
}

func hasID(p *Phone, id string) bool {
	return p.ActiveWindow().Root.Find(func(n *ui.Node) bool { return strings.HasSuffix(n.ResourceID, ":id/"+id) }) != nil
}

func tapNode(t testing.TB, p *Phone, n *ui.Node) {
	t.Helper()
	if err := p.Tap(n.Bounds.CenterX(), n.Bounds.CenterY()); err != nil {
		t.Fatalf("tap %s: %v", n.ResourceID, err)
	}
}

func launch(t testing.TB, p *Phone, pkg string) {
	t.Helper()
	if err := p.LaunchApp(pkg); err != nil {
		t.Fatalf("launch %s: %v", pkg, err)
	}
	if got, _ := p.Foreground(); got != pkg {
		t.Fatalf("foreground = %s, want %s", got, pkg)
	}
}

// keycodeByName resolves "HOME", "KEYCODE_HOME" or "3" to a key code.
func keycodeByName(name string) (int, bool) {
	if v, err := strconv.Atoi(name); err == nil {
		return v, true
	}
	v, ok := keycodeNames[strings.TrimPrefix(strings.ToUpper(name), "KEYCODE_")]
	return v, ok
}

// shQuote quotes s for the device shell (adb's escape_arg).
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
