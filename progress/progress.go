// Package progress draws one updating status line on a terminal: sub-run
// i of N, the current case or segment, the elapsed time and the verdict
// counts, redrawn in place with a carriage return. It writes nothing at
// all unless its file is a terminal, so pipelines and CI logs see only the
// command's JSON, and it honours NO_COLOR.
//
// A command has one Line (cmd/solopi builds it from stderr for every
// command); whatever runs inside the command reports through it:
//
//	line.Update(func(s *progress.State) { s.Index, s.Total, s.Label = 2, 5, "login" })
//
// Update may be called from any goroutine; the line is redrawn at once
// and then every second while the elapsed time moves. Done clears it
// before the command prints its JSON. Printf puts one whole line above
// it, and Writer hands a prompt the terminal without the line in the way.
package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"

	"github.com/solopi-dev/solopi/clock"
)

// State is what the line shows. Zero fields are left out.
type State struct {
	// Index and Total: sub-run Index of Total.
	Index, Total int
	// Label is the current case, segment or step.
	Label string
	// Phase is a short word for what is happening (running, waiting).
	Phase                     string
	Passed, Failed, NotTested int
}

// Line is the status line of one command.
type Line struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	color   bool
	width   func() int
	clk     clock.Clock
	start   time.Time
	st      State
	drawn   bool
	stop    context.CancelFunc
}

const (
	clearLine = "\r\x1b[2K"
	green     = "\x1b[32m"
	red       = "\x1b[31m"
	yellow    = "\x1b[33m"
	dim       = "\x1b[2m"
	reset     = "\x1b[0m"
)

// New returns the line for f (normally os.Stderr): enabled only when f is
// a terminal, coloured unless NO_COLOR is set. clk may be nil.
func New(f *os.File, getenv func(string) string, clk clock.Clock) *Line {
	tty := f != nil && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
	l := newTo(f, tty, tty && getenv("NO_COLOR") == "", clk)
	if tty {
		fd := int(f.Fd())
		l.width = func() int {
			if w, _, err := term.GetSize(fd); err == nil && w > 0 {
				return w
			}
			return 80
		}
	}
	return l
}

// newTo returns a line writing to w when enabled (tests, callers that
// decided on their own), 80 columns wide.
func newTo(w io.Writer, enabled, color bool, clk clock.Clock) *Line {
	c := clock.Or(clk)
	return &Line{w: w, enabled: enabled, color: color, clk: c, start: c.Now(), width: func() int { return 80 }}
}

// Enabled reports whether anything is written.
func (l *Line) Enabled() bool { return l != nil && l.enabled }

// Update changes the state and redraws the line. The first update starts a
// once-a-second redraw so the elapsed time moves while nothing else does.
// Safe on a nil *Line.
func (l *Line) Update(change func(*State)) {
	if !l.Enabled() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	change(&l.st)
	if l.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.stop = cancel
		go l.tick(ctx)
	}
	l.drawLocked()
}

func (l *Line) tick(ctx context.Context) {
	for l.clk.Sleep(ctx, time.Second) == nil {
		l.mu.Lock()
		if l.drawn {
			l.drawLocked()
		}
		l.mu.Unlock()
	}
}

// Printf writes a whole line above the status line, which is redrawn
// below it.
func (l *Line) Printf(format string, args ...any) {
	if !l.Enabled() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	text := Printable(fmt.Sprintf(format, args...))
	if l.color {
		text = dim + text + reset
	}
	fmt.Fprint(l.w, clearLine+text+"\n")
	if l.drawn {
		l.drawLocked()
	}
}

// Writer returns a writer for text that needs the terminal to itself (a
// question waiting for an answer): each write first clears the status
// line, which stays away until the next Update. On a disabled line it is
// the line's file unchanged, so the text is written all the same; a nil
// Line's writer discards.
func (l *Line) Writer() io.Writer { return lineWriter{l} }

type lineWriter struct{ l *Line }

func (w lineWriter) Write(p []byte) (int, error) {
	l := w.l
	if l == nil {
		return len(p), nil
	}
	if !l.Enabled() {
		return l.w.Write(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		if _, err := io.WriteString(l.w, clearLine); err != nil {
			return 0, err
		}
		l.drawn = false
	}
	return l.w.Write(p)
}

// Done clears the line and stops redrawing; the terminal is left as it
// was before the first update.
func (l *Line) Done() {
	if !l.Enabled() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		l.stop()
	}
	if l.drawn {
		fmt.Fprint(l.w, clearLine)
		l.drawn = false
	}
}

func (l *Line) drawLocked() {
	fmt.Fprint(l.w, clearLine+l.render(l.width()-1))
	l.drawn = true
}

// render is the line's text, cut to width columns (escape sequences do
// not count).
func (l *Line) render(width int) string {
	st := l.st
	type part struct{ text, color string }
	var parts []part
	if st.Total > 0 {
		parts = append(parts, part{fmt.Sprintf("[%d/%d]", st.Index, st.Total), ""})
	}
	if st.Phase != "" {
		parts = append(parts, part{Printable(st.Phase), dim})
	}
	el := l.clk.Now().Sub(l.start).Truncate(time.Second)
	parts = append(parts, part{fmt.Sprintf("%d:%02d", int(el.Minutes()), int(el.Seconds())%60), ""})
	if st.Passed+st.Failed+st.NotTested > 0 {
		parts = append(parts, part{fmt.Sprintf("%d passed", st.Passed), green}, part{fmt.Sprintf("%d failed", st.Failed), red})
		if st.NotTested > 0 {
			parts = append(parts, part{fmt.Sprintf("%d not tested", st.NotTested), yellow})
		}
	}
	if st.Label != "" {
		parts = append(parts, part{Printable(st.Label), ""})
	}
	var b strings.Builder
	used := 0
	for i, p := range parts {
		text := p.text
		sep := ""
		if i > 0 {
			sep = " · "
		}
		room := width - used - utf8.RuneCountInString(sep)
		if room <= 0 {
			break
		}
		if n := utf8.RuneCountInString(text); n > room {
			text = string([]rune(text)[:max(room-1, 0)]) + "…"
		}
		b.WriteString(sep)
		if l.color && p.color != "" {
			b.WriteString(p.color + text + reset)
		} else {
			b.WriteString(text)
		}
		used += utf8.RuneCountInString(sep) + utf8.RuneCountInString(text)
	}
	return b.String()
}

// Printable replaces control characters with U+FFFD: a case name or a
// model's answer shown on a terminal must not move the cursor, change the
// title or ring the bell.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}
