// Package ptytest opens pseudo-terminals for tests of what a command
// shows on a terminal. Without one a test skips, except under CI=true
// where that is a failure.
package ptytest

import (
	"os"
	"testing"

	"github.com/creack/pty"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

// Open returns a pseudo-terminal cols columns wide: the controlling side
// to read what was shown, and the terminal to hand to the code under test.
// Both are closed when the test ends.
func Open(t testing.TB, cols uint16) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		tooltest.Missing(t, "no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close(); ptmx.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}
