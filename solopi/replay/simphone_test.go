package replay

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/solopi/device"
)

// The device of these tests is the simulator (SoloPi's device side as
// docs/device-protocol.md describes it, reached in-process through the
// same Transport interface adb uses): its state machines decide, and the
// odd behaviours come from its fault knobs.

// Case bodies on the simulator's counter app.
const (
	// twoSteps passes: a short sleep, a click on +1, a screenshot.
	twoSteps = `[{"stepId":"ai-step-001","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"100"}}},
 {"stepId":"ai-step-002","operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/increment_button"}},
 {"stepId":"ai-step-003","operationMethod":{"actionEnum":"SCREENSHOT","operationParam":{"text":"after-click"}}}]`
	// failSteps fails at its second step: the node does not exist.
	failSteps = `[{"stepId":"ai-step-001","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"100"}}},
 {"stepId":"ai-step-002","operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/no_such_button"}}]`
	// hangSteps runs until cancelled: a day of device time.
	hangSteps = `[{"stepId":"ai-step-001","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"86400000"}}}]`
)

// simPhone is one simulated phone and the host's Device on it.
type simPhone struct {
	t   *testing.T
	dev *sim.Device
	d   *device.Device
}

// newSimPhone starts a simulated phone at a high time scale and opens a
// session on it; opts adjust the simulator first.
func newSimPhone(t *testing.T, opts ...func(*sim.Options)) *simPhone {
	t.Helper()
	o := sim.Options{Serial: "sim-replay", TimeScale: 100}
	for _, fn := range opts {
		fn(&o)
	}
	dev := sim.New(o)
	t.Cleanup(func() { dev.Close() })
	s, err := device.OpenSession(context.Background(), dev, device.SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("open session on the simulator: %v", err)
	}
	t.Cleanup(s.Close)
	return &simPhone{t: t, dev: dev, d: s.Device}
}

// caseOf is a normalized case named name with the given steps.
func caseOf(t *testing.T, name, steps string) *casefile.Case {
	t.Helper()
	b, _ := json.Marshal(name)
	c, err := casefile.Parse([]byte(`{"caseName":` + string(b) + `,"targetAppPackage":"com.example.counter","operationLog":{"steps":` + steps + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// addCase imports a case through the host's import (the device stores it
// as it stores any import).
func (p *simPhone) addCase(name, steps string) {
	p.t.Helper()
	if _, err := ImportCase(context.Background(), p.d, caseOf(p.t, name, steps), ImportOptions{Timeout: 10 * time.Second, PollInterval: 10 * time.Millisecond}); err != nil {
		p.t.Fatalf("import %s: %v", name, err)
	}
}

// mutations counts the mutations the device received whose URI contains
// every part.
func (p *simPhone) mutations(parts ...string) int { return len(p.dev.MutationsWith(parts...)) }

// autoStart is the device's KEY_REPLAY_AUTO_START.
func (p *simPhone) autoStart() bool {
	var v bool
	p.dev.App.Locked(func() { v = p.dev.App.BoolSetting(core.KeyReplayAutoStart) })
	return v
}

// status is the replay status the device publishes now.
func (p *simPhone) status() *replayStatus {
	p.t.Helper()
	st, err := FetchReplayStatus(context.Background(), p.d)
	if err != nil {
		p.t.Fatalf("replay status: %v", err)
	}
	return st
}

// runAnswer is the run a harness status answer shows.
type runAnswer struct {
	RunID, RequestID, CaseName, State string
}

// onStatus calls fn with every harness status answer the device gives
// (before the host reads it) and the number of answers so far that showed
// that same run in that same state; fn may change the device.
func (p *simPhone) onStatus(fn func(r runAnswer, n int)) {
	var mu sync.Mutex
	seen := map[runAnswer]int{}
	stop := p.dev.OnAnswer(func(a sim.Answer) {
		if a.Action != "harness" || a.Query.Get("type") != "status" {
			return
		}
		var r runAnswer
		if json.Unmarshal(a.Body, &r) != nil {
			return
		}
		mu.Lock()
		seen[r]++
		n := seen[r]
		mu.Unlock()
		fn(r, n)
	})
	p.t.Cleanup(stop)
}

// cancelAsOperator sends the cancel of runID as another client with the
// runId would.
func (p *simPhone) cancelAsOperator(runID string) {
	go func() {
		_ = p.d.Mutate(context.Background(), "harness", device.P("type", "cancel", "runId", runID))
	}()
}
