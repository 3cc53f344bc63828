package execution

import (
	"errors"
	"image"
	"reflect"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/agentdevice"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

// translationScreen has a scrolling list with one item, a text field and
// a button outside the list.
func translationScreen() map[string]any {
	list := node("list", "androidx.recyclerview.widget.RecyclerView", "list", "", image.Rect(0, 300, 1080, 1800))
	list["children"] = []any{node("item", "android.widget.Button", "item", "Item", image.Rect(100, 400, 980, 600))}
	return map[string]any{"observationId": "obs-9", "page": map[string]any{
		"nodeId": "root", "className": "android.widget.FrameLayout", "nodeBound": rect(image.Rect(0, 0, 1080, 2340)), "children": []any{
			list,
			node("field", "android.widget.EditText", "field", "", image.Rect(100, 1900, 980, 2050)),
			node("ok", "android.widget.Button", "ok", "OK", image.Rect(100, 2100, 980, 2250)),
		}}}
}

func at(x, y int) *coord.MappedPoint { return &coord.MappedPoint{Device: [2]int{x, y}} }

// The planner's commands become decision actions the engine accepts as
// they are: the point hit-tested to a nodeId, Swipe as scroll (finger up
// is scroll down), Type into the only text field.
func TestVisionActionTranslation(t *testing.T) {
	t.Parallel()
	obs := translationScreen()
	cases := []struct {
		name    string
		cmd     agentloop.Command
		allowed []string
		want    map[string]any
		code    string
	}{
		{"tap", agentloop.Command{Action: action.Tap, Point: at(500, 500)}, nil,
			map[string]any{"type": verify.ActionClick, "nodeId": "item"}, ""},
		{"long press", agentloop.Command{Action: action.LongPress, Point: at(500, 2150)}, nil,
			map[string]any{"type": verify.ActionLongClick, "nodeId": "ok", "durationMs": int64(800)}, ""},
		{"type", agentloop.Command{Action: action.Type, Text: "hello"}, nil,
			map[string]any{"type": verify.ActionInput, "nodeId": "field", "text": "hello"}, ""},
		{"swipe up", agentloop.Command{Action: action.Swipe, Start: at(540, 1500), End: at(540, 750)}, nil,
			map[string]any{"type": verify.ActionScroll, "nodeId": "list", "direction": "down", "distance": int64(50)}, ""},
		{"back", agentloop.Command{Action: action.Back}, nil, map[string]any{"type": verify.ActionBack}, ""},
		{"home", agentloop.Command{Action: action.Home}, nil, map[string]any{"type": verify.ActionHome}, ""},
		{"wait", agentloop.Command{Action: action.Wait, Duration: 2 * time.Second}, nil,
			map[string]any{"type": verify.ActionWait, "durationMs": int64(2000)}, ""},
		{"double tap", agentloop.Command{Action: action.DoubleTap, Point: at(500, 500)}, nil, nil, fault.CodeUnsupportedAction},
		{"long wait", agentloop.Command{Action: action.Wait, Duration: 8 * time.Second}, nil, nil, fault.CodeUnsupportedAction},
		{"tap where only waiting is allowed", agentloop.Command{Action: action.Tap, Point: at(500, 500)}, []string{verify.ActionWait}, nil, fault.CodeActionNotAllowed},
		{"tap where clicking is allowed", agentloop.Command{Action: action.Tap, Point: at(500, 500)}, []string{verify.ActionClick},
			map[string]any{"type": verify.ActionClick, "nodeId": "item"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := agentdevice.NodeMapper{Allowed: c.allowed}
			ta, err := m.MapJSON(c.cmd, obs)
			if c.code != "" {
				var nm *agentloop.NotMappableError
				if !errors.As(err, &nm) || nm.Code != c.code || nm.Note == "" {
					t.Fatalf("got %+v, %v; want a %s refusal with a note", ta, err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := decisionAction(ta.DeviceAction())
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("decision action %v, want %v", got, c.want)
			}
			// The engine takes it as it is.
			id, err := targetNode(got, obs)
			if err != nil {
				t.Fatal(err)
			}
			req, err := actRequest(got, id)
			if err != nil || req.Action != c.want["type"] || req.NodeID != asText(c.want["nodeId"]) {
				t.Fatalf("act request %+v, %v", req, err)
			}
		})
	}
}

func asText(v any) string {
	s, _ := v.(string)
	return s
}
