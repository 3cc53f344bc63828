package progress

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/ptytest"
)

// terminal opens a pseudo-terminal and collects what is written to it.
func terminal(t *testing.T) (*os.File, func() string) {
	t.Helper()
	ptmx, tty := ptytest.Open(t, 100)
	var mu sync.Mutex
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); ptmx.Close(); <-done })
	return tty, func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
}

func eventually(t *testing.T, read func() string, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := read()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows %q", want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func env(noColor string) func(string) string {
	return func(k string) string {
		if k == "NO_COLOR" {
			return noColor
		}
		return ""
	}
}

func TestLineOnATerminal(t *testing.T) {
	t.Parallel()
	tty, read := terminal(t)
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(tty, env(""), clk)
	if !l.Enabled() {
		t.Fatal("the line is off on a terminal")
	}
	l.Update(func(s *State) { s.Index, s.Total, s.Label, s.Passed, s.Failed = 2, 5, "counter-smoke", 1, 1 })
	eventually(t, read, "\r\x1b[2K[2/5] · 0:00 · \x1b[32m1 passed\x1b[0m · \x1b[31m1 failed\x1b[0m · counter-smoke")
	// The elapsed time moves on its own.
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(65 * time.Second)
	eventually(t, read, "[2/5] · 1:05 ·")
	l.Printf("sub-run %d done", 2)
	eventually(t, read, "sub-run 2 done")
	l.Done()
	// Done clears the line last: the terminal ends as it was.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasSuffix(read(), "\r\x1b[2K") {
		if time.Now().After(deadline) {
			out := read()
			t.Fatalf("the line is not cleared at the end: %q", out[max(0, len(out)-80):])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNoColor(t *testing.T) {
	t.Parallel()
	tty, read := terminal(t)
	l := New(tty, env("1"), clock.NewFake(time.Unix(0, 0)))
	l.Update(func(s *State) {
		s.Index, s.Total, s.Label, s.Passed, s.Failed, s.NotTested = 1, 3, "segment-a", 0, 1, 1
	})
	got := eventually(t, read, "segment-a")
	if strings.Contains(got, "\x1b[3") || strings.Contains(got, "\x1b[0m") {
		t.Errorf("colour despite NO_COLOR: %q", got)
	}
	if !strings.Contains(got, "0 passed · 1 failed · 1 not tested") {
		t.Errorf("counts: %q", got)
	}
	l.Done()
}

// TestQuietWithoutATerminal: on a pipe (CI, a redirect) nothing at all
// is written.
func TestQuietWithoutATerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l := New(w, env(""), nil)
	if l.Enabled() {
		t.Fatal("the line is on for a pipe")
	}
	l.Update(func(s *State) { s.Index, s.Total, s.Label = 1, 1, "x" })
	l.Printf("hello")
	l.Done()
	w.Close()
	b, _ := io.ReadAll(r)
	if len(b) != 0 {
		t.Errorf("wrote %q to a pipe", b)
	}
	var nilLine *Line
	nilLine.Update(func(*State) {})
	nilLine.Printf("x")
	nilLine.Done()
}

func TestLongLabelIsCutToTheWidth(t *testing.T) {
	t.Parallel()
	l := newTo(io.Discard, true, false, clock.NewFake(time.Unix(0, 0)))
	l.st = State{Index: 10, Total: 12, Label: strings.Repeat("很长的用例名", 20)}
	got := l.render(40)
	if n := len([]rune(got)); n > 40 || !strings.HasSuffix(got, "…") {
		t.Errorf("render(40) = %q (%d runes)", got, n)
	}
}

// TestWriterClearsTheLine: a prompt written through Writer starts on a
// clean line, and the status line stays away until the next Update.
func TestWriterClearsTheLine(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	clk := clock.NewFake(time.Unix(0, 0))
	l := newTo(&buf, true, false, clk)
	l.Update(func(s *State) { s.Label = "step 1" })
	if _, err := io.WriteString(l.Writer(), "approve? [y/N] "); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.HasSuffix(got, "step 1\r\x1b[2Kapprove? [y/N] ") {
		t.Fatalf("prompt not on a clean line: %q", got)
	}
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	before := buf.String()
	// The once-a-second redraw leaves the prompt alone.
	clk.Advance(time.Second)
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if buf.String() != before {
		t.Fatalf("the line came back over the prompt: %q", buf.String())
	}
	l.Update(func(s *State) { s.Label = "step 2" })
	if !strings.HasSuffix(buf.String(), "step 2") {
		t.Fatalf("the next update does not redraw: %q", buf.String())
	}
	l.Done()
	var off strings.Builder
	if _, err := io.WriteString(newTo(&off, false, false, nil).Writer(), "q? "); err != nil || off.String() != "q? " {
		t.Fatalf("a disabled line's writer: %q %v", off.String(), err)
	}
}

// TestHostileTextStaysText: escape sequences in a case name or a model's
// answer reach the terminal as replacement characters, not as commands.
func TestHostileTextStaysText(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	l := newTo(&buf, true, false, clock.NewFake(time.Unix(0, 0)))
	l.Update(func(s *State) { s.Label, s.Phase = "case\x1b]0;pwned\x07<script>", "run\x1b[2J" })
	l.Printf("model said \x1b[31mred\r")
	l.Done()
	got := strings.ReplaceAll(buf.String(), clearLine, "")
	if strings.ContainsAny(got, "\x07\r") || strings.Contains(got, "\x1b") {
		t.Fatalf("control characters reached the terminal: %q", got)
	}
	if !strings.Contains(got, "case\uFFFD]0;pwned\uFFFD<script>") {
		t.Fatalf("the label is not shown as text: %q", got)
	}
}
