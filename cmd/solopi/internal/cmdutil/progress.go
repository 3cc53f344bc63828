package cmdutil

import (
	"io"
	"sync"

	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// The status line of a command (package progress) shows what the
// libraries report: device events of replays, batches and sessions, and
// the pure-vision runtime's events. Both renderers below only update the
// one line; nothing is printed when stderr is not a terminal.

// deviceTally turns device events into the status line: sub-run i/N, the
// case, the run's state and the verdicts seen so far. A sub-run that
// ended without a verdict (it failed before the device judged it) counts
// as failed once the next one starts.
type deviceTally struct {
	line *progress.Line

	mu       sync.Mutex
	current  int
	verdicts map[int]string
}

// DeviceProgress is the observer every device operation of the command
// reports to (nil when there is no line to draw).
func (g *Globals) DeviceProgress() device.Progress {
	if !g.Progress.Enabled() {
		return nil
	}
	return g.Events.report
}

func (t *deviceTally) report(e device.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.verdicts == nil {
		t.verdicts = map[int]string{}
	}
	if e.Index > t.current {
		for i := max(t.current, 1); i < e.Index; i++ {
			if t.verdicts[i] == "" {
				t.verdicts[i] = string(protocol.ReplayFailed)
			}
		}
		t.current = e.Index
	}
	switch s := protocol.State(e.State); s {
	case protocol.ReplayPassed, protocol.ReplayFailed, protocol.ReplayCancelled:
		if t.verdicts[e.Index] == "" {
			t.verdicts[e.Index] = string(s)
		}
	}
	passed, failed := 0, 0
	for _, v := range t.verdicts {
		if v == string(protocol.ReplayPassed) {
			passed++
		} else {
			failed++
		}
	}
	t.line.Update(func(s *progress.State) {
		if e.Total > 0 {
			s.Index, s.Total = e.Index, e.Total
		}
		s.Phase = e.Phase
		if e.State != "" {
			s.Phase = e.State
		}
		switch {
		case e.Case != "":
			s.Label = e.Case
		case e.Message != "":
			s.Label = e.Message
		}
		s.Passed, s.Failed = passed, failed
	})
}

// PromptWriter is where a question to the person at the terminal goes:
// stderr, with the status line out of the way.
func (g *Globals) PromptWriter() io.Writer {
	if g.Progress.Enabled() {
		return g.Progress.Writer()
	}
	return g.Env.Stderr
}
