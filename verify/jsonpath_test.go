package verify

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// Every input error of a requirement says where it is (jsonPath) and, for
// a closed set, which values are allowed.
func TestRequirementErrorsNameTheirPlace(t *testing.T) {
	t.Parallel()
	const base = `{"id":"r1","title":"t","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "reusableFlows":[{"id":"f","steps":[STEPF]}],
 "scenarios":[{"id":"s1","acceptanceCriteria":["AC-001"],"steps":[STEP,{"use":"f"}],
 "checkpoints":[{"id":"c1","afterStep":"w1","oracle":ORACLE}],
 "cleanup":[CLEANUP]}]}`
	const okStep = `{"id":"w1","action":{"type":"click","selector":{"text":"x"}}}`
	const okFlowStep = `{"id":"w2","action":{"type":"back"}}`
	const okOracle = `{"type":"ui","selector":{"text":"x"},"expected":"1"}`
	const okCleanup = `{"id":"k1","action":{"type":"home"}}`
	doc := func(step, flowStep, oracle, cleanup string) string {
		r := strings.NewReplacer("STEPF", flowStep, "STEP", step, "ORACLE", oracle, "CLEANUP", cleanup)
		return r.Replace(base)
	}
	cases := []struct {
		name, req, code, path string
		allowed               []string
	}{
		{"unknown action", doc(`{"id":"w1","action":{"type":"tap"}}`, okFlowStep, okOracle, okCleanup),
			fault.CodeUnsupportedAction, "$.scenarios[0].steps[0].action.type", TypedActions},
		{"step type", doc(`{"id":"w1","type":"wander"}`, okFlowStep, okOracle, okCleanup),
			fault.CodeInvalidStep, "$.scenarios[0].steps[0].type", []string{"operation", "explore"}},
		{"scroll direction", doc(`{"id":"w1","action":{"type":"scroll","direction":"sideways"}}`, okFlowStep, okOracle, okCleanup),
			fault.CodeInvalidAction, "$.scenarios[0].steps[0].action.direction", []string{"up", "down", "left", "right"}},
		{"selector", doc(`{"id":"w1","action":{"type":"click","selector":{"colour":"red"}}}`, okFlowStep, okOracle, okCleanup),
			fault.CodeInvalidSelector, "$.scenarios[0].steps[0].action.selector", nil},
		{"explore allowed actions", doc(`{"id":"w1","type":"explore","goal":"g","allowedActions":["click","swipe"]}`, okFlowStep, okOracle, okCleanup),
			fault.CodeUnsupportedAction, "$.scenarios[0].steps[0].allowedActions", TypedActions},
		{"a flow's step is where the flow declares it", doc(okStep, `{"id":"w2","action":{"type":"fling"}}`, okOracle, okCleanup),
			fault.CodeUnsupportedAction, "$.reusableFlows[0].steps[0].action.type", TypedActions},
		{"oracle operator", doc(okStep, okFlowStep, `{"type":"ui","selector":{"text":"x"},"operator":"is","expected":"1"}`, okCleanup),
			fault.CodeInvalidOracle, "$.scenarios[0].checkpoints[0].oracle.operator", []string{"equals", "contains", "matches"}},
		{"oracle field", doc(okStep, okFlowStep, `{"type":"ui","selector":{"text":"x"},"field":"colour","expected":"1"}`, okCleanup),
			fault.CodeInvalidOracle, "$.scenarios[0].checkpoints[0].oracle.field", []string{"text", "description"}},
		{"oracle type", doc(okStep, okFlowStep, `{"type":"sound"}`, okCleanup),
			fault.CodeUnsupportedOracle, "$.scenarios[0].checkpoints[0].oracle.type", []string{"ui", "vision"}},
		{"a cleanup oracle cannot be vision", doc(okStep, okFlowStep, okOracle, `{"id":"k1","oracle":{"type":"vision","assertion":"a"}}`),
			fault.CodeUnsupportedOracle, "$.scenarios[0].cleanup[0].oracle.type", []string{"ui"}},
		{"bad regular expression", doc(okStep, okFlowStep, `{"type":"ui","selector":{"text":"x"},"operator":"matches","expected":"("}`, okCleanup),
			fault.CodeInvalidOracle, "$.scenarios[0].checkpoints[0].oracle.expected", nil},
		{"unknown step", strings.Replace(doc(okStep, okFlowStep, okOracle, okCleanup), `"afterStep":"w1"`, `"afterStep":"nope"`, 1),
			fault.CodeUnknownStep, "$.scenarios[0].checkpoints[0].afterStep", nil},
		{"scenario id", strings.Replace(doc(okStep, okFlowStep, okOracle, okCleanup), `"id":"s1"`, `"id":"bad id!"`, 1),
			fault.CodeInvalidID, "$.scenarios[0].id", nil},
		{"requirement title", strings.Replace(doc(okStep, okFlowStep, okOracle, okCleanup), `"title":"t"`, `"title":" "`, 1),
			fault.CodeInvalidContract, "$.title", nil},
		{"unknown flow", strings.Replace(doc(okStep, okFlowStep, okOracle, okCleanup), `{"use":"f"}`, `{"use":"g"}`, 1),
			fault.CodeUnknownFlow, "$.scenarios[0].steps[1].use", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, err := ParseRequirement([]byte(c.req))
			if err == nil {
				_, err = Compile(d)
			}
			fe := fault.From(err)
			if err == nil || fe.Code != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			if got := fe.Details["jsonPath"]; got != c.path {
				t.Errorf("jsonPath %v, want %s", got, c.path)
			}
			got, _ := fe.Details["allowed"].([]string)
			if !slices.Equal(got, c.allowed) {
				t.Errorf("allowed %v, want %v", got, c.allowed)
			}
			if _, err := json.Marshal(fe.Fields()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
