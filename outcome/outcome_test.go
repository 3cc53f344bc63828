package outcome

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func TestVerdictExit(t *testing.T) {
	t.Parallel()
	cases := map[string]int{"passed": 0, "failed": 2, "not_tested": 3, "cancelled": 130, "running": 4, "": 4}
	for v, want := range cases {
		if got := VerdictExit(v); got != want {
			t.Errorf("VerdictExit(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestExitForMapsContextErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		exit int
		code string
	}{
		{context.Canceled, exitInterrupted, "interrupted"},
		{fmt.Errorf("poll: %w", context.DeadlineExceeded), exitTimeout, "timeout"},
		{errors.New("boom"), ExitTransport, "internal_error"},
		{fmt.Errorf("wrapped: %w", fault.New(fault.Failed, "replay_active", "busy")), ExitFailure, "replay_active"},
	}
	for _, c := range cases {
		e := fault.From(c.err)
		if ExitFor(e.Kind) != c.exit || e.Code != c.code {
			t.Errorf("From(%v) = %d/%s, want %d/%s", c.err, ExitFor(e.Kind), e.Code, c.exit, c.code)
		}
	}
}

func TestExitOf(t *testing.T) {
	t.Parallel()
	if ExitOf(nil) != ExitOK || ExitOf(fault.Usage("x", "y")) != ExitUsage || ExitOf(fault.New(fault.Timeout, "t", "late")) != exitTimeout {
		t.Fatal("ExitOf does not follow ExitFor")
	}
}
