// Package agentfake is a scripted fake of SoloPi's dynamic Agent device
// side (docs/device-protocol.md) behind a solopi.Transport: queries are served by
// an http.Handler over net.Pipe streams returned from DialTCP, mutations are
// decoded from the `am start … -d <uri>` shell commands, and the focused
// activity moves exactly as on a phone (the protected activity comes to the
// front on every mutation; `am start -W -n <comp>` brings a component back;
// `dumpsys window` reports it). It exists for host unit tests: the product's
// full simulator lives in sim/. It imports only protocol, devicefake and the
// standard library so that tests of package solopi can use it.
package agentfake

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"sort"
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
	files     map[string][]byte
	mutations []Mutation
	shells    []string
	queries   []string
	pipe      *devicefake.Pipe
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
		files:    map[string][]byte{},
		clock:    1_700_000_000_000,
	}
	d.pipe = devicefake.NewPipe(http.HandlerFunc(d.serveHTTP))
	return d
}

// Close stops the HTTP side.
func (d *Device) Close() { _ = d.pipe.Close() }

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

// ---- Transport ----

// Serial names the fake device.
func (d *Device) Serial() string { return "fake-agent-1" }

// Shell runs the few commands the host sends.
func (d *Device) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, -1, err
	}
	d.mu.Lock()
	d.shells = append(d.shells, cmd)
	d.mu.Unlock()
	args, err := devicefake.Split(cmd)
	if err != nil || len(args) == 0 {
		return nil, []byte("sh: syntax error\n"), 2, nil
	}
	switch {
	case len(args) == 3 && args[0] == "pm" && args[1] == "path" && args[2] == SoloPiPackage:
		return []byte("package:/data/app/" + SoloPiPackage + "-1/base.apk\n"), nil, 0, nil
	case args[0] == "dumpsys" && len(args) == 2 && args[1] == "window":
		d.mu.Lock()
		f := d.focus
		d.mu.Unlock()
		return []byte("WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{1a2b3c u0 " + f + "}\n  mFocusedApp=null\n"), nil, 0, nil
	case args[0] == "sha256sum" && len(args) == 2:
		d.mu.Lock()
		b, ok := d.files[args[1]]
		d.mu.Unlock()
		if !ok {
			return nil, []byte("sha256sum: " + args[1] + ": No such file or directory\n"), 1, nil
		}
		sum := sha256.Sum256(b)
		return []byte(hex.EncodeToString(sum[:]) + "  " + args[1] + "\n"), nil, 0, nil
	case len(args) >= 5 && args[0] == "am" && args[1] == "start" && args[2] == "-W" && args[3] == "-n":
		comp := args[4]
		if comp == SoloPiPackage+"/"+protocol.AdbSchemeActivity {
			return d.amScheme(args[5:])
		}
		if len(args) != 5 {
			return nil, []byte("Error: unexpected arguments\n"), 1, nil
		}
		d.mu.Lock()
		d.focus = comp
		d.mu.Unlock()
		return []byte("Starting: Intent { cmp=" + comp + " }\nStatus: ok\n"), nil, 0, nil
	}
	return nil, []byte("/system/bin/sh: " + args[0] + ": not found\n"), 127, nil
}

// amScheme handles `-a VIEW -d <uri>` for the protected activity.
func (d *Device) amScheme(rest []string) ([]byte, []byte, int, error) {
	if len(rest) != 4 || rest[0] != "-a" || rest[1] != protocol.ViewAction || rest[2] != "-d" {
		return nil, []byte("Error: bad intent arguments\n"), 1, nil
	}
	uri := rest[3]
	d.mu.Lock()
	d.focus = protectedFocus
	d.mu.Unlock()
	action, q, ok := parseSchemeURI(uri)
	if ok && action == protocol.ActionAgent {
		d.mutate(q)
	}
	return []byte("Starting: Intent { act=android.intent.action.VIEW dat=solopi://startaction/... cmp=" + protectedFocus + " }\nStatus: ok\n"), nil, 0, nil
}

// parseSchemeURI decodes solopi://startaction/<action>?<query> the way
// android.net.Uri does for the protected activity (first value wins).
func parseSchemeURI(uri string) (string, map[string]string, bool) {
	rest, ok := strings.CutPrefix(uri, protocol.SchemeURIPrefix)
	if !ok {
		return "", nil, false
	}
	path, query, _ := strings.Cut(rest, "?")
	action, err := url.PathUnescape(path)
	if err != nil || strings.Contains(action, "/") {
		return "", nil, false
	}
	q := map[string]string{}
	for _, piece := range strings.Split(query, "&") {
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		if _, seen := q[k]; !seen {
			q[k] = v
		}
	}
	return action, q, true
}

// Exec is not used by the Agent host.
func (d *Device) Exec(ctx context.Context, cmd string) ([]byte, error) {
	return nil, fmt.Errorf("fake: exec %q not supported", cmd)
}

// DialTCP opens a stream to the control port.
func (d *Device) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port != protocol.DefaultDevicePort {
		return nil, fmt.Errorf("fake: nothing listens on tcp:%d", port)
	}
	return d.pipe.Dial(ctx)
}

// Push is not used by the Agent host.
func (d *Device) Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error {
	return errors.New("fake: push not supported")
}

// Pull copies a device file.
func (d *Device) Pull(ctx context.Context, remotePath string, w io.Writer) error {
	d.mu.Lock()
	b, ok := d.files[remotePath]
	b = append([]byte(nil), b...)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("fake: pull %s: %w", remotePath, fs.ErrNotExist)
	}
	_, err := w.Write(b)
	return err
}

// Stat describes a device file.
func (d *Device) Stat(ctx context.Context, remotePath string) (fs.FileInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.files[remotePath]; !ok {
		return nil, fmt.Errorf("fake: stat %s: %w", remotePath, fs.ErrNotExist)
	}
	return nil, errors.New("fake: stat details not supported")
}

// ---- Inspection for tests ----

// Focus is the focused component.
func (d *Device) Focus() string { d.mu.Lock(); defer d.mu.Unlock(); return d.focus }

// SetFocus moves the focus (another app coming to the front).
func (d *Device) SetFocus(comp string) { d.mu.Lock(); defer d.mu.Unlock(); d.focus = comp }

// Screen is the name of the screen the app shows.
func (d *Device) Screen() string { d.mu.Lock(); defer d.mu.Unlock(); return d.screen }

// Mutations lists every decoded agent mutation.
func (d *Device) Mutations() []Mutation {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Mutation(nil), d.mutations...)
}

// ShellCommands lists every shell command received.
func (d *Device) ShellCommands() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.shells...)
}

// File returns a device file.
func (d *Device) File(path string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[path]
	return append([]byte(nil), b...), ok
}

// Files lists the device file paths.
func (d *Device) Files() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p := range d.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// SessionState returns the current session's id and state.
func (d *Device) SessionState() (id, state, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return "", "idle", ""
	}
	return d.sess.id, d.sess.state, d.sess.terminalReason
}

// EventTypes lists the current session's event types in order.
func (d *Device) EventTypes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return nil
	}
	var out []string
	for _, e := range d.sess.events {
		out = append(out, e.Type)
	}
	return out
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
	d.files[s.timelinePath] = append(d.files[s.timelinePath], append(line, '\n')...)
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
		d.files[path] = png
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

// ---- mutations (invisible answers: only state changes are observable) ----

func (d *Device) mutate(q map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mutations = append(d.mutations, Mutation{Type: q["type"], Params: q})
	switch q["type"] {
	case protocol.AgentStart:
		d.startLocked(q)
	case protocol.AgentAct:
		d.actLocked(q)
	case protocol.AgentPause, protocol.AgentResume, protocol.AgentEnd, protocol.AgentCancel:
		d.controlLocked(q)
	}
}

func (d *Device) startLocked(q map[string]string) {
	tok, ok := q["ownerToken"]
	if !ok || tok == "" {
		return // missing_parameter
	}
	var maxSteps, maxRep, maxNo, unused int64
	type bound struct {
		r   protocol.Range
		dst *int64
	}
	for _, b := range []bound{
		{protocol.AgentMaxSteps, &maxSteps}, {protocol.AgentMaxDurationMs, &unused}, {protocol.AgentIdleTimeoutMs, &unused},
		{protocol.AgentMaxRepeatedActions, &maxRep}, {protocol.AgentMaxNoProgressSteps, &maxNo},
	} {
		v, present := q[b.r.Name]
		if !present {
			*b.dst = b.r.Default
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !b.r.Contains(n) {
			return // invalid_parameter
		}
		*b.dst = n
	}
	if d.sess != nil && isLive(d.sess.state) {
		return // session_conflict
	}
	if len(tok) < 16 {
		return // invalid_owner_token
	}
	if d.LeaseBusy {
		return // lease_conflict
	}
	d.gen++
	id := "agent-session-" + uuid4()
	dir := SolopiDir + "/agent-sessions/" + id
	now := d.nowLocked()
	d.sess = &session{id: id, token: tok, gen: d.gen, state: "active", startedAt: now, lastActivity: now,
		maxSteps: maxSteps, maxRepeated: maxRep, maxNoProgress: maxNo, receipts: map[string]map[string]any{},
		leaseHeld: true, sessionDir: dir, timelinePath: dir + "/timeline.jsonl"}
	d.files[d.sess.timelinePath] = nil
	d.appendEventLocked("session_started", "", "", nil)
	if d.NoFirstObservation {
		return
	}
	s := d.sess
	go func() {
		ok := d.waitRoot(nil)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.sess != s || !isLive(s.state) {
			return
		}
		if !ok {
			d.terminateLocked("failed", "page_root_unavailable")
			return
		}
		o, sig, frame := d.newObservationLocked()
		d.setCurrentLocked(o, sig, frame)
		d.appendEventLocked("observation_created", "", o["observationId"].(string), o)
	}()
}

// identityLocked: "" when the caller owns the current session.
func (d *Device) identityLocked(q map[string]string) (code, msg string) {
	if d.sess == nil || q["sessionId"] != d.sess.id {
		return protocol.ErrSessionNotFound, "sessionId does not identify the current session"
	}
	if q["ownerToken"] != d.sess.token {
		return protocol.ErrOwnerMismatch, "ownerToken does not own this session"
	}
	return "", ""
}

func (d *Device) controlLocked(q map[string]string) {
	if c, _ := d.identityLocked(q); c != "" {
		return
	}
	s := d.sess
	if !isLive(s.state) {
		return // terminal_session
	}
	switch q["type"] {
	case protocol.AgentPause:
		if s.state == "active" {
			s.state = "paused"
			s.lastActivity = d.nowLocked()
			d.appendEventLocked("session_paused", "", obsID(s), nil)
		}
	case protocol.AgentResume:
		if s.state == "paused" {
			s.state = "active"
			s.lastActivity = d.nowLocked()
			d.appendEventLocked("session_resumed", "", obsID(s), nil)
		}
	case protocol.AgentEnd:
		if s.state != "acting" {
			d.terminateLocked("ended", "client_end")
		}
	case protocol.AgentCancel:
		d.terminateLocked("cancelled", "client_cancel")
	}
}

func obsID(s *session) string {
	if s.obs == nil {
		return ""
	}
	return s.obs["observationId"].(string)
}

func (d *Device) actLocked(q map[string]string) {
	for _, k := range []string{"sessionId", "ownerToken", "stepId", "observationId", "action"} {
		if q[k] == "" {
			return // missing_parameter (invisible)
		}
	}
	var args protocol.ActionArgs
	arguments := map[string]any{}
	for _, k := range []string{"nodeId", "text", "direction"} {
		if v, ok := q[k]; ok {
			v := v
			arguments[k] = v
			switch k {
			case "nodeId":
				args.NodeID = &v
			case "text":
				args.Text = &v
			case "direction":
				args.Direction = &v
			}
		}
	}
	for _, k := range []string{"durationMs", "distance"} {
		if v, ok := q[k]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return // invalid_action "<key> must be an integer" (invisible)
			}
			arguments[k] = n
			if k == "durationMs" {
				args.DurationMs = &n
			} else {
				args.Distance = &n
			}
		}
	}
	gen := int64(-1)
	if d.sess != nil {
		gen = d.sess.gen
	}
	go d.runAct(q, args, arguments, gen)
}

// runAct is the act pipeline.
func (d *Device) runAct(q map[string]string, args protocol.ActionArgs, arguments map[string]any, gen int64) {
	ok := d.waitRoot(nil)
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, _ := d.identityLocked(q); c != "" || d.sess.gen != gen {
		return // identity rejections are not stored
	}
	s := d.sess
	stepID, action := q["stepId"], q["action"]
	if _, exists := s.receipts[stepID]; exists {
		return // idempotent: the stored receipt stands, no second execution
	}
	receipt := map[string]any{"stepId": stepID, "observationId": q["observationId"],
		"action": map[string]any{"type": action, "arguments": arguments}, "acceptedAt": d.nowLocked()}
	reject := func(code, msg string) {
		receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "rejected", code, msg, d.nowLocked()
		s.receipts[stepID] = receipt
		d.appendEventLocked("action_rejected", stepID, q["observationId"], receipt)
	}
	if !ok {
		// Root unavailable: begin then fail (simplified: only when active).
		if s.state == "active" {
			receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "failed", "action_failed",
				"Controllable foreground page root is unavailable", d.nowLocked()
			s.receipts[stepID] = receipt
			d.appendEventLocked("action_failed", stepID, q["observationId"], receipt)
			d.terminateLocked("failed", "action_failed")
		}
		return
	}
	_, freshSig, _ := d.pageLocked()
	switch {
	case s.state == "paused":
		reject(protocol.ErrSessionPaused, "The session is paused")
		return
	case s.state == "acting":
		reject(protocol.ErrSessionBusy, "An action is still executing")
		return
	case s.state != "active":
		reject(protocol.ErrTerminalSession, "The session is already terminal")
		return
	case !protocol.IsTypedAction(action):
		reject(protocol.ErrUnsupportedAction, "Only phase-one typed actions are allowed")
		return
	}
	if msg := protocol.ValidateAction(action, args); msg != "" {
		reject(protocol.ErrInvalidAction, msg)
		return
	}
	if s.obs == nil || s.consumed || q["observationId"] != obsID(s) || freshSig != s.obsSig {
		reject(protocol.ErrStaleObservation, "The action must reference the current unchanged observation")
		return
	}
	if s.accepted >= s.maxSteps {
		reject(protocol.ErrStepBudgetExhausted, "The session step budget is exhausted")
		d.terminateLocked("failed", "step_budget_exhausted")
		return
	}
	sig := protocol.ActionSignature(action, args)
	rep := int64(1)
	if sig == s.lastActSig {
		rep = s.repeat + 1
	}
	if rep > s.maxRepeated {
		reject(protocol.ErrLoopDetected, "Repeated action limit reached")
		d.terminateLocked("failed", "loop_detected")
		return
	}
	s.lastActSig, s.repeat = sig, rep
	s.consumed = true
	s.accepted++
	s.state = "acting"
	s.lastActivity = d.nowLocked()
	receipt["status"] = "accepted"
	s.receipts[stepID] = receipt
	d.appendEventLocked("action_accepted", stepID, q["observationId"], receipt)
	cancel := make(chan struct{})
	s.cancelAct = cancel
	frame := s.frame
	preSig := s.obsSig

	d.mu.Unlock()
	select {
	case <-cancel:
	case <-time.After(d.ActDelay):
	}
	d.mu.Lock()
	if d.sess != s || s.gen != gen || s.state != "acting" {
		return // cancelled or expired while acting: the receipt stays accepted
	}
	s.cancelAct = nil
	fail := func(msg string) {
		receipt["status"], receipt["errorCode"], receipt["error"], receipt["finishedAt"] = "failed", "action_failed", msg, d.nowLocked()
		d.appendEventLocked("action_failed", stepID, q["observationId"], receipt)
		d.terminateLocked("failed", "action_failed")
	}
	switch action {
	case protocol.ActClick, protocol.ActLongClick, protocol.ActInput:
		n := frame[*args.NodeID]
		if n == nil {
			fail("Action execution failed")
			return
		}
		if action == protocol.ActInput {
			d.inputs[n.ResID] = *args.Text
		} else if action == protocol.ActClick && n.OnClick != "" {
			d.screen = n.OnClick
		}
	case protocol.ActBack:
		if d.screen == "home" {
			d.screen = "login"
		}
	}
	o, settledSig, newFrame := d.newObservationLocked()
	d.setCurrentLocked(o, settledSig, newFrame)
	s.state = "active"
	receipt["status"], receipt["finishedAt"], receipt["settledObservation"] = "succeeded", d.nowLocked(), o
	d.appendEventLocked("action_settled", stepID, q["observationId"], receipt)
	if settledSig == preSig {
		s.noProgress++
	} else {
		s.noProgress = 0
	}
	if s.noProgress >= s.maxNoProgress {
		d.terminateLocked("failed", "no_progress_loop_detected")
	}
}

// ---- queries ----

func (d *Device) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.URL.Path, protocol.HTTPPathPrefix)
	q := map[string]string{}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err == nil {
		for k, v := range vals {
			q[k] = v[len(v)-1] // NanoHTTPD: the last duplicate wins
		}
	}
	d.mu.Lock()
	d.queries = append(d.queries, r.URL.RawQuery)
	d.mu.Unlock()
	if ok && action == protocol.ActionHarness && q["type"] == protocol.HarnessCapabilities {
		// Just enough of the harness for the host's session bootstrap.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"protocolVersion":"2.0","agentProtocolVersion":"1.0","packageName":"com.alipay.hulu"}`)
		return
	}
	if !ok || action != protocol.ActionAgent {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `{"success": false, "error": "No Valid Listener"}`)
		return
	}
	b := d.query(q)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func e1(code, msg string) []byte {
	return encode(map[string]any{"success": false, "errorCode": code, "error": msg})
}

// encode renders an answer; callers hold d.mu when it references session
// state, so the act goroutine cannot change it mid-encoding.
func encode(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

func (d *Device) query(q map[string]string) []byte {
	typ := q["type"]
	if typ == "" {
		return e1(protocol.ErrMissingType, "Parameter 'type' is required")
	}
	switch typ {
	case protocol.AgentCapabilities:
		return encode(map[string]any{"success": true, "protocolVersion": "1.0",
			"queries":        []string{"capabilities", "start-status", "status", "observe", "receipt", "timeline"},
			"commands":       []string{"start", "act", "pause", "resume", "end", "cancel"},
			"actions":        []string{"click", "longClick", "input", "back", "home", "scroll", "wait"},
			"arbitraryShell": false, "mutationTransport": "adb-scheme", "queryTransport": "adb-forward-http"})
	case protocol.AgentStart, protocol.AgentAct, protocol.AgentPause, protocol.AgentResume, protocol.AgentEnd, protocol.AgentCancel:
		return e1(protocol.ErrAdbRequired, "Agent mutations require the DUMP-protected ADB scheme transport")
	case protocol.AgentStartStatus:
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.sess == nil || q["ownerToken"] != d.sess.token {
			return e1(protocol.ErrSessionNotFound, "No session belongs to ownerToken")
		}
		m := map[string]any{"success": true, "session": d.sess.snapshot(), "timelinePath": d.sess.timelinePath}
		if d.sess.obs != nil {
			m["observation"] = d.sess.obs
		}
		return encode(m)
	case protocol.AgentObserve:
		return d.observe(q)
	}
	for _, k := range []string{"sessionId", "ownerToken"} {
		if q[k] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter '"+k+"' is required")
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, msg := d.identityLocked(q); c != "" {
		return e1(c, msg)
	}
	s := d.sess
	switch typ {
	case protocol.AgentStatus:
		if isLive(s.state) {
			s.lastActivity = d.nowLocked()
		}
		return encode(map[string]any{"success": true, "session": s.snapshot()})
	case protocol.AgentReceiptQuery:
		if q["stepId"] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter 'stepId' is required")
		}
		rc, ok := s.receipts[q["stepId"]]
		if !ok {
			return e1(protocol.ErrReceiptNotFound, "No receipt exists for stepId")
		}
		return encode(map[string]any{"success": true, "receipt": rc, "session": s.snapshot()})
	case protocol.AgentTimeline:
		return encode(map[string]any{"success": true, "events": s.events, "timelinePath": s.timelinePath})
	}
	return e1(protocol.ErrUnsupportedType, "Unsupported Agent type: "+typ)
}

func (d *Device) observe(q map[string]string) []byte {
	for _, k := range []string{"sessionId", "ownerToken"} {
		if q[k] == "" {
			return e1(protocol.ErrMissingParameter, "Parameter '"+k+"' is required")
		}
	}
	d.mu.Lock()
	if c, msg := d.identityLocked(q); c != "" {
		d.mu.Unlock()
		return e1(c, msg)
	}
	s := d.sess
	switch {
	case !isLive(s.state):
		d.mu.Unlock()
		return e1(protocol.ErrTerminalSession, "The session is already terminal")
	case s.state == "acting":
		d.mu.Unlock()
		return e1(protocol.ErrSessionBusy, "An action is still executing")
	}
	d.mu.Unlock()
	if !d.waitRoot(nil) {
		return e1(protocol.ErrPageRootUnavailable, "Controllable foreground page root is unavailable")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess != s || !isLive(s.state) {
		return e1(protocol.ErrTerminalSession, "The session is already terminal")
	}
	o, sig, frame := d.newObservationLocked()
	d.setCurrentLocked(o, sig, frame)
	d.appendEventLocked("observation_created", "", o["observationId"].(string), o)
	return encode(map[string]any{"success": true, "session": s.snapshot(), "observation": o})
}

// ---- plumbing ----
