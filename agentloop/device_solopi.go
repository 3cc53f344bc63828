package agentloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

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

// HitTest returns the smallest visible node of page containing the device
// point (x, y); among equal areas the later node in pre-order (the one
// drawn on top) wins. The tree never leaves the host: the model only ever
// gave a point.
func HitTest(page *agent.UINode, x, y int) *agent.UINode {
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

// TypedAction is a model action mapped onto the SoloPi Agent protocol.
type TypedAction struct {
	Action string
	Args   protocol.ActionArgs
	// Tapped is the node a click targeted (remembered as the Type target
	// when it is a text field).
	Tapped *agent.UINode
}

// MapToTyped maps a command onto the typed actions of protocol 1.0 on the
// observation the command was checked against. Taps become clicks on the
// hit-tested node; Type goes to the text field last tapped, else the only
// one on screen; Swipe becomes scroll; actions the device lacks come back
// as a *NotMappableError whose note is shown to the model.
func MapToTyped(cmd Command, obs *agent.Observation, lastField *nodeRef) (TypedAction, error) {
	var ta TypedAction
	if obs == nil || obs.Page == nil {
		return ta, &NotMappableError{Code: CodeNoNodeAtPoint, Note: "the current observation has no controllable page"}
	}
	str := func(s string) *string { return &s }
	i64 := func(v int64) *int64 { return &v }
	switch cmd.Action {
	case action.Tap, action.LongPress:
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		n := HitTest(obs.Page, x, y)
		if n == nil {
			return ta, &NotMappableError{Code: CodeNoNodeAtPoint, Note: "nothing on the screen is at that point; tap a visible control"}
		}
		ta.Action, ta.Args.NodeID, ta.Tapped = protocol.ActClick, str(n.NodeID), n
		if cmd.Action == action.LongPress {
			ta.Action = protocol.ActLongClick
			ta.Args.DurationMs = i64(LongPressDuration.Milliseconds())
		}
	case action.DoubleTap:
		return ta, &NotMappableError{Code: CodeUnsupported, Note: "this device has no Double Tap; use Tap (twice in two steps if a double tap is really needed) or another action"}
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
			return ta, &NotMappableError{Code: CodeNoTextField, Note: "there is no single text field to type into; tap the text field first"}
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
			return ta, &NotMappableError{Code: CodeUnsupported, Note: "Wait is at most 5 seconds on this device; wait in several steps"}
		}
		ta.Action, ta.Args.DurationMs = protocol.ActWait, i64(max(ms, 100))
	default:
		return ta, &NotMappableError{Code: CodeUnsupported, Note: cmd.Action + " is not a device action"}
	}
	if msg := protocol.ValidateAction(ta.Action, ta.Args); msg != "" {
		return ta, &NotMappableError{Code: CodeUnsupported, Note: "the device would refuse this action: " + msg}
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
func scrollOf(page *agent.UINode, cmd Command) (string, *agent.UINode, int64) {
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

// FetchScreenshot pulls an observation's screenshot into memory and checks
// it against the observation's screenshotSha256. Only files the session
// itself published (inside agent-sessions/<sessionId>/) are pulled.
func FetchScreenshot(ctx context.Context, dev *device.Device, sessionID string, obs *agent.Observation) ([]byte, error) {
	if obs.ScreenshotError != "" {
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the device has no screenshot for this observation: " + obs.ScreenshotError}
	}
	p := obs.ScreenshotPath
	dir, name := path.Split(p)
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || !strings.HasSuffix(dir, "/agent-sessions/"+sessionID+"/") ||
		!strings.HasPrefix(name, "observation-") || !strings.HasSuffix(name, ".png") {
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation's screenshot path is not inside this session's directory"}
	}
	var buf bytes.Buffer
	dg, err := dev.Pull(ctx, p, &buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "cannot pull the observation screenshot", Err: err}
	}
	if obs.ScreenshotSHA256 != "" && !strings.EqualFold(dg.SHA256, obs.ScreenshotSHA256) {
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the pulled screenshot does not match the observation's screenshotSha256"}
	}
	return buf.Bytes(), nil
}

// ScreenSource loads the screenshot of a SoloPi observation.
type ScreenSource func(ctx context.Context, obs *agent.Observation) (*Screen, error)

// SoloPiOptions configure the SoloPi Agent device.
type SoloPiOptions struct {
	Budget        agent.AgentBudget
	AckTimeout    time.Duration
	ActionTimeout time.Duration
	PollInterval  time.Duration
	// StepIDPrefix names steps <prefix>-001, … (default "planner").
	StepIDPrefix string
	// Screens loads an observation's screenshot; nil pulls the file the
	// device published (FetchScreenshot).
	Screens ScreenSource
}

// SoloPiDevice is a SoloPi Agent session seen as a Device: observe pulls
// the observation's screenshot, dispatch hit-tests the observation tree on
// the host and sends one typed action.
type SoloPiDevice struct {
	client *agent.AgentClient
	id     agent.AgentIdentity
	opts   SoloPiOptions
	now    func() time.Time

	mu        sync.Mutex
	steps     int
	obs       map[string]*agent.Observation
	lastField *nodeRef
	closed    bool
	session   *agent.AgentSession
	// settled is the observation the device published after the last
	// successful action; it is the current one on the device, so the
	// next Observe uses it instead of asking for another.
	settled *agent.Observation
}

// StartSoloPiDevice starts an Agent session with a fresh owner token. The
// token stays inside the device value and is never printed.
func StartSoloPiDevice(ctx context.Context, client *agent.AgentClient, opts SoloPiOptions) (*SoloPiDevice, error) {
	if opts.StepIDPrefix == "" {
		opts.StepIDPrefix = "planner"
	}
	token := agent.NewOwnerToken()
	res, err := client.Start(ctx, agent.StartOptions{OwnerToken: token, Budget: opts.Budget, AckTimeout: opts.AckTimeout, PollInterval: opts.PollInterval})
	if err != nil {
		return nil, fmt.Errorf("start the SoloPi Agent session: %w", err)
	}
	d := &SoloPiDevice{client: client, id: res.Identity(token), opts: opts, now: time.Now, obs: map[string]*agent.Observation{}, session: res.Session}
	return d, nil
}

// SessionID is the Agent session's id (not secret).
func (d *SoloPiDevice) SessionID() string { return d.id.SessionID }

// Session is the last session snapshot seen.
func (d *SoloPiDevice) Session() *agent.AgentSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.session
}

// Mode is "solopi".
func (d *SoloPiDevice) Mode() string { return ModeSoloPi }

// Supports lists what protocol 1.0 can express.
func (d *SoloPiDevice) Supports(name string) (bool, string) {
	switch name {
	case action.Tap, action.LongPress, action.Swipe, action.Type, action.Back, action.Home, action.Wait:
		return true, ""
	case action.DoubleTap:
		return false, "this device has no Double Tap; use Tap or another action"
	}
	return false, name + " is not a device action"
}

// Observe pulls the screenshot of the current observation: the settled
// observation of the last action when there is one not yet used, else a
// new observation (which makes the previous observationId stale).
func (d *SoloPiDevice) Observe(ctx context.Context) (*Screen, error) {
	d.mu.Lock()
	settled := d.settled
	d.settled = nil
	d.mu.Unlock()
	if settled != nil {
		if s, err := d.screenOf(ctx, settled); err == nil {
			return s, nil
		}
		// An unusable settled screenshot is replaced by a new observation.
	}
	r, err := d.client.Observe(ctx, d.id)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &DeviceError{Code: deviceCodeOf(err, CodeScreenshotFailed), Message: "SoloPi observe failed", Err: err}
	}
	d.mu.Lock()
	d.session = r.Session
	d.mu.Unlock()
	return d.screenOf(ctx, r.Observation)
}

func (d *SoloPiDevice) screenOf(ctx context.Context, o *agent.Observation) (*Screen, error) {
	var s *Screen
	if d.opts.Screens != nil {
		var err error
		if s, err = d.opts.Screens(ctx, o); err != nil {
			return nil, err
		}
	} else {
		b, err := FetchScreenshot(ctx, d.client.Device(), d.id.SessionID, o)
		if err != nil {
			return nil, err
		}
		if s, err = NewScreen(b, d.now()); err != nil {
			return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation screenshot is not a usable PNG", Err: err}
		}
	}
	s.Ref = o.ObservationID
	d.mu.Lock()
	// Only the latest observations can be acted on; older ones are stale
	// on the device anyway.
	if len(d.obs) > 4 {
		d.obs = map[string]*agent.Observation{}
	}
	d.obs[o.ObservationID] = o
	d.mu.Unlock()
	return s, nil
}

// ErrStaleOnDevice is the device's stale_observation rejection: the tree
// changed after the host checked the pixels. Nothing was executed.
var ErrStaleOnDevice = errors.New("the device rejected the action: stale observation")

// Dispatch maps the command on the observation behind on and acts.
func (d *SoloPiDevice) Dispatch(ctx context.Context, cmd Command, on *Screen) (DispatchResult, error) {
	d.mu.Lock()
	obs := d.obs[on.Ref]
	last := d.lastField
	d.mu.Unlock()
	if cmd.Action == action.Wait && cmd.Duration > 5*time.Second {
		// The typed wait stops at 5 s; longer waits are host-side so the
		// session's bounded Wait keeps its meaning.
		if err := sleepCtx(ctx, cmd.Duration); err != nil {
			return DispatchResult{}, err
		}
		return DispatchResult{Dispatched: true, Detail: map[string]any{"waited_ms": cmd.Duration.Milliseconds(), "host_wait": true}}, nil
	}
	ta, err := MapToTyped(cmd, obs, last)
	if err != nil {
		return DispatchResult{}, err
	}
	d.mu.Lock()
	d.steps++
	stepID := fmt.Sprintf("%s-%03d", d.opts.StepIDPrefix, d.steps)
	d.mu.Unlock()
	req := agent.ActRequest{Identity: d.id, StepID: stepID, ObservationID: obs.ObservationID, Action: ta.Action, Args: ta.Args,
		Timeout: d.opts.ActionTimeout, PollInterval: d.opts.PollInterval}
	detail := map[string]any{"typed_action": ta.Action, "arguments": typedArgs(ta.Args), "stepId": stepID}
	res, err := d.client.Act(ctx, req)
	if res != nil && res.Session != nil {
		d.mu.Lock()
		d.session = res.Session
		d.mu.Unlock()
	}
	if err != nil {
		if ctx.Err() != nil {
			return DispatchResult{Detail: detail}, ctx.Err()
		}
		if res != nil && res.Receipt != nil {
			detail["receipt_status"] = res.Receipt.Status
			detail["receipt_error_code"] = res.Receipt.ErrorCode
			if res.Receipt.Status == agent.ReceiptRejected && res.Receipt.ErrorCode == protocol.ErrStaleObservation {
				return DispatchResult{Detail: detail}, ErrStaleOnDevice
			}
		}
		dispatched := res != nil && res.Receipt != nil && res.Receipt.Status != agent.ReceiptRejected
		return DispatchResult{Dispatched: dispatched, Detail: detail}, &DeviceError{Code: deviceCodeOf(err, CodeInputFailed), Message: "SoloPi " + ta.Action + " failed", Dispatched: dispatched, Err: err}
	}
	if ta.Tapped != nil && isTextField(ta.Tapped) {
		d.mu.Lock()
		d.lastField = refOf(ta.Tapped)
		d.mu.Unlock()
	}
	detail["receipt_status"] = res.Receipt.Status
	if so := res.SettledObservation(); so != nil {
		d.mu.Lock()
		d.settled = so
		d.mu.Unlock()
		detail["settled_observation"] = so.ObservationID
	}
	return DispatchResult{Dispatched: true, Detail: detail}, nil
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

// Close ends the session: end when ctx is alive, an exact cancel (with a
// fresh bounded context) when it is not.
func (d *SoloPiDevice) Close(ctx context.Context) error {
	return d.finish(ctx, ctx.Err() != nil)
}

// Cancel cancels exactly this session (after an interrupt or a timeout the
// host cancels what it started instead of ending it normally).
func (d *SoloPiDevice) Cancel(ctx context.Context) error { return d.finish(ctx, true) }

func (d *SoloPiDevice) finish(ctx context.Context, cancel bool) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	if cancel {
		cl := d.client.CancelExact(ctx, d.id)
		if cl.Error != "" {
			return fmt.Errorf("cancel the SoloPi Agent session: %s", cl.Error)
		}
		return nil
	}
	st, err := d.client.Status(ctx, d.id)
	if err == nil && st.IsTerminal() {
		d.mu.Lock()
		d.session = st
		d.mu.Unlock()
		return nil
	}
	cr, err := d.client.End(ctx, d.id, agent.ControlOptions{PollInterval: d.opts.PollInterval})
	if cr != nil && cr.Session != nil {
		d.mu.Lock()
		d.session = cr.Session
		d.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("end the SoloPi Agent session: %w", err)
	}
	return nil
}

func deviceCodeOf(err error, fallback string) string {
	var e *fault.Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return fallback
}
