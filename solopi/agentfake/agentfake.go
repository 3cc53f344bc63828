// Package agentfake is a scripted fake of SoloPi's dynamic Agent device
// side (docs/device-protocol.md) on the devicefake phone (the simulator's
// shell and file system): queries are served by an http.Handler over
// net.Pipe streams returned from DialTCP, mutations are decoded from the
// `am start … -d <uri>` shell commands, and the focused activity moves
// exactly as on a phone (the protected activity comes to the front on every
// mutation; `am start -W -n <comp>` brings a component back; `dumpsys
// window` reports it). Evidence files are written to the phone. It exists
// for host unit tests whose device answers must be scripted; everything
// else runs on the simulator.
package agentfake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// Constants of the fake phone.
const (
	SoloPiPackage   = protocol.DefaultPackage
	AppPackage      = "com.example.login"
	AppActivity     = AppPackage + "/.MainActivity"
	SolopiDir       = "/storage/emulated/0/solopi"
	protectedFocus  = SoloPiPackage + "/" + protocol.AdbSchemeActivity
	screenW         = 1080
	screenH         = 2340
	defaultRootWait = 600 * time.Millisecond
)

// Node is one view of the fake app.
type Node struct {
	Class, Text, Desc, ResID, ID string
	Bounds                       [4]int // left, top, right, bottom
	Children                     []*Node
	// OnClick names the screen a click leads to ("" = no change).
	OnClick string
}

// Mutation is one decoded mutation as the device received it.
type Mutation struct {
	Type   string
	Params map[string]string
}

// Device is the fake phone with SoloPi's Agent resolver.
type Device struct {
	// Knobs; set them before use or under no concurrent activity.
	// RootWait is how long observe, act and the first observation wait for
	// a controllable root (the device's 5 s, scaled down).
	RootWait time.Duration
	// ActDelay is how long an accepted action executes before settling.
	ActDelay time.Duration
	// NoFirstObservation makes start never capture the first observation.
	NoFirstObservation bool
	// ScreenshotError, when set, replaces every screenshot by this error.
	ScreenshotError string
	// LeaseBusy makes start fail invisibly with lease_conflict.
	LeaseBusy bool

	mu        sync.Mutex
	focus     string
	screens   map[string]*Node
	screen    string
	inputs    map[string]string // resourceId → typed text
	gen       int64
	sess      *session
	mutations []Mutation
	queries   []string
	tr        *devicefake.Transport
	cleanups  []func()
	clock     int64
}

type session struct {
	id, token                string
	gen                      int64
	state, terminalReason    string
	startedAt, lastActivity  int64
	finishedAt               int64
	accepted                 int64
	maxSteps, maxRepeated    int64
	maxNoProgress            int64
	obs                      map[string]any
	obsSig                   string
	consumed                 bool
	frame                    map[string]*Node
	receipts                 map[string]map[string]any
	events                   []event
	leaseHeld                bool
	lastActSig               string
	repeat, noProgress       int64
	cancelAct                chan struct{}
	timelinePath, sessionDir string
}

type event struct {
	Sequence      int64  `json:"sequence"`
	Timestamp     int64  `json:"timestamp"`
	Type          string `json:"type"`
	SessionID     string `json:"sessionId"`
	Generation    int64  `json:"generation"`
	StepID        string `json:"stepId,omitempty"`
	ObservationID string `json:"observationId,omitempty"`
	Details       any    `json:"details,omitempty"`
}

// New returns a fake phone showing the login screen of the app under test.
func New() *Device {
	d := &Device{
		RootWait: defaultRootWait,
		focus:    AppActivity,
		screens:  defaultScreens(),
		screen:   "login",
		inputs:   map[string]string{},
		clock:    1_700_000_000_000,
	}
	d.tr = devicefake.New(d, http.HandlerFunc(d.serveHTTP))
	d.tr.Name = "fake-agent-1"
	d.tr.OnShell = d.shell
	return d
}

// Cleanup registers f to run on Close (devicefake.Cleaner).
func (d *Device) Cleanup(f func()) { d.cleanups = append(d.cleanups, f) }

// Close stops the HTTP side.
func (d *Device) Close() {
	for _, f := range d.cleanups {
		f()
	}
	d.cleanups = nil
}

func defaultScreens() map[string]*Node {
	rid := func(s string) string { return AppPackage + ":id/" + s }
	return map[string]*Node{
		"login": {Class: "android.widget.FrameLayout", ID: "1", Bounds: [4]int{0, 0, screenW, screenH}, Children: []*Node{
			{Class: "android.widget.TextView", ID: "2", Text: "Sign in", ResID: rid("title"), Bounds: [4]int{100, 200, 980, 300}},
			{Class: "android.widget.EditText", ID: "3", ResID: rid("username"), Desc: "User name", Bounds: [4]int{100, 400, 980, 500}},
			{Class: "android.widget.EditText", ID: "4", ResID: rid("password"), Desc: "Password", Bounds: [4]int{100, 550, 980, 650}},
			{Class: "android.widget.Button", ID: "5", Text: "Sign in", ResID: rid("login"), Bounds: [4]int{100, 800, 980, 920}, OnClick: "home"},
			{Class: "android.widget.Button", ID: "6", Text: "Help", ResID: rid("help"), Bounds: [4]int{100, 1000, 980, 1120}},
		}},
		"home": {Class: "android.widget.FrameLayout", ID: "1", Bounds: [4]int{0, 0, screenW, screenH}, Children: []*Node{
			{Class: "android.widget.TextView", ID: "7", Text: "Welcome", ResID: rid("welcome"), Bounds: [4]int{100, 200, 980, 300}},
			{Class: "android.widget.Button", ID: "8", Text: "Sign out", ResID: rid("logout"), Bounds: [4]int{100, 800, 980, 920}, OnClick: "login"},
		}},
	}
}

// ---- Agent state (all *Locked helpers run with d.mu held) ----

func (d *Device) nowLocked() int64 { d.clock += 7; return d.clock }

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func isLive(state string) bool { return state == "active" || state == "paused" || state == "acting" }

func (s *session) snapshot() map[string]any {
	m := map[string]any{
		"success": true, "sessionId": s.id, "generation": s.gen, "state": s.state,
		"active": isLive(s.state), "terminal": !isLive(s.state), "acceptedSteps": s.accepted,
		"maxSteps": s.maxSteps, "leaseHeld": s.leaseHeld, "startedAt": s.startedAt, "lastActivityAt": s.lastActivity,
	}
	if s.terminalReason != "" {
		m["terminalReason"] = s.terminalReason
	}
	if s.finishedAt != 0 {
		m["finishedAt"] = s.finishedAt
	}
	if s.obs != nil {
		m["observationId"] = s.obs["observationId"]
	}
	return m
}

func (d *Device) appendEventLocked(typ, stepID, obsID string, details any) {
	s := d.sess
	ev := event{Sequence: int64(len(s.events)) + 1, Timestamp: d.nowLocked(), Type: typ, SessionID: s.id, Generation: s.gen,
		StepID: stepID, ObservationID: obsID}
	if details != nil {
		// A snapshot: the receipt map keeps changing after the event.
		b, _ := json.Marshal(details)
		ev.Details = json.RawMessage(b)
	}
	s.events = append(s.events, ev)
	line, _ := json.Marshal(ev)
	d.tr.Files.Append(s.timelinePath, append(line, '\n'))
}

func (d *Device) terminateLocked(state, reason string) {
	s := d.sess
	if !isLive(s.state) {
		return // termination happens exactly once
	}
	s.state, s.terminalReason, s.finishedAt = state, reason, d.nowLocked()
	if s.cancelAct != nil {
		close(s.cancelAct)
		s.cancelAct = nil
	}
	s.frame = nil
	s.leaseHeld = false
	d.appendEventLocked("session_terminal", "", "", map[string]any{"reason": reason})
	d.appendEventLocked("lease_released", "", "", map[string]any{"released": true})
}

// controllableLocked reports whether the focused window may be a root.
func (d *Device) controllableLocked() bool {
	return strings.HasPrefix(d.focus, AppPackage+"/")
}

// waitRoot waits for a controllable root like loadControllableRoot.
func (d *Device) waitRoot(cancel <-chan struct{}) bool {
	deadline := time.Now().Add(d.RootWait)
	for {
		d.mu.Lock()
		ok := d.controllableLocked()
		d.mu.Unlock()
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-cancel:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// pageLocked exports the current screen, its hash and its nodeId frame.
func (d *Device) pageLocked() (map[string]any, string, map[string]*Node) {
	var export func(n *Node, depth int) map[string]any
	export = func(n *Node, depth int) map[string]any {
		text := n.Text
		if v, ok := d.inputs[n.ResID]; ok && n.Class == "android.widget.EditText" {
			text = v
		}
		m := map[string]any{
			"depth": depth, "className": n.Class, "text": text, "description": n.Desc, "id": n.ID,
			"packageName": AppPackage, "visible": true, "type": "AccessibilityNodeTree",
			"nodeBound": map[string]any{"left": n.Bounds[0], "top": n.Bounds[1], "right": n.Bounds[2], "bottom": n.Bounds[3], "empty": false},
		}
		if n.ResID != "" {
			m["resourceId"] = n.ResID
		}
		kids := []any{}
		for _, c := range n.Children {
			kids = append(kids, export(c, depth+1))
		}
		m["children"] = kids
		return m
	}
	root := d.screens[d.screen]
	page := export(root, 1)
	b, _ := json.Marshal(page) // map keys are sorted: the device's MapSortField hash
	sum := sha256.Sum256(b)
	frame := map[string]*Node{}
	n := 0
	var number func(m map[string]any, node *Node)
	number = func(m map[string]any, node *Node) {
		n++
		id := "node-" + strconv.Itoa(n)
		m["nodeId"] = id
		frame[id] = node
		for i, c := range m["children"].([]any) {
			number(c.(map[string]any), node.Children[i])
		}
	}
	number(page, root)
	return page, hex.EncodeToString(sum[:]), frame
}

// newObservationLocked makes a new observation of the current screen.
func (d *Device) newObservationLocked() (map[string]any, string, map[string]*Node) {
	s := d.sess
	page, sig, frame := d.pageLocked()
	id := "observation-" + uuid4()
	o := map[string]any{"observationId": id, "signature": sig, "createdAt": d.nowLocked(), "treeSha256": sig,
		"page": page, "timelinePath": s.timelinePath}
	if d.ScreenshotError != "" {
		o["screenshotError"] = d.ScreenshotError
	} else {
		path := s.sessionDir + "/" + id + ".png"
		png := append([]byte("\x89PNG\r\n\x1a\n"), []byte("fake screenshot of "+d.screen+" "+id)...)
		d.tr.Files.Put(path, png)
		sum := sha256.Sum256(png)
		o["screenshotPath"] = path
		o["screenshotSha256"] = hex.EncodeToString(sum[:])
	}
	return o, sig, frame
}

func (d *Device) setCurrentLocked(o map[string]any, sig string, frame map[string]*Node) {
	s := d.sess
	s.obs, s.obsSig, s.frame, s.consumed = o, sig, frame, false
	s.lastActivity = d.nowLocked()
}
