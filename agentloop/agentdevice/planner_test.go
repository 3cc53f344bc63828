package agentdevice

import (
	"context"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// +1 is at (760,1205) on 1080×2340: 0..999 → (703,515).
const tapPlus = `do(action="Tap", element=[703,515], reason="tap +1")`

// plannerModel answers plans in order (the last one repeats) and
// completion reviews with review (a confirmation when empty), without any
// HTTP.
type plannerModel struct {
	plans  []string
	review string
	n      int
}

func (m *plannerModel) Chat(_ context.Context, req chat.Request) (*chat.Response, error) {
	if strings.HasPrefix(req.Messages[0].Text, agentloop.HeaderCompletion) {
		if m.review == "" {
			return &chat.Response{Content: `finish(success=True, message="ok")`}, nil
		}
		return &chat.Response{Content: m.review}, nil
	}
	i := min(m.n, len(m.plans)-1)
	m.n++
	return &chat.Response{Content: m.plans[i]}, nil
}

// TestPlannerProposalKinds: Take_over and finish(False) become blocked
// proposals; Double Tap is answered with a protocol note and a replan on
// the same observation; finish(True) needs the isolated review; an act is
// hit-tested to the observation's node.
func TestPlannerProposalKinds(t *testing.T) {
	t.Parallel()
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
		{"take over", []string{`do(action="Take_over", message="log in please")`}, "", agentloop.ProposeBlocked, ""},
		{"interact", []string{`do(action="Interact", message="which one?")`}, "", agentloop.ProposeBlocked, ""},
		{"give up", []string{`finish(success=False, message="impossible")`}, "", agentloop.ProposeBlocked, ""},
		{"double tap then tap", []string{`do(action="Double Tap", element=[703,515])`, tapPlus}, "", agentloop.ProposeAct, "click"},
		{"note then tap", []string{`do(action="Note", message="counter at 0")`, tapPlus}, "", agentloop.ProposeAct, "click"},
		{"only unsupported actions", []string{`do(action="Double Tap", element=[703,515])`}, "", agentloop.ProposeBlocked, ""},
		{"done confirmed", []string{`finish(success=True, message="done")`}, "", agentloop.ProposeDone, ""},
		{"false finish", []string{`finish(success=True, message="done")`, tapPlus}, `finish(success=False, message="counter is 0")`, agentloop.ProposeAct, "click"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &plannerModel{plans: tt.plans, review: tt.review}
			pl, err := agentloop.NewPlanner(m, Capabilities{}, agentloop.Config{Space: coord.SpaceRelative}, agentloop.Task{Goal: "increase the counter to 1", MaxSteps: 10}, nil)
			if err != nil {
				t.Fatal(err)
			}
			screen, err := pageScreens(context.Background(), obs)
			if err != nil {
				t.Fatal(err)
			}
			var nodes NodeMapper
			prop, err := pl.Propose(context.Background(), screen, nil, func(cmd agentloop.Command) (agentloop.DeviceAction, error) {
				ta, err := nodes.Map(cmd, obs)
				return ta.DeviceAction(), err
			})
			if err != nil {
				t.Fatal(err)
			}
			if prop.Kind != tt.kind || prop.Reason == "" {
				t.Fatalf("proposal %+v", prop)
			}
			if prop.Kind == agentloop.ProposeAct && (prop.DeviceAction.Action != tt.action || prop.DeviceAction.Args["nodeId"] != "node-2") {
				t.Fatalf("typed action %+v", prop.DeviceAction)
			}
		})
	}
}
