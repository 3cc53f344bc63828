package sessions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// sessionSpec describes one session type for the shared flows.
type sessionSpec struct {
	// Name is the command family ("record", "stress") used in messages.
	Name string
	// Kind is the snapshot's `kind`.
	Kind    string
	Action  string
	Status  device.Params
	Machine *protocol.Machine
	// Validate is the strict host validator of one snapshot.
	Validate func(o device.WireObject) error
	// Latest is the detail key of the latest snapshot on a mismatch
	// ("latestRecording"), as the reference host names it.
	Latest string
	// Key is the reference host's key of the session's snapshot in an
	// error object ("recording", "performance"): the one another active
	// session and a failed stop are reported under.
	Key string
	// StopParams builds the stop (or cancel) mutation for a sessionId.
	StopParams func(id string) device.Params
	// Stoppable are the states in which a stop mutation is sent.
	Stoppable []protocol.State
	// Retryable enables the performance stop-retry rule (stopping with
	// stopRetryable:true re-sends the stop, at most 3 times).
	Retryable bool
}

// fetch reads and validates the current snapshot.
func (sp *sessionSpec) fetch(ctx context.Context, d *device.Device) (device.WireObject, error) {
	o, err := d.QuerySucceeded(ctx, sp.Action, sp.Status,
		"the "+sp.Name+" status has no boolean success", "the device refused the "+sp.Name+" status query")
	if err != nil {
		return o, err
	}
	if k, _ := o.Text("kind"); k != sp.Kind {
		return o, device.ContractError(fmt.Sprintf("the %s status has kind %q, want %q", sp.Name, o["kind"], sp.Kind), map[string]any(o))
	}
	if err := sp.Validate(o); err != nil {
		return o, err
	}
	return o, nil
}

// snapshotError is a business failure that keeps every snapshot field at
// the top level, as the reference host prints them, and uses the device's
// own error text as the message when it has one.
func snapshotError(code, msg string, o device.WireObject) *fault.Error {
	if t, _ := o.Text("error"); t != "" {
		msg = t
	}
	e := fault.New(fault.Failed, code, msg)
	for k, v := range o {
		switch k {
		case "success", "error", "errorCode", "userActionRequired", "requiredUserAction":
			// The error object's userActionRequired is the text of what the
			// user must do (the CLI contract), not the device's boolean.
			continue
		}
		e.With(k, v)
	}
	if ua, _ := o.Flag("userActionRequired"); ua {
		if text, _ := o.Text("requiredUserAction"); text != "" {
			e.WithUserAction(text)
		}
	}
	if t, _ := o.Text("error"); t != "" {
		e.With("deviceError", t)
	}
	return e
}

// mismatch is the exit-2 answer when the device's session is not the one
// the caller named: the latest snapshot is shown for diagnosis only.
func (sp *sessionSpec) mismatch(expected string, o device.WireObject) *fault.Error {
	return fault.Newf(fault.Failed, fault.CodeSessionMismatch, "the device's current %s session is not %s", sp.Name, expected).
		With("expectedSessionId", expected).With(sp.Latest, map[string]any(o)).With("sessionId", expected)
}

// status reads the snapshot; with expected set, a different (or
// absent) sessionId is exit 2 with the latest snapshot.
func (sp *sessionSpec) status(ctx context.Context, d *device.Device, expected string) (device.WireObject, error) {
	o, err := sp.fetch(ctx, d)
	if err != nil {
		return o, err
	}
	if expected != "" && device.SessionIDOf(o) != expected {
		return o, sp.mismatch(expected, o)
	}
	return o, nil
}

// statusResult checks sessionID and reads the snapshot as status does:
// the status commands print it as the device sent it.
func (sp *sessionSpec) statusResult(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	o, err := sp.status(ctx, d, sessionID)
	if err != nil {
		return nil, err
	}
	return o.Clone(), nil
}

// startPlan is one start of a session.
type startPlan struct {
	SessionID string
	Params    device.Params // the whole start mutation, sessionId included
	// Done are the states that end the wait (success or not).
	Done []protocol.State
	// Success are the states reported as success (exit 0).
	Success      []protocol.State
	Timeout      time.Duration
	Interval     time.Duration
	CleanupWait  time.Duration
	Phase        string // phase detail on timeout and interrupt
	TimeoutHint  func(last device.WireObject) string
	AlwaysStop   bool                            // stress: stop on every non-success
	Check        func(o device.WireObject) error // extra per-snapshot check of our session
	RefuseActive func(o device.WireObject) error // preflight refusal beyond `active`
	// Preflight runs after the active checks and before the mutation, for
	// refusals the device would only make invisibly (the host would time out).
	Preflight func(ctx context.Context) error
}

// sessionCleanup is the evidence of an exact stop or cancel sent on a failure,
// timeout or interrupt path (an error's `cleanup`). Its fields are in the
// order of their JSON names, the order the map it replaced printed.
type sessionCleanup struct {
	Attempted            bool   `json:"attempted"`
	CancelledBeforeStart *bool  `json:"cancelledBeforeStart,omitempty"`
	Error                string `json:"error,omitempty"`
	SessionID            string `json:"sessionId"`
	Success              bool   `json:"success"`
	TerminalState        string `json:"terminalState,omitempty"`
}

// start runs the start flow: preflight status (refuse when active), the
// mutation, then polling until our session reaches a Done state. The
// snapshot of the session that was current before the mutation may still
// show while we wait; any other sessionId means another client replaced us.
func (sp *sessionSpec) start(ctx context.Context, d *device.Device, p startPlan) (*StartResult, error) {
	pre, err := sp.fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	if device.StateOf(pre) != "" && sp.Machine.IsLive(device.StateOf(pre)) {
		return nil, fault.Newf(fault.Failed, fault.CodeSessionActive, "a %s session is already active on the device; nothing was started", sp.Name).
			With(sp.Latest, map[string]any(pre)).With(sp.Key, map[string]any(pre))
	}
	if p.RefuseActive != nil {
		if err := p.RefuseActive(pre); err != nil {
			return nil, err
		}
	}
	if p.Preflight != nil {
		if err := p.Preflight(ctx); err != nil {
			return nil, err
		}
	}
	previous := device.SessionIDOf(pre)
	if err := d.Mutate(ctx, sp.Action, p.Params); err != nil {
		if fault.IsInterrupt(err) {
			return nil, sp.abandon(ctx, d, p, nil, err)
		}
		if p.AlwaysStop {
			return nil, sp.abandon(ctx, d, p, nil, err)
		}
		return nil, err
	}
	var last, fetched device.WireObject
	seen := false
	err = device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: p.Timeout, Interval: p.Interval}, func(ctx context.Context) (bool, error) {
		o, err := sp.fetch(ctx, d)
		if err != nil {
			return false, err
		}
		fetched = o
		id := device.SessionIDOf(o)
		switch {
		case id == p.SessionID:
			if seen && !device.Reachable(sp.Machine, device.StateOf(last), device.StateOf(o)) {
				return false, device.ContractError(fmt.Sprintf("the %s session went from %s back to %s", sp.Name, device.StateOf(last), device.StateOf(o)), map[string]any(o))
			}
			if !seen || device.StateOf(last) != device.StateOf(o) {
				d.Options().Progress.Report(device.Event{Phase: "session", Message: fmt.Sprintf("%s %s: %s", sp.Name, p.SessionID, device.StateOf(o)), State: string(device.StateOf(o))})
				if ua, _ := o.Flag("userActionRequired"); ua {
					if text, _ := o.Text("requiredUserAction"); text != "" {
						d.Options().Progress.Reportf("waiting-for-user", "waiting for the tester on the device: %s", text)
					}
				}
			}
			seen, last = true, o
			if p.Check != nil {
				if err := p.Check(o); err != nil {
					return false, err
				}
			}
			return slices.Contains(p.Done, device.StateOf(o)), nil
		case !seen && id == previous:
			return false, nil
		case seen && id == "":
			return false, snapshotError(fault.CodeSessionLost,
				"our "+sp.Name+" session vanished from the device (was SoloPi restarted?); it is lost, not finished", o).
				With("sessionId", p.SessionID).With("phase", p.Phase)
		default:
			return false, fault.Newf(fault.Failed, fault.CodeSessionReplaced, "another %s session replaced ours on the device", sp.Name).
				With("sessionId", p.SessionID).With(sp.Latest, map[string]any(o)).With("phase", p.Phase)
		}
	})
	if err != nil {
		if errors.Is(err, device.ErrPollTimeout) {
			msg := fmt.Sprintf("the %s session did not reach %s in time", sp.Name, joinStates(p.Done))
			if p.TimeoutHint != nil && last != nil {
				if h := p.TimeoutHint(last); h != "" {
					msg += "; " + h
				}
			}
			// lastStatus is solopi-ai's: the last snapshot read, whoever's
			// (null when none could be read); ours is never seen.
			var lastStatus any
			if last == nil && fetched != nil {
				lastStatus = map[string]any(fetched)
			}
			err = sp.transportNote(fault.New(fault.Timeout, fault.CodeSessionStartTimeout, msg).With("lastStatus", lastStatus))
		}
		var oe *fault.Error
		replaced := errors.As(err, &oe) && (oe.Code == fault.CodeSessionReplaced || oe.Code == fault.CodeSessionLost)
		if replaced && !p.AlwaysStop {
			// Our session is gone or never existed: a stop with our id
			// could only be refused by the device, so nothing is sent.
			return nil, err
		}
		if last != nil && sp.Machine.IsTerminal(device.StateOf(last)) && !p.AlwaysStop {
			return nil, err
		}
		return nil, sp.abandon(ctx, d, p, last, err)
	}
	if slices.Contains(p.Success, device.StateOf(last)) {
		return &StartResult{Snapshot: last.Clone(), Success: true}, nil
	}
	fail := snapshotError(fault.CodeSessionFailed,
		fmt.Sprintf("the %s session ended in %s instead of %s", sp.Name, device.StateOf(last), joinStates(p.Success)), last)
	if p.AlwaysStop {
		return nil, sp.abandon(ctx, d, p, last, fail)
	}
	return nil, fail
}

// abandon stops exactly the session we started, with a fresh short
// context (the command's own may be cancelled), and attaches the evidence
// to the error: sessionId, phase, cleanup, the last snapshot.
func (sp *sessionSpec) abandon(ctx context.Context, d *device.Device, p startPlan, last device.WireObject, cause error) error {
	cl := sp.exactStop(ctx, d, p.SessionID, p.CleanupWait, p.Interval, p.AlwaysStop)
	e := fault.From(cause)
	e.With("sessionId", p.SessionID).With("phase", p.Phase).With("cleanup", cl)
	if last != nil {
		e.With("lastStatus", map[string]any(last))
	}
	return e
}

// transportNote adds solopi-ai's lastTransportError to a performance
// wait that timed out: null, since a transport error ends our wait at once
// instead of being tolerated.
func (sp *sessionSpec) transportNote(e *fault.Error) *fault.Error {
	if sp.Kind == "performance" {
		e.With("lastTransportError", nil)
	}
	return e
}

// exactStop sends the stop mutation for id and waits up to wait for our
// session to be terminal. It never touches a session with another id. With
// force the stop is sent even when our session already looks terminal
// (stress: a load must never survive a failed start, and the device
// answers a stop of a terminal session with its snapshot).
func (sp *sessionSpec) exactStop(ctx context.Context, d *device.Device, id string, wait, interval time.Duration, force bool) sessionCleanup {
	cctx, cancel := device.Cleanup(ctx, wait)
	defer cancel()
	cl := sessionCleanup{SessionID: id}
	cur, err := sp.fetch(cctx, d)
	if err == nil && !force && device.SessionIDOf(cur) == id && sp.Machine.IsTerminal(device.StateOf(cur)) {
		// Already over (auto-stop, failure): report it, send nothing.
		cl.Success = true
		cl.TerminalState = string(device.StateOf(cur))
		if b, ok := cur.Flag("cancelledBeforeStart"); ok {
			cl.CancelledBeforeStart = &b
		}
		return cl
	}
	if err == nil && device.SessionIDOf(cur) != id && device.SessionIDOf(cur) != "" && sp.Machine.IsLive(device.StateOf(cur)) {
		// Someone else's live session: never stop it.
		cl.Error = "the device's active session is not ours; nothing was sent"
		return cl
	}
	cl.Attempted = true
	if err := d.Mutate(cctx, sp.Action, sp.StopParams(id)); err != nil {
		cl.Error = sessionErrText(err)
		return cl
	}
	if interval <= 0 || interval > 250*time.Millisecond {
		interval = 250 * time.Millisecond
	}
	var last device.WireObject
	retries := 0
	perr := device.PollUntil(cctx, device.PollOptions{Clock: d.Clock(), Timeout: wait, Interval: interval}, func(ctx context.Context) (bool, error) {
		o, err := sp.fetch(ctx, d)
		if err != nil {
			return false, err
		}
		if device.SessionIDOf(o) != id {
			return false, fmt.Errorf("the device no longer shows our session")
		}
		last = o
		if r, _ := o.Flag("stopRetryable"); sp.Retryable && r && device.StateOf(o) == protocol.SessionStopping && retries < 3 {
			// Incomplete cleanup of our own lease: the same bounded
			// re-send as the stop commands.
			retries++
			if err := d.Mutate(ctx, sp.Action, sp.StopParams(id)); err != nil {
				return false, err
			}
		}
		return sp.Machine.IsTerminal(device.StateOf(o)), nil
	})
	if last != nil {
		cl.TerminalState = string(device.StateOf(last))
		if b, ok := last.Flag("cancelledBeforeStart"); ok {
			cl.CancelledBeforeStart = &b
		}
	}
	switch {
	case perr == nil:
		cl.Success = true
	case errors.Is(perr, device.ErrPollTimeout):
		cl.TerminalState = ""
		cl.Error = "the session did not become terminal within the cleanup budget"
	default:
		cl.Error = sessionErrText(perr)
	}
	return cl
}

// stopPlan is one stop of our session.
type stopPlan struct {
	SessionID string
	Timeout   time.Duration
	Interval  time.Duration
	Phase     string
	// Success are the terminal states reported as success.
	Success []protocol.State
	// RecoverUnreachable: when the preflight status cannot reach the
	// control server, send the stop blind and keep polling (perf-stop).
	RecoverUnreachable bool
	// Failure classifies a terminal non-success state.
	FailureCode string
}

// stop runs the stop flow for exactly our session.
func (sp *sessionSpec) stop(ctx context.Context, d *device.Device, p stopPlan) (*StopResult, error) {
	var f stopFields
	pre, err := sp.status(ctx, d, p.SessionID)
	blind := false
	if err != nil {
		var oe *fault.Error
		if !(p.RecoverUnreachable && errors.As(err, &oe) && oe.Code == fault.CodeControlServiceUnreachable) {
			return nil, err
		}
		blind = true
		f.RecoveredWithoutPreflight = true
	}
	clk := d.Clock()
	deadline := clk.Now().Add(p.Timeout)
	stops := 0
	send := func(ctx context.Context) error {
		// The activity call itself is bounded by what is left of the
		// budget and never more than 30 s (the reference host's limit).
		left := min(deadline.Sub(clk.Now()), 30*time.Second)
		if left <= 0 {
			return device.ErrPollTimeout
		}
		mctx, cancel := context.WithTimeout(ctx, left)
		defer cancel()
		stops++
		err := d.Mutate(mctx, sp.Action, sp.StopParams(p.SessionID))
		if err != nil && ctx.Err() == nil && mctx.Err() != nil {
			return device.ErrPollTimeout
		}
		return err
	}
	switch {
	case blind:
		if err := send(ctx); err != nil {
			return nil, sp.stopError(err, p, nil, stops, f)
		}
	case sp.Machine.IsTerminal(device.StateOf(pre)):
		f.AlreadyTerminal = true
		return sp.stopResult(pre, p, stops, f)
	case slices.Contains(sp.Stoppable, device.StateOf(pre)):
		if err := send(ctx); err != nil {
			return nil, sp.stopError(err, p, pre, stops, f)
		}
	}
	last := pre
	retries := 0
	err = device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: deadline.Sub(clk.Now()), Interval: p.Interval}, func(ctx context.Context) (bool, error) {
		o, err := sp.fetch(ctx, d)
		if err != nil {
			var oe *fault.Error
			if blind && errors.As(err, &oe) && oe.Code == fault.CodeControlServiceUnreachable {
				return false, nil
			}
			return false, err
		}
		if device.SessionIDOf(o) != p.SessionID {
			if device.SessionIDOf(o) == "" {
				return false, snapshotError(fault.CodeSessionLost,
					"our "+sp.Name+" session vanished from the device (was SoloPi restarted?); it is lost, not stopped", o).
					With("sessionId", p.SessionID).With("phase", p.Phase)
			}
			return false, sp.mismatch(p.SessionID, o).With("phase", p.Phase)
		}
		if last != nil && !device.Reachable(sp.Machine, device.StateOf(last), device.StateOf(o)) {
			return false, device.ContractError(fmt.Sprintf("the %s session went from %s back to %s", sp.Name, device.StateOf(last), device.StateOf(o)), map[string]any(o))
		}
		last = o
		if sp.Machine.IsTerminal(device.StateOf(o)) {
			return true, nil
		}
		if sp.Retryable && device.StateOf(o) == protocol.SessionStopping {
			if r, _ := o.Flag("stopRetryable"); r {
				if retries >= 3 {
					return false, snapshotError(fault.CodeStopRetryLimit,
						"the device still reports incomplete cleanup after 3 re-sent stops", o).With("stopRetries", retries)
				}
				retries++
				if err := send(ctx); err != nil {
					return false, err
				}
			}
		}
		return false, nil
	})
	f.StopRetries = &retries
	if err != nil {
		return nil, sp.stopError(err, p, last, stops, f)
	}
	return sp.stopResult(last, p, stops, f)
}

func (sp *sessionSpec) stopResult(o device.WireObject, p stopPlan, stops int, f stopFields) (*StopResult, error) {
	f.StopRequests = stops
	if slices.Contains(p.Success, device.StateOf(o)) {
		f.Success = true
		return &StopResult{Snapshot: o.Clone(), stopFields: f}, nil
	}
	code := p.FailureCode
	if code == "" {
		code = fault.CodeSessionNotStopped
	}
	e := snapshotError(code, fmt.Sprintf("the %s session ended in %s, not %s", sp.Name, device.StateOf(o), joinStates(p.Success)), o)
	return nil, f.addTo(e)
}

func (sp *sessionSpec) stopError(err error, p stopPlan, last device.WireObject, stops int, f stopFields) error {
	if errors.Is(err, device.ErrPollTimeout) {
		err = sp.transportNote(fault.Newf(fault.Timeout, fault.CodeSessionStopTimeout, "the %s session did not reach a terminal state in time; the stop was sent %d time(s)", sp.Name, stops))
	}
	f.StopRequests = stops
	e := f.addTo(fault.From(err)).With("sessionId", p.SessionID).With("phase", p.Phase)
	if last != nil {
		e.With(sp.Key, map[string]any(last))
		if e.Kind == fault.Timeout {
			e.With("lastStatus", map[string]any(last))
		}
	}
	return e
}

func joinStates(s []protocol.State) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, "|")
}

// CheckSessionID refuses, before any device contact, a --session-id that
// no SoloPi session could have (exit 3).
func CheckSessionID(id string) error {
	if id == "" {
		return nil
	}
	if !protocol.ValidID(id, 128) {
		return fault.Usage(fault.CodeInvalidSessionID, "--session-id must be 1-128 letters, digits, '.', '_' or '-' starting with a letter or digit").
			With("sessionId", id)
	}
	return nil
}

// RequireSessionID is CheckSessionID for commands that need one.
func RequireSessionID(id string) error {
	if id == "" {
		return fault.Usage(fault.CodeInvalidSessionID, "--session-id is required")
	}
	return CheckSessionID(id)
}

// SessionTimings are the wait budgets of one command.
type SessionTimings struct {
	Timeout  time.Duration
	Interval time.Duration
}

func (t SessionTimings) or(timeout, interval time.Duration) SessionTimings {
	if t.Timeout <= 0 {
		t.Timeout = timeout
	}
	if t.Interval <= 0 {
		t.Interval = interval
	}
	return t
}

// sessionErrText renders an error for a cleanup report.
func sessionErrText(err error) string {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code + ": " + e.Message
	}
	return err.Error()
}
