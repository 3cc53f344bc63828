package agentdevice

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

func mp(x, y int) *coord.MappedPoint { return &coord.MappedPoint{Device: [2]int{x, y}} }

func node(id, class, text string, l, t, r, b int, kids ...*agent.UINode) *agent.UINode {
	return &agent.UINode{NodeID: id, ClassName: class, Text: text, Bounds: &agent.Rect{Left: l, Top: t, Right: r, Bottom: b}, Children: kids}
}

func TestHitTestAndTypedMapping(t *testing.T) {
	t.Parallel()
	page := node("node-1", "android.widget.FrameLayout", "", 0, 0, 1080, 2340,
		node("node-2", "android.widget.LinearLayout", "", 0, 300, 1080, 1500,
			node("node-3", "android.widget.EditText", "", 100, 400, 980, 500),
			node("node-4", "android.widget.Button", "Sign in", 100, 800, 980, 920)),
		node("node-5", "androidx.recyclerview.widget.RecyclerView", "", 0, 1500, 1080, 2300,
			node("node-6", "android.widget.TextView", "row", 0, 1500, 1080, 1700)))
	obs := &agent.Observation{ObservationID: "observation-1", Page: page}
	tap := func(x, y int) agentloop.Command { return agentloop.Command{Action: action.Tap, Point: mp(x, y)} }
	if n := hitTest(page, 500, 850); n == nil || n.NodeID != "node-4" {
		t.Fatalf("hit %v", n)
	}
	if n := hitTest(page, 50, 350); n == nil || n.NodeID != "node-2" {
		t.Fatalf("container hit %v", n)
	}
	ta, err := mapToTyped(tap(500, 850), obs, nil)
	if err != nil || ta.Action != protocol.ActClick || *ta.Args.NodeID != "node-4" {
		t.Fatalf("%+v %v", ta, err)
	}
	// Type goes to the only text field; after tapping one, to that one.
	ta, err = mapToTyped(agentloop.Command{Action: action.Type, Text: "alice"}, obs, nil)
	if err != nil || ta.Action != protocol.ActInput || *ta.Args.NodeID != "node-3" || *ta.Args.Text != "alice" {
		t.Fatalf("type %+v %v", ta, err)
	}
	// Long press keeps the node and a duration.
	ta, err = mapToTyped(agentloop.Command{Action: action.LongPress, Point: mp(500, 450)}, obs, nil)
	if err != nil || ta.Action != protocol.ActLongClick || *ta.Args.NodeID != "node-3" || *ta.Args.DurationMs != 800 {
		t.Fatalf("long press %+v %v", ta, err)
	}
	// A finger-up swipe in the list is the same gesture as scroll down.
	ta, err = mapToTyped(agentloop.Command{Action: action.Swipe, Start: mp(540, 2200), End: mp(540, 1800)}, obs, nil)
	if err != nil || ta.Action != protocol.ActScroll || *ta.Args.Direction != "down" || *ta.Args.NodeID != "node-5" || *ta.Args.Distance != 50 {
		t.Fatalf("swipe %+v %v", ta, err)
	}
	ta, _ = mapToTyped(agentloop.Command{Action: action.Swipe, Start: mp(100, 1000), End: mp(900, 1000)}, obs, nil)
	if *ta.Args.Direction != "left" || ta.Args.NodeID != nil {
		t.Fatalf("right swipe outside a list: %+v", ta)
	}
	// No Double Tap on this device: a note for the model, nothing sent.
	_, err = mapToTyped(agentloop.Command{Action: action.DoubleTap, Point: mp(500, 850)}, obs, nil)
	var nm *agentloop.NotMappableError
	if !errors.As(err, &nm) || nm.Code != fault.CodeUnsupportedAction {
		t.Fatalf("double tap: %v", err)
	}
	// Two text fields and none tapped: no guess.
	page.Children[0].Children = append(page.Children[0].Children, node("node-7", "android.widget.EditText", "", 100, 550, 980, 650))
	if _, err := mapToTyped(agentloop.Command{Action: action.Type, Text: "x"}, obs, nil); !errors.As(err, &nm) || nm.Code != fault.CodeNoTextField {
		t.Fatalf("ambiguous field: %v", err)
	}
	last := refOf(page.Children[0].Children[2])
	ta, err = mapToTyped(agentloop.Command{Action: action.Type, Text: "x"}, obs, last)
	if err != nil || *ta.Args.NodeID != "node-7" {
		t.Fatalf("last tapped field: %+v %v", ta, err)
	}
}

// renderPage draws an observation tree in the simulator's style, so the
// fake model sees what a SoloPi screenshot of that tree would show.
func renderPage(page *agent.UINode) *image.RGBA {
	b := page.Bounds
	c := fakemodel.NewCanvas(b.Right-b.Left, b.Bottom-b.Top, 63)
	page.Walk(func(n *agent.UINode) bool {
		if n.Bounds == nil {
			return true
		}
		r := image.Rect(n.Bounds.Left, n.Bounds.Top, n.Bounds.Right, n.Bounds.Bottom)
		switch {
		case strings.HasSuffix(n.ClassName, "Button"):
			c.Box("button", r, n.Text)
		case strings.HasSuffix(n.ClassName, "EditText"):
			c.Box("field", r, n.Description)
		case strings.HasSuffix(n.ClassName, "TextView"):
			c.Box("label", r, n.Text)
		}
		return true
	})
	return c.Img
}

func pageScreens(ctx context.Context, o *agent.Observation) (*agentloop.Screen, error) {
	return agentloop.ScreenFromImage(renderPage(o.Page), time.Now())
}

// simAgentClient starts a simulated phone with the counter app in front and
// an Agent client on a session to it.
func simAgentClient(t *testing.T) (*sim.Device, *agent.AgentClient) {
	t.Helper()
	phone, s := simSession(t)
	client := agent.NewAgentClient(s.Device, agent.AgentOptions{Foreground: s.Foreground, PollInterval: 20 * time.Millisecond})
	t.Cleanup(client.Close)
	return phone, client
}

// simSession starts a simulated phone with the counter app in front and
// opens a session to it.
func simSession(t *testing.T) (*sim.Device, *device.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	phone := sim.New(sim.Options{Serial: "sim-agentdevice", TimeScale: 10})
	t.Cleanup(func() { phone.Close() })
	if err := phone.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := phone.Phone.LaunchApp(counterPkg); err != nil {
		t.Fatal(err)
	}
	s, err := device.OpenSession(ctx, phone, device.SessionOptions{PreserveForeground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return phone, s
}

const counterPkg = "com.example.counter"

func fastBudget() agent.AgentBudget {
	b := agent.DefaultAgentBudget()
	b.MaxSteps = 10
	// The simulator scales the device's limits with its clock; keep them
	// far from the wall time a loaded machine needs.
	b.IdleTimeoutMs, b.MaxDurationMs = 300_000, 1_800_000
	return b
}

// counterValue is the number the counter app shows.
func counterValue(phone *sim.Device) string {
	var v string
	var walk func(n *ui.Node)
	walk = func(n *ui.Node) {
		if n.ResourceID == counterPkg+":id/counter_value" {
			v = n.Text
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	if w := phone.Phone.ActiveWindow(); w.Root != nil {
		walk(w.Root)
	}
	return v
}

// TestSoloPiDeviceWholeLoop runs the PhoneAgent on the SoloPi Agent
// session device of the simulator: the fake model reads the screenshots
// the device published, and freshness re-observations are real observe
// calls.
func TestSoloPiDeviceWholeLoop(t *testing.T) {
	t.Parallel()
	phone, client := simAgentClient(t)
	srv, err := fakemodel.Start(fakemodel.Options{Coords: fakemodel.CoordsRelative})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model = srv.URL, "fake"
	model, err := chat.NewClient(mc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev, err := Start(ctx, client, Options{Budget: fastBudget(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := agentloop.New(agentloop.Config{Space: coord.SpaceAuto, RecheckDelay: time.Millisecond}, dev, model)
	res, err := agent.Run(ctx, agentloop.Task{Goal: "make the counter show 1", MaxSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	if cerr := dev.Close(ctx); cerr != nil {
		t.Fatal(cerr)
	}
	if res.Outcome != agentloop.OutcomeCompleted {
		t.Fatalf("outcome %s: %s %s", res.Outcome, res.Message, res.ErrorMessage)
	}
	if v := counterValue(phone); v != "1" {
		t.Fatalf("the counter shows %q, want 1", v)
	}
	if s := dev.Session(); s == nil || s.State != "ended" {
		t.Fatalf("session %+v after Close, want ended", s)
	}
}
