package soloapp

import (
	"strconv"
	"testing"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// fail-replays: the next n replays of the named case fail at their first
// step with "injected failure"; other cases and later replays pass.
func TestFailReplaysInjectsFirstStepFailures(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}})
	steps := []string{stepJSON("f1", "SLEEP", "", map[string]string{"text": "10"}, false), stepJSON("f2", "SLEEP", "", map[string]string{"text": "10"}, false)}
	r.mustImport("flaky", steps...)
	r.mustImport("steady", steps...)
	for _, bad := range []struct {
		name string
		n    int
	}{{"", 1}, {"flaky", -1}} {
		if err := r.app.FailReplays(bad.name, bad.n); err == nil {
			t.Errorf("FailReplays(%q, %d) accepted", bad.name, bad.n)
		}
	}
	if err := r.app.FailReplays("flaky", 2); err != nil {
		t.Fatal(err)
	}
	run := func(name string, i int) map[string]any {
		t.Helper()
		req := "replay-" + name + "-" + strconv.Itoa(i)
		r.startReplay(name, req)
		st := r.waitRun(req, "passed", "failed")
		return st["results"].([]any)[0].(map[string]any)
	}
	if res := run("steady", 0); str(res, "status") != "passed" {
		t.Fatalf("another case was failed: %v", res)
	}
	for i := 1; i <= 2; i++ {
		res := run("flaky", i)
		if str(res, "status") != "failed" || str(res, "exceptionMessage") != msgInjectedFailure || num(res, "exceptionStep") != 0 || str(res, "exceptionStepId") != "f1" {
			t.Fatalf("replay %d: %v", i, res)
		}
		if len(sub(res, "screenshotFiles")) == 0 {
			t.Errorf("replay %d: no failure screenshot", i)
		}
	}
	if n := r.app.PendingReplayFailures("flaky"); n != 0 {
		t.Fatalf("%d injected failures still due", n)
	}
	if res := run("flaky", 3); str(res, "status") != "passed" {
		t.Fatalf("the third replay failed too: %v", res)
	}
	// Count 0 clears a knob that was set.
	if err := r.app.FailReplays("flaky", 5); err != nil {
		t.Fatal(err)
	}
	if err := r.app.FailReplays("flaky", 0); err != nil || r.app.PendingReplayFailures("flaky") != 0 {
		t.Fatalf("clear: %v, %d due", err, r.app.PendingReplayFailures("flaky"))
	}
}
