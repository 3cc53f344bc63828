package soloapp

// The fail-replays knob: the next n replays of a case fail at their first
// step, so a host's retry and flaky handling can be driven from outside
// (docs/simulator.md#faults). Like the other knobs it belongs to the
// installation and survives Restart.

import (
	"errors"
	"fmt"
)

// msgInjectedFailure is the exceptionMessage of a failure the knob injected.
const msgInjectedFailure = "injected failure"

// replayFaults counts the injected failures still due, by case name.
type replayFaults struct {
	pending map[string]int
}

// FailReplays makes the next n replays of caseName fail at their first step
// with the message "injected failure" (n = 0 clears the knob). The case
// need not exist yet; a replay that never reaches its steps (refused,
// cancelled before the manager starts) does not use one up.
func (a *App) FailReplays(caseName string, n int) error {
	if caseName == "" {
		return errors.New("soloapp: fail-replays needs a caseName")
	}
	if n < 0 {
		return fmt.Errorf("soloapp: fail-replays count %d is negative", n)
	}
	a.Locked(func() {
		if a.rf.pending == nil {
			a.rf.pending = map[string]int{}
		}
		if n == 0 {
			delete(a.rf.pending, caseName)
			return
		}
		a.rf.pending[caseName] = n
	})
	return nil
}

// PendingReplayFailures is how many injected failures of caseName are due.
func (a *App) PendingReplayFailures(caseName string) int {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.rf.pending[caseName]
}

// takeInjectedFailure uses up one injected failure of caseName: the error
// its first step fails with, or nil when none is due.
func (a *App) takeInjectedFailure(caseName string) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	n := a.rf.pending[caseName]
	if n <= 0 {
		return nil
	}
	if n == 1 {
		delete(a.rf.pending, caseName)
	} else {
		a.rf.pending[caseName] = n - 1
	}
	return fail(msgInjectedFailure)
}
