package execution

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

const incrementSelector = `{"resourceId":"com.example.counter:id/increment_button"}`

// The decision loop's rules, on the matrix's hybrid scenario (its explore
// step allows click and wait, at most 3 steps).
func TestDynamicSegmentRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		decisions string
		phone     func(*counterPhone)
		state     string
		reason    string
		finish    string // "end", "cancel" or "" (no session)
	}{
		{"act then done", `[{"type":"act","action":{"type":"click","selector":` + incrementSelector + `}},{"type":"done"}]`, nil, verify.StateDone, "", "end"},
		{"explicit nodeId", `[{"type":"act","action":{"type":"click","nodeId":"n4"}},{"type":"done"}]`, nil, verify.StateDone, "", "end"},
		{"decisions run out", `[{"type":"act","action":{"type":"wait","durationMs":100}}]`, nil, verify.NotTested, verify.ReasonCheckpointNotReached, "cancel"},
		{"blocked after acting", `[{"type":"act","action":{"type":"wait","durationMs":100}},{"type":"blocked","reason":"stuck"}]`, nil, verify.NotTested, verify.ReasonCheckpointNotReached, "cancel"},
		{"action not allowed", `[{"type":"act","action":{"type":"back"}}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"unknown decision key", `[{"type":"done","why":"x"}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"unknown action key", `[{"type":"act","action":{"type":"click","nodeId":"n4","force":true}}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"nodeId and selector", `[{"type":"act","action":{"type":"click","nodeId":"n4","selector":` + incrementSelector + `}}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"ambiguous selector", `[{"type":"act","action":{"type":"click","selector":{"packageName":"com.example.counter"}}}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"missing node", `[{"type":"act","action":{"type":"click","nodeId":"n99"}}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"bad decision type", `[{"type":"act"},{"type":"done"}]`, nil, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"step rejected", `[{"type":"act","action":{"type":"click","nodeId":"n1"}}]`, nil, verify.NotTested, verify.ReasonAgentActionFailed, "cancel"},
		{"act transport error", `[{"type":"act","action":{"type":"click","nodeId":"n4"}}]`, func(p *counterPhone) {
			p.onAct = func(context.Context, ActRequest) error {
				return fault.New(fault.Transport, "http_error", "the device did not answer")
			}
		}, verify.NotTested, verify.ReasonAgentExecutionFailed, "cancel"},
		{"cleanup fails", `[{"type":"done"}]`, func(p *counterPhone) { p.failFinish = true }, verify.NotTested, verify.ReasonAgentCleanupFailed, ""},
		{"blocked first touches nothing", `[{"type":"blocked","reason":"no way"}]`, nil, verify.NotTested, verify.ReasonCheckpointNotReached, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plan := compileFixture(t, "counter-outcome-matrix")
			rememberCases(plan)
			d, err := parseDecisions([]byte(`{"hybrid-success":{"explore-increment":`+c.decisions+`}}`), plan)
			if err != nil {
				t.Fatal(err)
			}
			phone := &counterPhone{}
			if c.phone != nil {
				c.phone(phone)
			}
			out, err := (&Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Decisions: d}).Run(context.Background(), plan, filepath.Join(t.TempDir(), "run"))
			if err != nil {
				t.Fatal(err)
			}
			seg := out.Report.Scenarios[0].Segments[1]
			if seg.State != c.state || seg.Reason != c.reason {
				t.Errorf("segment %s/%q, want %s/%q", seg.State, seg.Reason, c.state, c.reason)
			}
			ended, cancelled := slices.Contains(phone.calls, "end session-1"), slices.Contains(phone.calls, "cancel session-1")
			switch c.finish {
			case "end":
				if !ended || cancelled {
					t.Errorf("session not ended: %v", phone.calls)
				}
			case "cancel":
				if !cancelled || ended {
					t.Errorf("session not cancelled: %v", phone.calls)
				}
			default:
				if c.name == "blocked first touches nothing" && phone.sessions != 0 {
					t.Errorf("a session was started: %v", phone.calls)
				}
			}
		})
	}
}

var errFinish = errors.New("the device did not confirm")

// The deterministic segment's rules, on counter-success (a test segment
// and a cleanup segment).
func TestFixedSegmentRules(t *testing.T) {
	t.Parallel()
	refused := func(c *verify.Case) (ImportResult, error) {
		return ImportResult{Receipt: map[string]any{"success": false, "errorCode": "invalid_case"}}, fault.New(fault.Failed, "invalid_case", "refused")
	}
	cases := []struct {
		name          string
		phone         func(*counterPhone)
		test, cleanup string // segment states
		reason        string // test segment reason
		scenario      string
	}{
		// A cleanup that could not run did not fail (solopi-ai fails
		// the scenario): every case here is not_tested.
		{"import refused", func(p *counterPhone) { p.onImport = refused }, verify.NotTested, verify.NotTested, verify.ReasonCaseImportFailed, verify.NotTested},
		{"import transport error", func(p *counterPhone) {
			p.onImport = func(*verify.Case) (ImportResult, error) {
				return ImportResult{}, fault.New(fault.Transport, "adb_failed", "adb failed")
			}
		}, verify.NotTested, verify.NotTested, verify.ReasonAdapterError, verify.NotTested},
		{"replay not terminal", func(p *counterPhone) {
			p.onRun = func(context.Context, RunRequest) error {
				return fault.New(fault.Failed, "run_cancelled", "cancelled on the phone")
			}
		}, verify.NotTested, verify.NotTested, verify.ReasonReplayNotTerminal, verify.NotTested},
		{"replay transport error", func(p *counterPhone) {
			p.onRun = func(context.Context, RunRequest) error {
				return fault.New(fault.Timeout, "run_timeout", "no terminal state")
			}
		}, verify.NotTested, verify.NotTested, verify.ReasonReplayTransport, verify.NotTested},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			phone := &counterPhone{}
			c.phone(phone)
			out := runFixture(t, "counter-success", false, phone)
			s := out.Report.Scenarios[0]
			if s.Segments[0].State != c.test || s.Segments[0].Reason != c.reason || s.Segments[1].State != c.cleanup || s.Status != c.scenario {
				t.Errorf("test %s/%s cleanup %s scenario %s", s.Segments[0].State, s.Segments[0].Reason, s.Segments[1].State, s.Status)
			}
		})
	}
}
