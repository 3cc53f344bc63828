package agentdevice

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/protocol"
)

// FuzzNodeMapJSON: any observation object the device may send either maps
// a tap, a swipe and a Type onto typed actions the protocol accepts or is
// refused with an error; it never panics.
func FuzzNodeMapJSON(f *testing.F) {
	f.Add([]byte(`{"observationId":"o","page":{"nodeId":"n0","className":"F","nodeBound":{"left":0,"top":0,"right":1080,"bottom":2340},"children":[{"nodeId":"n1","className":"android.widget.EditText","nodeBound":{"left":100,"top":100,"right":900,"bottom":300}}]}}`), 500, 200)
	f.Add([]byte(`{"page":{"nodeBound":{"left":5,"top":5,"right":1,"bottom":1},"children":[null,{}]}}`), 0, 0)
	f.Add([]byte(`{"page":{"nodeId":"x","visible":false,"nodeBound":{"left":0,"top":0,"right":10,"bottom":10}}}`), 5, 5)
	f.Fuzz(func(t *testing.T, data []byte, x, y int) {
		var obs map[string]any
		if json.Unmarshal(data, &obs) != nil {
			return
		}
		pt := &coord.MappedPoint{Device: [2]int{x, y}}
		var m NodeMapper
		for _, cmd := range []agentloop.Command{
			{Action: action.Tap, Point: pt}, {Action: action.Swipe, Start: pt, End: &coord.MappedPoint{Device: [2]int{x, y - 500}}}, {Action: action.Type, Text: "hi"},
		} {
			ta, err := m.MapJSON(cmd, obs)
			if err == nil && protocol.ValidateAction(ta.Action, ta.Args) != "" {
				t.Fatalf("%s mapped to an invalid %s %+v", cmd.Action, ta.Action, ta.Args)
			}
		}
	})
}
