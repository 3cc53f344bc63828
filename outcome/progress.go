package outcome

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/mattn/go-isatty"
)

// Progress writes progress lines to stderr, and only when stderr is a
// terminal: pipelines and CI logs get the JSON on stdout and nothing else.
// NO_COLOR turns colour off.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	color   bool
}

// NewProgress returns a Progress on f (normally os.Stderr).
func NewProgress(f *os.File, getenv func(string) string) *Progress {
	tty := f != nil && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
	return &Progress{w: f, enabled: tty, color: tty && getenv("NO_COLOR") == ""}
}

// Enabled reports whether progress lines are written.
func (p *Progress) Enabled() bool { return p != nil && p.enabled }

// Printf writes one progress line. Safe on a nil *Progress.
func (p *Progress) Printf(format string, args ...any) {
	if !p.Enabled() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	if p.color {
		line = "\x1b[2m" + line + "\x1b[0m"
	}
	fmt.Fprintln(p.w, line)
}
