package agentdevice

import (
	"math"
	"strings"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// Capabilities is what protocol 1.0 can express, with no session behind
// it: the Device's own capabilities, and the agentloop.Target of a
// Planner that proposes for an Agent session someone else drives.
type Capabilities struct{}

// Mode is "solopi".
func (Capabilities) Mode() string { return agentloop.ModeSoloPi }

// Supports lists what protocol 1.0 can express.
func (Capabilities) Supports(name string) (bool, string) {
	switch name {
	case action.Tap, action.LongPress, action.Swipe, action.Type, action.Back, action.Home, action.Wait:
		return true, ""
	case action.DoubleTap:
		return false, "this device has no Double Tap; use Tap or another action"
	}
	return false, name + " is not a device action"
}

// nodeRef remembers a text field across observations: nodeIds are only
// valid inside one observation, so the field is found again by its class,
// resource id and bounds.
type nodeRef struct {
	ClassName  string
	ResourceID string
	Bounds     agent.Rect
}

func refOf(n *agent.UINode) *nodeRef {
	if n == nil || n.Bounds == nil {
		return nil
	}
	return &nodeRef{ClassName: n.ClassName, ResourceID: n.ResourceID, Bounds: *n.Bounds}
}

func visibleNode(n *agent.UINode) bool {
	if n == nil || n.Bounds == nil || n.NodeID == "" {
		return false
	}
	if n.Visible != nil && !*n.Visible {
		return false
	}
	return n.Bounds.Right > n.Bounds.Left && n.Bounds.Bottom > n.Bounds.Top
}

// hitTest returns the smallest visible node of page containing the device
// point (x, y); among equal areas the later node in pre-order (the one
// drawn on top) wins. The tree never leaves the host: the model only ever
// gave a point.
func hitTest(page *agent.UINode, x, y int) *agent.UINode {
	var best *agent.UINode
	bestArea := math.MaxInt
	page.Walk(func(n *agent.UINode) bool {
		if visibleNode(n) && n.Bounds.Contains(x, y) {
			a := (n.Bounds.Right - n.Bounds.Left) * (n.Bounds.Bottom - n.Bounds.Top)
			if a <= bestArea {
				best, bestArea = n, a
			}
		}
		return true
	})
	return best
}

func isTextField(n *agent.UINode) bool {
	c := n.ClassName
	return strings.HasSuffix(c, "EditText") || strings.HasSuffix(c, "AutoCompleteTextView") || strings.HasSuffix(c, "SearchView")
}

func isScrollContainer(n *agent.UINode) bool {
	c := n.ClassName
	for _, k := range []string{"ScrollView", "RecyclerView", "ListView", "GridView", "ViewPager", "NestedScroll"} {
		if strings.Contains(c, k) {
			return true
		}
	}
	return false
}

// findRef locates a remembered node in another observation.
func findRef(page *agent.UINode, r *nodeRef) *agent.UINode {
	if r == nil {
		return nil
	}
	var exact, byID []*agent.UINode
	page.Walk(func(n *agent.UINode) bool {
		if !visibleNode(n) || n.ClassName != r.ClassName {
			return true
		}
		if *n.Bounds == r.Bounds && n.ResourceID == r.ResourceID {
			exact = append(exact, n)
		} else if r.ResourceID != "" && n.ResourceID == r.ResourceID {
			byID = append(byID, n)
		}
		return true
	})
	switch {
	case len(exact) == 1:
		return exact[0]
	case len(exact) == 0 && len(byID) == 1:
		return byID[0]
	}
	return nil
}

// ancestorsAt returns the visible nodes containing (x, y), outermost first.
func ancestorsAt(page *agent.UINode, x, y int) []*agent.UINode {
	var out []*agent.UINode
	var walk func(n *agent.UINode) bool
	walk = func(n *agent.UINode) bool {
		if n == nil {
			return false
		}
		in := visibleNode(n) && n.Bounds.Contains(x, y)
		if in {
			out = append(out, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
		return in
	}
	walk(page)
	return out
}

// typedAction is a model action mapped onto the SoloPi Agent protocol.
type typedAction struct {
	Action string
	Args   protocol.ActionArgs
	// Tapped is the node a click targeted (remembered as the Type target
	// when it is a text field).
	Tapped *agent.UINode
}

// DeviceAction is the typed action as a Planner's proposal carries it.
func (t typedAction) DeviceAction() agentloop.DeviceAction {
	return agentloop.DeviceAction{Action: t.Action, Args: typedArgs(t.Args)}
}

// typedArgs renders typed arguments for the audit trail. The nodeId is a
// device detail: it goes to the trajectory, never to the model.
func typedArgs(a protocol.ActionArgs) map[string]any {
	m := map[string]any{}
	if a.NodeID != nil {
		m["nodeId"] = *a.NodeID
	}
	if a.Text != nil {
		m["text"] = *a.Text
	}
	if a.Direction != nil {
		m["direction"] = *a.Direction
	}
	if a.DurationMs != nil {
		m["durationMs"] = *a.DurationMs
	}
	if a.Distance != nil {
		m["distance"] = *a.Distance
	}
	return m
}

// mapToTyped maps a command onto the typed actions of protocol 1.0 on the
// observation the command was checked against. Taps become clicks on the
// hit-tested node; Type goes to the text field last tapped, else the only
// one on screen; Swipe becomes scroll; actions the device lacks come back
// as a *NotMappableError whose note is shown to the model.
func mapToTyped(cmd agentloop.Command, obs *agent.Observation, lastField *nodeRef) (typedAction, error) {
	var ta typedAction
	if obs == nil || obs.Page == nil {
		return ta, &agentloop.NotMappableError{Code: fault.CodeNoNodeAtPoint, Note: "the current observation has no controllable page"}
	}
	str := func(s string) *string { return &s }
	i64 := func(v int64) *int64 { return &v }
	switch cmd.Action {
	case action.Tap, action.LongPress:
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		n := hitTest(obs.Page, x, y)
		if n == nil {
			return ta, &agentloop.NotMappableError{Code: fault.CodeNoNodeAtPoint, Note: "nothing on the screen is at that point; tap a visible control"}
		}
		ta.Action, ta.Args.NodeID, ta.Tapped = protocol.ActClick, str(n.NodeID), n
		if cmd.Action == action.LongPress {
			ta.Action = protocol.ActLongClick
			ta.Args.DurationMs = i64(agentloop.LongPressDuration.Milliseconds())
		}
	case action.DoubleTap:
		return ta, &agentloop.NotMappableError{Code: fault.CodeUnsupportedAction, Note: "this device has no Double Tap; use Tap (twice in two steps if a double tap is really needed) or another action"}
	case action.Type:
		var target *agent.UINode
		if f := findRef(obs.Page, lastField); f != nil && isTextField(f) {
			target = f
		} else {
			var fields []*agent.UINode
			obs.Page.Walk(func(n *agent.UINode) bool {
				if visibleNode(n) && isTextField(n) {
					fields = append(fields, n)
				}
				return true
			})
			if len(fields) == 1 {
				target = fields[0]
			}
		}
		if target == nil {
			return ta, &agentloop.NotMappableError{Code: fault.CodeNoTextField, Note: "there is no single text field to type into; tap the text field first"}
		}
		ta.Action, ta.Args.NodeID, ta.Args.Text = protocol.ActInput, str(target.NodeID), str(cmd.Text)
	case action.Swipe:
		dir, node, dist := scrollOf(obs.Page, cmd)
		ta.Action, ta.Args.Direction, ta.Args.Distance = protocol.ActScroll, str(dir), i64(dist)
		if node != nil {
			ta.Args.NodeID = str(node.NodeID)
		}
	case action.Back:
		ta.Action = protocol.ActBack
	case action.Home:
		ta.Action = protocol.ActHome
	case action.Wait:
		ms := cmd.Duration.Milliseconds()
		if ms > 5000 {
			return ta, &agentloop.NotMappableError{Code: fault.CodeUnsupportedAction, Note: "Wait is at most 5 seconds on this device; wait in several steps"}
		}
		ta.Action, ta.Args.DurationMs = protocol.ActWait, i64(max(ms, 100))
	default:
		return ta, &agentloop.NotMappableError{Code: fault.CodeUnsupportedAction, Note: cmd.Action + " is not a device action"}
	}
	if msg := protocol.ValidateAction(ta.Action, ta.Args); msg != "" {
		return ta, &agentloop.NotMappableError{Code: fault.CodeUnsupportedAction, Note: "the device would refuse this action: " + msg}
	}
	return ta, nil
}

// scrollOf maps a finger swipe to a SoloPi scroll. The SoloPi direction
// names where the viewport travels: SCROLL_TO_BOTTOM ("down") is a
// finger-up drag on the device and in the simulator, so the content moves
// up and later content comes into view. A finger swipe up therefore
// becomes scroll down, right becomes left, and so on: the same physical
// gesture. The distance is the drag length as a percentage of the
// container (1..90, the device's range).
func scrollOf(page *agent.UINode, cmd agentloop.Command) (string, *agent.UINode, int64) {
	x1, y1 := cmd.Start.Device[0], cmd.Start.Device[1]
	x2, y2 := cmd.End.Device[0], cmd.End.Device[1]
	dx, dy := x2-x1, y2-y1
	vertical := abs(dy) > abs(dx)
	var dir string
	switch {
	case vertical && dy < 0:
		dir = "down"
	case vertical:
		dir = "up"
	case dx < 0:
		dir = "right"
	default:
		dir = "left"
	}
	var container *agent.UINode
	anc := ancestorsAt(page, x1, y1)
	for i := len(anc) - 1; i >= 0; i-- {
		if isScrollContainer(anc[i]) {
			container = anc[i]
			break
		}
	}
	extent := 0
	drag := abs(dx)
	if vertical {
		drag = abs(dy)
	}
	if container != nil {
		extent = container.Bounds.Right - container.Bounds.Left
		if vertical {
			extent = container.Bounds.Bottom - container.Bounds.Top
		}
	} else if page != nil && page.Bounds != nil {
		extent = page.Bounds.Right - page.Bounds.Left
		if vertical {
			extent = page.Bounds.Bottom - page.Bounds.Top
		}
	}
	dist := int64(50)
	if extent > 0 {
		dist = int64(math.Round(100 * float64(drag) / float64(extent)))
	}
	return dir, container, min(max(dist, 1), 90)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
