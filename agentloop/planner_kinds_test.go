package agentloop

import (
	"context"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// TestPlannerProposalKinds: Take_over and finish(False) become blocked
// proposals; Double Tap is answered with a protocol note and a replan on
// the same observation; finish(True) needs the isolated review; an act is
// hit-tested to the observation's node.
func TestPlannerProposalKinds(t *testing.T) {
	page := node("node-1", "android.widget.FrameLayout", "", 0, 0, 1080, 2340,
		node("node-2", "android.widget.Button", "+1", 560, 1120, 960, 1290))
	obs := &agent.Observation{ObservationID: "observation-1", Page: page}
	tests := []struct {
		name   string
		plans  []string
		review string
		kind   string
		action string
	}{
		{"take over", []string{`do(action="Take_over", message="log in please")`}, "", ProposeBlocked, ""},
		{"interact", []string{`do(action="Interact", message="which one?")`}, "", ProposeBlocked, ""},
		{"give up", []string{`finish(success=False, message="impossible")`}, "", ProposeBlocked, ""},
		{"double tap then tap", []string{`do(action="Double Tap", element=[703,515])`, tapPlus}, "", ProposeAct, "click"},
		{"note then tap", []string{`do(action="Note", message="counter at 0")`, tapPlus}, "", ProposeAct, "click"},
		{"only unsupported actions", []string{`do(action="Double Tap", element=[703,515])`}, "", ProposeBlocked, ""},
		{"done confirmed", []string{`finish(success=True, message="done")`}, "", ProposeDone, ""},
		{"false finish", []string{`finish(success=True, message="done")`, tapPlus}, `finish(success=False, message="counter is 0")`, ProposeAct, "click"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &scriptModel{plans: tt.plans, review: tt.review}
			pl, err := NewPlanner(m, Config{Space: coord.SpaceRelative}, Task{Goal: "increase the counter to 1", MaxSteps: 10}, nil)
			if err != nil {
				t.Fatal(err)
			}
			screen, err := pageScreens(context.Background(), obs)
			if err != nil {
				t.Fatal(err)
			}
			var nodes NodeMapper
			prop, err := pl.Propose(context.Background(), screen, nil, func(cmd Command) (TypedAction, error) { return nodes.Map(cmd, obs) })
			if err != nil {
				t.Fatal(err)
			}
			if prop.Kind != tt.kind || prop.Reason == "" {
				t.Fatalf("proposal %+v", prop)
			}
			if prop.Kind == ProposeAct && (prop.Typed.Action != tt.action || prop.Typed.Args.NodeID == nil || *prop.Typed.Args.NodeID != "node-2") {
				t.Fatalf("typed action %+v", prop.Typed)
			}
		})
	}
}
