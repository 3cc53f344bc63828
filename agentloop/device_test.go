package agentloop

import (
	"context"
	"encoding/base64"
	"errors"
	"image"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/agentfake"
	"github.com/solopi-dev/solopi/solopi/device"
)

// shellTransport is a device.Transport that records shell commands and
// answers the few the adb device sends.
type shellTransport struct {
	mu        sync.Mutex
	cmds      []string
	ime       string
	noAdbKB   bool
	kbEnabled bool
	png       []byte
}

func (s *shellTransport) Serial() string { return "fake-adb" }
func (s *shellTransport) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds = append(s.cmds, cmd)
	switch {
	case cmd == "settings get secure default_input_method":
		return []byte(s.ime + "\n"), nil, 0, nil
	case cmd == "ime list -a -s":
		if s.noAdbKB {
			return []byte("com.android.inputmethod.latin/.LatinIME\n"), nil, 0, nil
		}
		return []byte(AdbIME + "\ncom.android.inputmethod.latin/.LatinIME\n"), nil, 0, nil
	case cmd == "ime enable "+AdbIME || cmd == "ime disable "+AdbIME:
		if s.noAdbKB {
			return nil, []byte("Unknown input method " + AdbIME + " cannot be enabled for user #0\n"), 255, nil
		}
		verb := strings.Fields(cmd)[1] + "d"
		was := s.kbEnabled
		s.kbEnabled = verb == "enabled"
		if was == s.kbEnabled {
			return []byte("Input method " + AdbIME + ": already " + verb + " for user #0\n"), nil, 0, nil
		}
		return []byte("Input method " + AdbIME + ": now " + verb + " for user #0\n"), nil, 0, nil
	case strings.HasPrefix(cmd, "ime set "):
		id := strings.TrimPrefix(cmd, "ime set ")
		if id == AdbIME && s.noAdbKB {
			return nil, []byte("Unknown input method com.android.adbkeyboard/.AdbIME cannot be selected for user #0\n"), 255, nil
		}
		s.ime = id
		return []byte("Input method " + id + " selected for user #0\n"), nil, 0, nil
	}
	return nil, nil, 0, nil
}
func (s *shellTransport) Exec(ctx context.Context, cmd string) ([]byte, error) {
	if cmd != "screencap -p" {
		return nil, errors.New("unexpected exec " + cmd)
	}
	return s.png, nil
}
func (s *shellTransport) DialTCP(context.Context, int) (net.Conn, error) {
	return nil, errors.New("no tcp")
}
func (s *shellTransport) Push(context.Context, io.Reader, string, fs.FileMode, time.Time) error {
	return errors.New("no push")
}
func (s *shellTransport) Pull(context.Context, string, io.Writer) error { return errors.New("no pull") }
func (s *shellTransport) Stat(context.Context, string) (fs.FileInfo, error) {
	return nil, fs.ErrNotExist
}
func (s *shellTransport) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cmds...)
}

func mp(x, y int) *coord.MappedPoint { return &coord.MappedPoint{Device: [2]int{x, y}} }

func TestADBDeviceCommands(t *testing.T) {
	scr, _ := ScreenFromImage(fakemodel.CounterScreen("0"), time.Now())
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", png: scr.PNG}
	d := NewADBDevice(tr)
	ctx := context.Background()
	s, err := d.Observe(ctx)
	if err != nil || s.Width() != 1080 || s.Height() != 2340 {
		t.Fatalf("observe %v %v", s, err)
	}
	steps := []Command{
		{Action: action.Tap, Point: mp(747, 1702)},
		{Action: action.DoubleTap, Point: mp(10, 20)},
		{Action: action.LongPress, Point: mp(30, 40)},
		{Action: action.Swipe, Start: mp(500, 1500), End: mp(500, 500)},
		{Action: action.Back},
		{Action: action.Home},
		{Action: action.Type, Text: "重新设计nas外壳"},
		{Action: action.Type, Text: "second"},
		{Action: action.Wait, Duration: 100 * time.Millisecond},
	}
	for _, c := range steps {
		r, err := d.Dispatch(ctx, c, s)
		if err != nil || !r.Dispatched {
			t.Fatalf("%s: %v %+v", c.Action, err, r)
		}
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("重新设计nas外壳"))
	want := []string{
		"input tap 747 1702",
		"input tap 10 20", "input tap 10 20",
		"input swipe 30 40 30 40 800",
		"input swipe 500 1500 500 500 450",
		"input keyevent 4",
		"input keyevent 3",
		"settings get secure default_input_method",
		"ime enable com.android.adbkeyboard/.AdbIME",
		"ime set com.android.adbkeyboard/.AdbIME",
		"am broadcast -a ADB_INPUT_B64 --es msg " + b64,
		"am broadcast -a ADB_INPUT_B64 --es msg " + base64.StdEncoding.EncodeToString([]byte("second")),
		"ime set com.android.inputmethod.latin/.LatinIME",
		"ime disable com.android.adbkeyboard/.AdbIME",
	}
	got := tr.commands()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tr.ime != "com.android.inputmethod.latin/.LatinIME" || tr.kbEnabled {
		t.Errorf("input method left at %s, ADB Keyboard enabled %v", tr.ime, tr.kbEnabled)
	}
}

// TestADBDeviceCheckKeyboard: the preflight finds a missing ADB Keyboard
// by listing input methods only, and says how to install it.
func TestADBDeviceCheckKeyboard(t *testing.T) {
	ctx := context.Background()
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME"}
	if err := NewADBDevice(tr).CheckKeyboard(ctx); err != nil {
		t.Fatal(err)
	}
	tr = &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", noAdbKB: true}
	err := NewADBDevice(tr).CheckKeyboard(ctx)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != CodeADBKeyboardMissing || fe.Kind != fault.Failed || !strings.Contains(fe.UserAction, "adb install") {
		t.Fatalf("err %v", err)
	}
	if got := tr.commands(); len(got) != 1 || got[0] != "ime list -a -s" {
		t.Fatalf("the check ran %v; it must only list input methods", got)
	}
}

func TestADBDeviceMissingKeyboard(t *testing.T) {
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", noAdbKB: true}
	d := NewADBDevice(tr)
	_, err := d.Dispatch(context.Background(), Command{Action: action.Type, Text: "x"}, nil)
	var de *DeviceError
	if !errors.As(err, &de) || de.Code != CodeIMEUnavailable {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range tr.commands() {
		if strings.HasPrefix(c, "am broadcast") {
			t.Fatal("text was broadcast without the ADB keyboard")
		}
	}
}

func TestADBDeviceRejectsNonPNG(t *testing.T) {
	d := NewADBDevice(&shellTransport{png: []byte("not a png")})
	if _, err := d.Observe(context.Background()); err == nil {
		t.Fatal("accepted a non-PNG screenshot")
	}
}

func node(id, class, text string, l, t, r, b int, kids ...*agent.UINode) *agent.UINode {
	return &agent.UINode{NodeID: id, ClassName: class, Text: text, Bounds: &agent.Rect{Left: l, Top: t, Right: r, Bottom: b}, Children: kids}
}

func TestHitTestAndTypedMapping(t *testing.T) {
	page := node("node-1", "android.widget.FrameLayout", "", 0, 0, 1080, 2340,
		node("node-2", "android.widget.LinearLayout", "", 0, 300, 1080, 1500,
			node("node-3", "android.widget.EditText", "", 100, 400, 980, 500),
			node("node-4", "android.widget.Button", "Sign in", 100, 800, 980, 920)),
		node("node-5", "androidx.recyclerview.widget.RecyclerView", "", 0, 1500, 1080, 2300,
			node("node-6", "android.widget.TextView", "row", 0, 1500, 1080, 1700)))
	obs := &agent.Observation{ObservationID: "observation-1", Page: page}
	tap := func(x, y int) Command { return Command{Action: action.Tap, Point: mp(x, y)} }
	if n := HitTest(page, 500, 850); n == nil || n.NodeID != "node-4" {
		t.Fatalf("hit %v", n)
	}
	if n := HitTest(page, 50, 350); n == nil || n.NodeID != "node-2" {
		t.Fatalf("container hit %v", n)
	}
	ta, err := MapToTyped(tap(500, 850), obs, nil)
	if err != nil || ta.Action != protocol.ActClick || *ta.Args.NodeID != "node-4" {
		t.Fatalf("%+v %v", ta, err)
	}
	// Type goes to the only text field; after tapping one, to that one.
	ta, err = MapToTyped(Command{Action: action.Type, Text: "alice"}, obs, nil)
	if err != nil || ta.Action != protocol.ActInput || *ta.Args.NodeID != "node-3" || *ta.Args.Text != "alice" {
		t.Fatalf("type %+v %v", ta, err)
	}
	// Long press keeps the node and a duration.
	ta, err = MapToTyped(Command{Action: action.LongPress, Point: mp(500, 450)}, obs, nil)
	if err != nil || ta.Action != protocol.ActLongClick || *ta.Args.NodeID != "node-3" || *ta.Args.DurationMs != 800 {
		t.Fatalf("long press %+v %v", ta, err)
	}
	// A finger-up swipe in the list is the same gesture as scroll down.
	ta, err = MapToTyped(Command{Action: action.Swipe, Start: mp(540, 2200), End: mp(540, 1800)}, obs, nil)
	if err != nil || ta.Action != protocol.ActScroll || *ta.Args.Direction != "down" || *ta.Args.NodeID != "node-5" || *ta.Args.Distance != 50 {
		t.Fatalf("swipe %+v %v", ta, err)
	}
	ta, _ = MapToTyped(Command{Action: action.Swipe, Start: mp(100, 1000), End: mp(900, 1000)}, obs, nil)
	if *ta.Args.Direction != "left" || ta.Args.NodeID != nil {
		t.Fatalf("right swipe outside a list: %+v", ta)
	}
	// No Double Tap on this device: a note for the model, nothing sent.
	_, err = MapToTyped(Command{Action: action.DoubleTap, Point: mp(500, 850)}, obs, nil)
	var nm *NotMappableError
	if !errors.As(err, &nm) || nm.Code != CodeUnsupported {
		t.Fatalf("double tap: %v", err)
	}
	// Two text fields and none tapped: no guess.
	page.Children[0].Children = append(page.Children[0].Children, node("node-7", "android.widget.EditText", "", 100, 550, 980, 650))
	if _, err := MapToTyped(Command{Action: action.Type, Text: "x"}, obs, nil); !errors.As(err, &nm) || nm.Code != CodeNoTextField {
		t.Fatalf("ambiguous field: %v", err)
	}
	last := refOf(page.Children[0].Children[2])
	ta, err = MapToTyped(Command{Action: action.Type, Text: "x"}, obs, last)
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

func pageScreens(ctx context.Context, o *agent.Observation) (*Screen, error) {
	return ScreenFromImage(renderPage(o.Page), time.Now())
}

func newAgentClient(t *testing.T) (*agentfake.Device, *agent.AgentClient) {
	t.Helper()
	fd := agentfake.New()
	fd.RootWait = 50 * time.Millisecond
	t.Cleanup(fd.Close)
	dev := device.NewDevice(fd, device.DeviceOptions{Package: protocol.DefaultPackage, Port: protocol.DefaultDevicePort, RequestTimeout: 5 * time.Second})
	client := agent.NewAgentClient(dev, agent.AgentOptions{Foreground: agentfake.AppActivity, PollInterval: 20 * time.Millisecond})
	t.Cleanup(client.Close)
	return fd, client
}

func fastBudget() agent.AgentBudget {
	b := agent.DefaultAgentBudget()
	b.MaxSteps = 10
	return b
}

// TestSoloPiDeviceWholeLoop runs the PhoneAgent on the SoloPi Agent
// session device: freshness re-observations are real observe calls.
func TestSoloPiDeviceWholeLoop(t *testing.T) {
	fd, client := newAgentClient(t)
	_, model := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsRelative}, "fake", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev, err := StartSoloPiDevice(ctx, client, SoloPiOptions{Budget: fastBudget(), PollInterval: 20 * time.Millisecond, Screens: pageScreens})
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := New(Config{Space: coord.SpaceAuto, RecheckDelay: time.Millisecond}, dev, model)
	res, err := agent.Run(ctx, Task{Goal: `tap the "Sign in" button`, MaxSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	if cerr := dev.Close(ctx); cerr != nil {
		t.Fatal(cerr)
	}
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s: %s %s", res.Outcome, res.Message, res.ErrorMessage)
	}
	if fd.Screen() != "home" {
		t.Fatalf("screen %s", fd.Screen())
	}
	if _, state, _ := fd.SessionState(); state != "ended" {
		t.Fatalf("session state %s after Close, want ended", state)
	}
}
