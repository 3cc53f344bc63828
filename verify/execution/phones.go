package execution

import (
	"context"

	"github.com/solopi-dev/solopi/verify"
)

// walkPhones is walk on several phones: each free phone takes the first
// scenario in execution order whose dependencies all have their verdict.
// A scenario whose dependency did not pass runs nothing, as on one phone,
// so it is decided without a phone. Outcomes are keyed by scenario and
// segment, so the report, and its outcome fingerprint, is the one a
// single phone gives for the same outcomes.
func (r *run) walkPhones(ctx context.Context) error {
	type done struct {
		phone int
		id    string
		err   error
	}
	statuses := map[string]string{}
	pending := append([]string(nil), r.plan.ExecutionOrder...)
	free := make([]bool, len(r.e.Phones))
	for i := range free {
		free[i] = true
	}
	results := make(chan done)
	running := 0
	var firstErr error
	decide := func(id string) {
		r.mu.Lock()
		statuses[id] = verify.ScenarioStatus(r.plan, r.rec, r.plan.Scenario(id), statuses)
		r.mu.Unlock()
	}
	for {
		// Start what can start: nothing once the run was interrupted or a
		// scenario could not write its evidence.
		for firstErr == nil && !r.interrupted() {
			i, id := r.nextReady(pending, statuses, free)
			if id == "" {
				break
			}
			pending = remove(pending, id)
			sc := r.plan.Scenario(id)
			if len(verify.DependenciesPassed(sc, statuses)) > 0 {
				decide(id)
				continue
			}
			free[i] = false
			running++
			phone := *r
			phone.p = r.e.Phones[i]
			go func() { results <- done{i, id, phone.scenario(ctx, sc)} }()
		}
		if running == 0 {
			return firstErr
		}
		d := <-results
		running--
		free[d.phone] = true
		if d.err != nil && firstErr == nil {
			firstErr = d.err
		}
		decide(d.id)
	}
}

// nextReady is the first pending scenario whose dependencies are all
// decided, and a free phone for it (-1 when it needs none because a
// dependency did not pass); "" when none can start now.
func (r *run) nextReady(pending []string, statuses map[string]string, free []bool) (int, string) {
	phone := -1
	for i, f := range free {
		if f {
			phone = i
			break
		}
	}
	for _, id := range pending {
		sc := r.plan.Scenario(id)
		ready := true
		for _, dep := range sc.DependsOn {
			if _, ok := statuses[dep]; !ok {
				ready = false
				break
			}
		}
		if !ready {
			continue
		}
		if len(verify.DependenciesPassed(sc, statuses)) > 0 {
			return -1, id
		}
		if phone >= 0 {
			return phone, id
		}
	}
	return -1, ""
}

func remove(ids []string, id string) []string {
	for i, v := range ids {
		if v == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}
