package agentloop

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// waitConfirmer answers after ready closes, or fails with err.
type waitConfirmer struct {
	ready  chan struct{}
	answer bool
	err    error
	asked  chan struct{}
}

func (w *waitConfirmer) Confirm(ctx context.Context, _ string) (bool, error) {
	close(w.asked)
	if w.err != nil {
		return false, w.err
	}
	select {
	case <-w.ready:
		return w.answer, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (w *waitConfirmer) TakeOver(ctx context.Context, m string) (bool, error) {
	return w.Confirm(ctx, m)
}

func newWait(answer bool, err error) *waitConfirmer {
	return &waitConfirmer{ready: make(chan struct{}), answer: answer, err: err, asked: make(chan struct{})}
}

func TestFirstAnswerWins(t *testing.T) {
	t.Parallel()
	slow, fast := newWait(false, nil), newWait(true, nil)
	close(fast.ready)
	ok, err := FirstAnswer(slow, nil, fast).Confirm(context.Background(), "pay?")
	if err != nil || !ok {
		t.Fatalf("got %v %v, want the fast approval", ok, err)
	}
	// A failed confirmer (a closed terminal) leaves the question to the
	// other one.
	broken, later := newWait(false, errors.New("stdin closed")), newWait(true, nil)
	go func() { <-broken.asked; close(later.ready) }()
	if ok, err := FirstAnswer(broken, later).TakeOver(context.Background(), "log in"); err != nil || !ok {
		t.Fatalf("got %v %v after one confirmer failed", ok, err)
	}
	// All failed: the errors; the caller's cancellation: its error.
	if _, err := FirstAnswer(newWait(false, errors.New("a")), newWait(false, errors.New("b"))).Confirm(context.Background(), "x"); err == nil {
		t.Fatal("no error when every confirmer failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := FirstAnswer(newWait(false, nil), newWait(false, nil)).Confirm(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
}

// TestTerminalConfirmerSurvivesAWithdrawnPrompt: after a prompt is
// withdrawn (another confirmer answered), the next prompt reads the next
// line; no second reader races for the input.
func TestTerminalConfirmerSurvivesAWithdrawnPrompt(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	var out strings.Builder
	tc := &TerminalConfirmer{In: r, Out: &out}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := tc.Confirm(ctx, "first"); done <- err }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("withdrawn prompt: %v", err)
	}
	go func() { io.WriteString(w, "yes\n") }()
	ok, err := tc.Confirm(context.Background(), "second")
	if err != nil || !ok {
		t.Fatalf("second prompt: %v %v", ok, err)
	}
	w.Close()
	if _, err := tc.Confirm(context.Background(), "third"); err == nil {
		t.Fatal("a closed input answered")
	}
}

// TestTerminalConfirmerShowsModelTextAsText: a take-over message with
// escape sequences cannot clear the screen or retitle the terminal.
func TestTerminalConfirmerShowsModelTextAsText(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	tc := &TerminalConfirmer{In: strings.NewReader("\n"), Out: &out}
	if ok, err := tc.TakeOver(context.Background(), "log in\x1b[2J\x1b]0;pwned\x07\rnow"); err != nil || !ok {
		t.Fatalf("take over: %v %v", ok, err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\r") || !strings.Contains(out.String(), "log in\uFFFD[2J") {
		t.Fatalf("the terminal was sent %q", out.String())
	}
}
