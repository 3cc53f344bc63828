package main

import (
	"io"
	"sync"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/outcome"
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

// agentProgress renders the pure-vision runtime's events: step i of the
// step budget, the runtime's phase, the last notable event, and the
// verification verdicts of the actions so far.
func agentProgress(line *progress.Line, maxSteps int) func(agentloop.AgentEvent) {
	if !line.Enabled() {
		return nil
	}
	return func(ev agentloop.AgentEvent) {
		line.Update(func(s *progress.State) {
			if ev.Step > 0 {
				s.Index, s.Total = ev.Step, maxSteps
			}
			if ev.Phase != "" {
				s.Phase = string(ev.Phase)
			}
			switch ev.Type {
			case agentloop.EvAction, agentloop.EvRiskReview, agentloop.EvConfirmation, agentloop.EvRecovery,
				agentloop.EvCalibration, agentloop.EvTaskReview, agentloop.EvFinish:
				s.Label = ev.Message
			case agentloop.EvVerification:
				s.Label = ev.Message
				switch ev.Payload["status"] {
				case agentloop.VerifyPassed:
					s.Passed++
				case agentloop.VerifyFailed:
					s.Failed++
				}
			}
		})
	}
}

// chainEvents calls every non-nil observer in order.
func chainEvents(fns ...func(agentloop.AgentEvent)) func(agentloop.AgentEvent) {
	var live []func(agentloop.AgentEvent)
	for _, f := range fns {
		if f != nil {
			live = append(live, f)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return func(ev agentloop.AgentEvent) {
		for _, f := range live {
			f(ev)
		}
	}
}

// PromptWriter is where a question to the person at the terminal goes:
// stderr, with the status line out of the way.
func (g *Globals) PromptWriter() io.Writer {
	if g.Progress.Enabled() {
		return g.Progress.Writer()
	}
	return g.Env.Stderr
}

// shardProgress renders the shards a managed worker finished: how many of
// the --max-assignments limit, the last shard and the verdicts so far.
func shardProgress(line *progress.Line, limit int) func(worker.ShardReport) {
	if !line.Enabled() {
		return nil
	}
	var mu sync.Mutex
	done := 0
	return func(rep worker.ShardReport) {
		mu.Lock()
		done++
		n := done
		mu.Unlock()
		line.Update(func(s *progress.State) {
			if limit > 0 {
				s.Index, s.Total = n, limit
			}
			s.Phase = "working"
			if a := rep.Assignment; a != nil {
				s.Label = a.TaskID + "/" + a.ShardID
			}
			switch {
			case rep.Err != nil || rep.Status == outcome.VerdictFailed:
				s.Failed++
			case rep.Status == outcome.VerdictPassed:
				s.Passed++
			default:
				s.NotTested++
			}
		})
	}
}
