// Package agentdevice is the planner's device over the SoloPi Agent
// protocol: a Device that drives an Agent session (observe pulls the
// observation's screenshot; dispatch hit-tests the observation tree on the
// host and sends one typed action on the node found), and the mapping of
// planner commands onto typed actions on their own (NodeMapper) for callers
// that drive the session themselves. The tree never leaves the host: the
// model only ever gives a point.
package agentdevice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// fetchScreenshot pulls an observation's screenshot into memory and checks
// it against the observation's screenshotSha256. Only files the session
// itself published (inside agent-sessions/<sessionId>/) are pulled.
func fetchScreenshot(ctx context.Context, dev *device.Device, sessionID string, obs *agent.Observation) ([]byte, error) {
	if obs.ScreenshotError != "" {
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "the device has no screenshot for this observation: " + obs.ScreenshotError}
	}
	p := obs.ScreenshotPath
	dir, name := path.Split(p)
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || !strings.HasSuffix(dir, "/agent-sessions/"+sessionID+"/") ||
		!strings.HasPrefix(name, "observation-") || !strings.HasSuffix(name, ".png") {
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "the observation's screenshot path is not inside this session's directory"}
	}
	var buf bytes.Buffer
	dg, err := dev.Pull(ctx, p, &buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "cannot pull the observation screenshot", Err: err}
	}
	if obs.ScreenshotSHA256 != "" && !strings.EqualFold(dg.SHA256, obs.ScreenshotSHA256) {
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "the pulled screenshot does not match the observation's screenshotSha256"}
	}
	return buf.Bytes(), nil
}

// screenSource loads the screenshot of a SoloPi observation.
type screenSource func(ctx context.Context, obs *agent.Observation) (*agentloop.Screen, error)

// Options configure the Agent session device.
type Options struct {
	Budget        agent.AgentBudget
	AckTimeout    time.Duration
	ActionTimeout time.Duration
	PollInterval  time.Duration
	// StepIDPrefix names steps <prefix>-001, … (default "planner").
	StepIDPrefix string
	// Screens loads an observation's screenshot; nil pulls the file the
	// device published (FetchScreenshot).
	Screens screenSource
}

// Device is a SoloPi Agent session seen as an agentloop.Device: observe
// pulls the observation's screenshot, dispatch hit-tests the observation
// tree on the host and sends one typed action.
type Device struct {
	client *agent.AgentClient
	id     agent.AgentIdentity
	opts   Options
	clk    clock.Clock

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

// Start starts an Agent session with a fresh owner token. The
// token stays inside the device value and is never printed.
func Start(ctx context.Context, client *agent.AgentClient, opts Options) (*Device, error) {
	if opts.StepIDPrefix == "" {
		opts.StepIDPrefix = "planner"
	}
	token := agent.NewOwnerToken()
	res, err := client.Start(ctx, agent.StartOptions{OwnerToken: token, Budget: opts.Budget, AckTimeout: opts.AckTimeout, PollInterval: opts.PollInterval})
	if err != nil {
		return nil, fmt.Errorf("start the SoloPi Agent session: %w", err)
	}
	d := &Device{client: client, id: res.Identity(token), opts: opts, clk: clock.System, obs: map[string]*agent.Observation{}, session: res.Session}
	return d, nil
}

// SessionID is the Agent session's id (not secret).
func (d *Device) SessionID() string { return d.id.SessionID }

// Session is the last session snapshot seen.
func (d *Device) Session() *agent.AgentSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.session
}

// Mode is "solopi".
func (d *Device) Mode() string { return Capabilities{}.Mode() }

// Supports lists what protocol 1.0 can express.
func (d *Device) Supports(name string) (bool, string) { return Capabilities{}.Supports(name) }

// Observe pulls the screenshot of the current observation: the settled
// observation of the last action when there is one not yet used, else a
// new observation (which makes the previous observationId stale).
func (d *Device) Observe(ctx context.Context) (*agentloop.Screen, error) {
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
		return nil, &agentloop.DeviceError{Code: deviceCodeOf(err, fault.CodeScreenshotFailed), Message: "SoloPi observe failed", Err: err}
	}
	d.mu.Lock()
	d.session = r.Session
	d.mu.Unlock()
	return d.screenOf(ctx, r.Observation)
}

func (d *Device) screenOf(ctx context.Context, o *agent.Observation) (*agentloop.Screen, error) {
	var s *agentloop.Screen
	if d.opts.Screens != nil {
		var err error
		if s, err = d.opts.Screens(ctx, o); err != nil {
			return nil, err
		}
	} else {
		b, err := fetchScreenshot(ctx, d.client.Device(), d.id.SessionID, o)
		if err != nil {
			return nil, err
		}
		if s, err = agentloop.NewScreen(b, d.clk.Now()); err != nil {
			return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "the observation screenshot is not a usable PNG", Err: err}
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

// Dispatch maps the command on the observation behind on and acts.
func (d *Device) Dispatch(ctx context.Context, cmd agentloop.Command, on *agentloop.Screen) (agentloop.DispatchResult, error) {
	d.mu.Lock()
	obs := d.obs[on.Ref]
	last := d.lastField
	d.mu.Unlock()
	if cmd.Action == action.Wait && cmd.Duration > 5*time.Second {
		// The typed wait stops at 5 s; longer waits are host-side so the
		// session's bounded Wait keeps its meaning.
		if err := d.clk.Sleep(ctx, cmd.Duration); err != nil {
			return agentloop.DispatchResult{}, err
		}
		return agentloop.DispatchResult{Dispatched: true, Detail: map[string]any{"waited_ms": cmd.Duration.Milliseconds(), "host_wait": true}}, nil
	}
	ta, err := mapToTyped(cmd, obs, last)
	if err != nil {
		return agentloop.DispatchResult{}, err
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
			return agentloop.DispatchResult{Detail: detail}, ctx.Err()
		}
		if res != nil && res.Receipt != nil {
			detail["receipt_status"] = res.Receipt.Status
			detail["receipt_error_code"] = res.Receipt.ErrorCode
			if res.Receipt.Status == agent.ReceiptRejected && res.Receipt.ErrorCode == protocol.ErrStaleObservation {
				return agentloop.DispatchResult{Detail: detail}, agentloop.ErrStaleOnDevice
			}
		}
		dispatched := res != nil && res.Receipt != nil && res.Receipt.Status != agent.ReceiptRejected
		return agentloop.DispatchResult{Dispatched: dispatched, Detail: detail}, &agentloop.DeviceError{Code: deviceCodeOf(err, fault.CodeInputFailed), Message: "SoloPi " + ta.Action + " failed", Dispatched: dispatched, Err: err}
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
	return agentloop.DispatchResult{Dispatched: true, Detail: detail}, nil
}

// Close ends the session: end when ctx is alive, an exact cancel (with a
// fresh bounded context) when it is not.
func (d *Device) Close(ctx context.Context) error {
	return d.finish(ctx, ctx.Err() != nil)
}

// Cancel cancels exactly this session (after an interrupt or a timeout the
// host cancels what it started instead of ending it normally).
func (d *Device) Cancel(ctx context.Context) error { return d.finish(ctx, true) }

func (d *Device) finish(ctx context.Context, cancel bool) error {
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
