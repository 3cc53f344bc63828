package agentdevice

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
)

func TestPlannerBudget(t *testing.T) {
	t.Parallel()
	b := PlannerBudget(PlannerOptions{MaxSteps: 500, MaxDuration: 10 * time.Minute})
	if b.MaxSteps != 200 || b.MaxDurationMs != 660000 || b.IdleTimeoutMs != 300000 {
		t.Fatalf("budget %+v: want 200 steps (the device's cap), 660 s, idle 300 s", b)
	}
	if b := PlannerBudget(PlannerOptions{MaxSteps: 3, MaxDuration: time.Hour}); b.MaxSteps != 3 || b.MaxDurationMs != 1800000 {
		t.Fatalf("budget %+v: want 3 steps and the device's 30 min cap", b)
	}
}

// TestReleaseEndsOrCancels: a run that ended by itself ends its Agent
// session; an interrupted or timed-out one cancels exactly its own.
func TestReleaseEndsOrCancels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		outcome, state string
	}{
		{agentloop.OutcomeCompleted, "ended"},
		{agentloop.OutcomeCancelled, "cancelled"},
		{agentloop.OutcomeMaxDuration, "cancelled"},
	} {
		t.Run(c.outcome, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, sess := simSession(t)
			dev, closeClient, err := StartPlanner(ctx, sess, PlannerOptions{MaxSteps: 5, MaxDuration: time.Minute,
				AckTimeout: 15 * time.Second, ActionTimeout: 15 * time.Second, PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient()
			if err := Release(ctx, dev, &agentloop.Result{Outcome: c.outcome}); err != nil {
				t.Fatal(err)
			}
			st, err := dev.client.Status(ctx, dev.id)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != c.state {
				t.Fatalf("session state %s after Release, want %s", st.State, c.state)
			}
		})
	}
}
