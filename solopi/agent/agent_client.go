package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// Host defaults of the Agent commands (§21).
const (
	DefaultAgentAckTimeout    = 15 * time.Second
	DefaultAgentActionTimeout = 15 * time.Second
	DefaultAgentControlWait   = 15 * time.Second
	DefaultAgentPollInterval  = 200 * time.Millisecond
	// AgentCleanupTimeout bounds the exact cancel sent after a timeout or an
	// interrupt (the reference host's 10 s).
	AgentCleanupTimeout = 10 * time.Second
	// agentQueryTimeout bounds one Agent query: observe may block ~5.5 s on
	// root acquisition plus the screenshot (§1.1), more than the default
	// 5 s request timeout.
	agentQueryTimeout = 15 * time.Second
	// restoreTimeout bounds bringing the app under test back after an
	// interrupted mutation.
	restoreTimeout = 5 * time.Second
)

// AgentOptions configure an AgentClient.
type AgentOptions struct {
	// Foreground is the activity the session bootstrap recorded before it
	// launched SoloPi (Session.Foreground). It is restored after a mutation
	// when the focus read just before that mutation is SoloPi itself or
	// cannot be read.
	Foreground string
	// PollInterval is the longest pause between polls (default 200 ms).
	PollInterval time.Duration
	// QueryTimeout bounds one Agent query (default 15 s, never below the
	// device channel's own request timeout).
	QueryTimeout time.Duration
}

// AgentClient drives dynamic Agent sessions (protocol 1.0) over one device:
// mutations through the protected activity with the foreground restored
// right after, queries over HTTP, and polling until the device publishes
// the outcome. It holds no session state of its own: every call names its
// session, so one client may serve several sessions in turn.
type AgentClient struct {
	dev  *device.Device
	qdev *device.Device // same transport, longer request timeout for Agent queries
	opts AgentOptions
}

// NewAgentClient returns a client over d.
func NewAgentClient(d *device.Device, opts AgentOptions) *AgentClient {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultAgentPollInterval
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = agentQueryTimeout
	}
	qo := d.Options()
	if opts.QueryTimeout > qo.RequestTimeout {
		qo.RequestTimeout = opts.QueryTimeout
	}
	return &AgentClient{dev: d, qdev: device.NewDevice(d.Transport(), qo), opts: opts}
}

// Device returns the channel the client uses.
func (c *AgentClient) Device() *device.Device { return c.dev }

// Close releases idle HTTP streams.
func (c *AgentClient) Close() { c.qdev.Close() }

func (c *AgentClient) poll(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return c.opts.PollInterval
}

// agentEnvelope is every agent answer (E1 errors or success payloads).
type agentEnvelope struct {
	Success      *bool             `json:"success"`
	ErrorCode    string            `json:"errorCode"`
	Error        string            `json:"error"`
	Session      json.RawMessage   `json:"session"`
	Observation  json.RawMessage   `json:"observation"`
	Receipt      json.RawMessage   `json:"receipt"`
	Events       []json.RawMessage `json:"events"`
	TimelinePath string            `json:"timelinePath"`
	Accepted     *bool             `json:"accepted"`
	raw          json.RawMessage
}

// query runs agent?type=typ. A device refusal becomes an exit-2 error whose
// Code is the device's errorCode; transport failures pass through.
func (c *AgentClient) query(ctx context.Context, typ string, p device.Params) (*agentEnvelope, error) {
	b, err := c.qdev.QueryRaw(ctx, protocol.ActionAgent, append(device.P(protocol.ParamType, typ), p...))
	if err != nil {
		return nil, err
	}
	var env agentEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fault.Wrap(fault.Transport, device.CodeInvalidResponse, "the device sent a malformed Agent answer", err).With("type", typ)
	}
	env.raw = b
	if env.Success == nil {
		return nil, device.ContractError("the Agent answer has no success field", nil).With("type", typ)
	}
	if !*env.Success {
		code := env.ErrorCode
		if code == "" {
			code = device.CodeDeviceRejected
		}
		msg := env.Error
		if msg == "" {
			msg = "the device refused the Agent request"
		}
		return &env, fault.New(fault.Failed, code, msg).With("type", typ)
	}
	return &env, nil
}

// deviceCode returns the device errorCode of a refusal, or "".
func deviceCode(err error) string {
	var e *fault.Error
	if errors.As(err, &e) && e.Kind == fault.Failed {
		return e.Code
	}
	return ""
}

// ForegroundRestore reports what happened to the app under test around one
// mutation.
type ForegroundRestore struct {
	Component string `json:"component,omitempty"`
	Restored  bool   `json:"restored"`
	Error     string `json:"error,omitempty"`
}

func (c *AgentClient) isSoloPi(comp string) bool {
	return strings.HasPrefix(comp, c.dev.Package()+"/")
}

// mutate sends agent?type=typ through the protected activity and then
// brings back the activity that was in front before: the device refuses
// SoloPi's own window as an observation or action root and waits only ~5 s
// for a controllable one (§1.2, §4.7).
func (c *AgentClient) mutate(ctx context.Context, typ string, p device.Params) (ForegroundRestore, error) {
	var fr ForegroundRestore
	fg, err := c.dev.Foreground(ctx)
	if err != nil {
		if fault.IsInterrupt(err) {
			return fr, err
		}
		// An unreadable focus is not a reason to skip the mutation; the
		// bootstrap's recorded activity is the fallback.
		fg = ""
	}
	if fg == "" || c.isSoloPi(fg) {
		fg = c.opts.Foreground
	}
	if c.isSoloPi(fg) {
		fg = ""
	}
	fr.Component = fg
	mErr := c.dev.Mutate(ctx, protocol.ActionAgent, append(device.P(protocol.ParamType, typ), p...))
	if fg != "" {
		// The restore must happen even when the caller was interrupted
		// right after am start: otherwise SoloPi stays on top.
		rctx, cancel := device.Cleanup(ctx, restoreTimeout)
		if rErr := c.dev.RestoreForeground(rctx, fg); rErr != nil {
			fr.Error = errorText(rErr)
		} else {
			fr.Restored = true
		}
		cancel()
	}
	if mErr != nil {
		if e, ok := mErr.(*fault.Error); ok {
			e.With("type", typ)
		}
		return fr, mErr
	}
	return fr, nil
}

// errorText renders an error for a detail field without its raw cause.
func errorText(err error) string {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code + ": " + e.Message
	}
	return err.Error()
}

// AgentCapabilities is agent?type=capabilities.
type AgentCapabilities struct {
	ProtocolVersion   string          `json:"protocolVersion"`
	Queries           []string        `json:"queries"`
	Commands          []string        `json:"commands"`
	Actions           []string        `json:"actions"`
	ArbitraryShell    bool            `json:"arbitraryShell"`
	MutationTransport string          `json:"mutationTransport"`
	QueryTransport    string          `json:"queryTransport"`
	Raw               json.RawMessage `json:"-"`
}

// Capabilities queries the Agent capabilities and checks the protocol.
func (c *AgentClient) Capabilities(ctx context.Context) (*AgentCapabilities, error) {
	env, err := c.query(ctx, protocol.AgentCapabilities, nil)
	if err != nil {
		return nil, err
	}
	var caps AgentCapabilities
	if err := json.Unmarshal(env.raw, &caps); err != nil {
		return nil, fault.Wrap(fault.Transport, device.CodeContractViolate, "the device sent malformed Agent capabilities", err)
	}
	if caps.ProtocolVersion != protocol.AgentProtocolVersion {
		return nil, fault.Newf(fault.Transport, device.CodeProtocolMismatch, "SoloPi speaks Agent protocol %q; this CLI needs %s",
			device.Truncate(caps.ProtocolVersion, 20), protocol.AgentProtocolVersion).
			With("protocolVersion", caps.ProtocolVersion).With("expectedProtocolVersion", protocol.AgentProtocolVersion)
	}
	caps.Raw = env.raw
	return &caps, nil
}

// AgentCleanup is the evidence of the exact cancel sent after a timeout or
// an interrupt: whether it was sent, whether the session is terminal now,
// and in which state.
type AgentCleanup struct {
	Attempted bool   `json:"attempted"`
	Success   bool   `json:"success"`
	State     string `json:"state,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
}

// StartOptions configure Start.
type StartOptions struct {
	OwnerToken OwnerToken
	Budget     AgentBudget
	// AckTimeout bounds the wait for the first observation (default 15 s).
	AckTimeout   time.Duration
	PollInterval time.Duration
}

// StartResult is a started session with its first observation.
type StartResult struct {
	Session      *AgentSession
	Observation  *Observation
	TimelinePath string
	Foreground   ForegroundRestore
	// Raw is the start-status answer that carried the first observation.
	Raw json.RawMessage
}

// Identity returns the identity of the started session.
func (r *StartResult) Identity(token OwnerToken) AgentIdentity {
	return AgentIdentity{SessionID: r.Session.SessionID, OwnerToken: token}
}

// startStatus is one start-status answer: (nil, nil, nil) while the device
// has no session for the token.
func (c *AgentClient) startStatus(ctx context.Context, token OwnerToken) (*agentEnvelope, *AgentSession, error) {
	env, err := c.query(ctx, protocol.AgentStartStatus, device.P(protocol.ParamOwnerToken, token.Reveal()))
	if err != nil {
		if deviceCode(err) == protocol.ErrSessionNotFound {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	s, err := ParseAgentSession(env.Session)
	if err != nil {
		return nil, nil, err
	}
	return env, s, nil
}

// Start starts a session and returns it with its first observation: the
// device does not wait for that observation (§22 item 3), so Start polls
// start-status until it exists. A session that is terminal at once is an
// exit-2 error. On timeout or interrupt the exact session (its sessionId and
// this ownerToken) is cancelled with a fresh, bounded context, and the
// error carries cleanup evidence.
func (c *AgentClient) Start(ctx context.Context, o StartOptions) (*StartResult, error) {
	if o.OwnerToken.IsZero() {
		return nil, fault.Usage(CodeMissingOwnerToken, "an owner token is required to start an Agent session")
	}
	if err := o.Budget.Validate(); err != nil {
		return nil, err
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = DefaultAgentAckTimeout
	}
	// A session already owned by this token would answer start-status
	// too; remember it so that an old session is never taken for the new
	// one, and refuse at once when it is still live (the device would
	// reject the start invisibly with session_conflict).
	_, prev, err := c.startStatus(ctx, o.OwnerToken)
	if err != nil {
		return nil, err
	}
	if prev.IsLive() {
		return nil, fault.New(fault.Failed, protocol.ErrSessionConflict,
			"a live Agent session already belongs to this owner token; end or cancel it, or use a new token").
			With("sessionId", prev.SessionID).With("session", prev.Summary())
	}
	prevID := ""
	if prev != nil {
		prevID = prev.SessionID
	}
	// A replay holds the shared device-control lease: the device would
	// refuse the start invisibly (lease_conflict, §4.12) and the host would
	// only time out. The replay snapshot says so up front; when it cannot
	// be read, the start goes ahead and the device decides.
	if rs, err := replay.FetchReplayStatus(ctx, c.dev); err == nil && rs.Active {
		return nil, fault.New(fault.Failed, protocol.ErrLeaseConflict,
			"a replay holds the device; an Agent session cannot start until it ends").
			With("activeRun", rs.Object).
			WithUserAction("Wait for the replay to finish (solopi status) or cancel it with its runId (solopi cancel --run-id).")
	}
	p := device.P(protocol.ParamOwnerToken, o.OwnerToken.Reveal())
	p = append(p, o.Budget.params()...)
	fr, err := c.mutate(ctx, protocol.AgentStart, p)
	if err != nil {
		if fault.IsInterrupt(err) {
			return nil, c.abortStart(ctx, err, o.OwnerToken, prevID, "")
		}
		return nil, err
	}
	res := &StartResult{Foreground: fr}
	var seen string
	var last map[string]any
	pollErr := device.PollUntil(ctx, device.PollOptions{Clock: c.dev.Clock(), Timeout: o.AckTimeout, Interval: c.poll(o.PollInterval)}, func(ctx context.Context) (bool, error) {
		env, s, err := c.startStatus(ctx, o.OwnerToken)
		if err != nil || s == nil || s.SessionID == "" || s.SessionID == prevID {
			return false, err
		}
		seen = s.SessionID
		last = s.Summary()
		if s.IsTerminal() {
			e := fault.Newf(fault.Failed, CodeSessionTerminal, "the Agent session ended before its first observation (%s)", s.TerminalReason).
				With("sessionId", s.SessionID).With("session", s).With("terminalReason", s.TerminalReason).
				With("timelinePath", env.TimelinePath)
			if ua := startUserAction(s.TerminalReason); ua != "" {
				e.WithUserAction(ua)
			}
			return false, e
		}
		if absent(env.Observation) {
			return false, nil
		}
		obs, err := ParseObservation(env.Observation)
		if err != nil {
			return false, err
		}
		res.Session, res.Observation, res.TimelinePath, res.Raw = s, obs, env.TimelinePath, env.raw
		if res.TimelinePath == "" {
			res.TimelinePath = obs.TimelinePath
		}
		return true, nil
	})
	switch {
	case pollErr == nil:
		return res, nil
	case errors.Is(pollErr, device.ErrPollTimeout):
		e := fault.New(fault.Timeout, CodeAgentStartTimeout, "SoloPi did not publish the first observation within --ack-timeout").
			With("ackTimeoutSeconds", o.AckTimeout.Seconds()).With("foreground", fr).
			WithUserAction("Check that no other replay or Agent session holds the device (agent-status / status), that SoloPi's " +
				"accessibility service is on, and that the app under test is in front; then start again.")
		if last != nil {
			e.With("lastStatus", last)
		}
		return nil, c.abortStart(ctx, e, o.OwnerToken, prevID, seen)
	case fault.IsInterrupt(pollErr):
		return nil, c.abortStart(ctx, pollErr, o.OwnerToken, prevID, seen)
	}
	return nil, pollErr
}

// startUserAction says what a tester can do about a session that failed
// while capturing its first observation.
func startUserAction(reason string) string {
	switch reason {
	case protocol.ErrPageRootUnavailable, protocol.ErrObservationInterrupted:
		return "Unlock the phone and bring the app under test to the front (not SoloPi, not the launcher or a system dialog), then start again."
	case protocol.ErrTouchServiceUnavailable, protocol.ErrOperationServiceUnavailable:
		return "Open SoloPi, enable its accessibility service and grant its ADB permission (solopi doctor lists what is missing), then start again."
	}
	return ""
}

// abortStart cancels the session this Start created, identified by its
// sessionId when known and otherwise looked up by our own token (never the
// previous session of that token), and attaches the cleanup evidence.
func (c *AgentClient) abortStart(ctx context.Context, cause error, token OwnerToken, prevID, sessionID string) error {
	cctx, cancel := device.Cleanup(ctx, AgentCleanupTimeout)
	defer cancel()
	cl := AgentCleanup{SessionID: sessionID}
	if sessionID == "" {
		_, s, err := c.startStatus(cctx, token)
		switch {
		case err != nil:
			cl.Reason = "the session could not be looked up"
			cl.Error = errorText(err)
		case s == nil || s.SessionID == "" || s.SessionID == prevID:
			cl.Reason = "no session was created for this owner token"
			cl.Success = true
		default:
			sessionID = s.SessionID
			cl.SessionID = sessionID
		}
	}
	if sessionID != "" {
		cl = c.exactCancel(cctx, AgentIdentity{SessionID: sessionID, OwnerToken: token})
	}
	return withCleanup(ctx, cause, cl)
}

// withCleanup attaches cleanup evidence to an error, turning a bare
// interrupt into the structured 130.
func withCleanup(ctx context.Context, cause error, cl AgentCleanup) error {
	var e *fault.Error
	if !errors.As(cause, &e) {
		e = fault.From(cause)
	}
	if cl.SessionID != "" {
		e.With("sessionId", cl.SessionID)
	}
	return e.With("cleanup", cl)
}

// exactCancel cancels exactly id (when it is still live) and waits for a
// terminal state within ctx.
func (c *AgentClient) exactCancel(ctx context.Context, id AgentIdentity) AgentCleanup {
	cl := AgentCleanup{SessionID: id.SessionID}
	s, err := c.Status(ctx, id)
	if err != nil {
		cl.Error = errorText(err)
		cl.Reason = "the session status could not be read"
		return cl
	}
	if s.IsTerminal() {
		cl.Success, cl.State, cl.Reason = true, s.State, "the session was already terminal"
		return cl
	}
	cl.Attempted = true
	res, err := c.control(ctx, id, protocol.AgentCancel, protocol.AgentCancelled, ControlOptions{Timeout: AgentCleanupTimeout})
	if res != nil && res.Session != nil {
		cl.State = res.Session.State
	}
	if err != nil {
		cl.Error = errorText(err)
		return cl
	}
	cl.Success = res.Session.IsTerminal()
	return cl
}

// CancelExact is the best-effort cleanup used after a timeout or an
// interrupt: it cancels exactly id with a fresh context bounded by
// AgentCleanupTimeout, whatever state ctx is in.
func (c *AgentClient) CancelExact(ctx context.Context, id AgentIdentity) AgentCleanup {
	cctx, cancel := device.Cleanup(ctx, AgentCleanupTimeout)
	defer cancel()
	return c.exactCancel(cctx, id)
}

// ObserveResult is a new current observation.
type ObserveResult struct {
	Session     *AgentSession
	Observation *Observation
	Raw         json.RawMessage
}

// Observe creates a new current observation (which makes the previous
// observationId stale). Device refusals are exit-2 errors with the device
// code.
func (c *AgentClient) Observe(ctx context.Context, id AgentIdentity) (*ObserveResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentObserve, id.params())
	if err != nil {
		return nil, withSession(err, id.SessionID)
	}
	s, err := ParseAgentSession(env.Session)
	if err != nil {
		return nil, err
	}
	if err := sameSession(s, id.SessionID); err != nil {
		return nil, err
	}
	o, err := ParseObservation(env.Observation)
	if err != nil {
		return nil, err
	}
	return &ObserveResult{Session: s, Observation: o, Raw: env.raw}, nil
}

func withSession(err error, sessionID string) error {
	var e *fault.Error
	if errors.As(err, &e) && sessionID != "" {
		if _, ok := e.Details["sessionId"]; !ok {
			e.With("sessionId", sessionID)
		}
	}
	return err
}

// sameSession checks that a snapshot belongs to the session we asked about.
func sameSession(s *AgentSession, sessionID string) error {
	if s.SessionID != sessionID {
		return device.ContractError("the device answered with another session's snapshot", nil).
			With("sessionId", sessionID).With("answeredSessionId", s.SessionID)
	}
	return nil
}

// Status reads the session snapshot (it refreshes the device's idle timer).
func (c *AgentClient) Status(ctx context.Context, id AgentIdentity) (*AgentSession, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentStatus, id.params())
	if err != nil {
		return nil, withSession(err, id.SessionID)
	}
	s, err := ParseAgentSession(env.Session)
	if err != nil {
		return nil, err
	}
	return s, sameSession(s, id.SessionID)
}

// ReceiptResult is one receipt query.
type ReceiptResult struct {
	Receipt *AgentReceipt
	Session *AgentSession
	Raw     json.RawMessage
}

// Receipt reads the receipt of stepId. A missing receipt is an exit-2
// error with code receipt_not_found.
func (c *AgentClient) Receipt(ctx context.Context, id AgentIdentity, stepID string) (*ReceiptResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if err := CheckAgentID("stepId", stepID); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentReceiptQuery, append(id.params(), device.Param{Key: protocol.ParamStepID, Value: stepID}))
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			e.With("stepId", stepID)
		}
		return nil, withSession(err, id.SessionID)
	}
	r, err := ParseAgentReceipt(env.Receipt)
	if err != nil {
		return nil, err
	}
	if r.StepID != stepID {
		return nil, device.ContractError("the device answered with another step's receipt", r.Summary()).With("stepId", stepID)
	}
	res := &ReceiptResult{Receipt: r, Raw: env.raw}
	if !absent(env.Session) {
		if res.Session, err = ParseAgentSession(env.Session); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ActRequest is one typed action.
type ActRequest struct {
	Identity AgentIdentity
	// StepID is the caller's idempotency key. A retry must reuse it: the
	// device then returns the stored receipt and never acts twice.
	StepID        string
	ObservationID string
	Action        string
	Args          protocol.ActionArgs
	// Timeout bounds the wait for a final receipt (default 15 s).
	Timeout      time.Duration
	PollInterval time.Duration
}

// Params are the act parameters in the reference host's order.
func (r ActRequest) params() device.Params {
	p := append(r.Identity.params(),
		device.Param{Key: protocol.ParamStepID, Value: r.StepID},
		device.Param{Key: protocol.ParamObservationID, Value: r.ObservationID},
		device.Param{Key: protocol.ParamAction, Value: r.Action})
	if r.Args.NodeID != nil {
		p = p.Add(protocol.ParamNodeID, *r.Args.NodeID)
	}
	if r.Args.Text != nil {
		p = p.Add(protocol.ParamText, *r.Args.Text)
	}
	if r.Args.Direction != nil {
		p = p.Add(protocol.ParamDirection, *r.Args.Direction)
	}
	if r.Args.DurationMs != nil {
		p = p.Add(protocol.ParamDurationMs, fmt.Sprint(*r.Args.DurationMs))
	}
	if r.Args.Distance != nil {
		p = p.Add(protocol.ParamDistance, fmt.Sprint(*r.Args.Distance))
	}
	return p
}

// Validate checks identifiers and the typed action schema locally (exit 3).
func (r ActRequest) Validate() error {
	if err := r.Identity.Validate(); err != nil {
		return err
	}
	if err := CheckAgentID("stepId", r.StepID); err != nil {
		return err
	}
	if err := CheckAgentID("observationId", r.ObservationID); err != nil {
		return err
	}
	if msg := protocol.ValidateAction(r.Action, r.Args); msg != "" {
		return fault.Usage(CodeInvalidAction, msg).With("action", r.Action)
	}
	if r.Args.NodeID != nil {
		if err := CheckAgentID("nodeId", *r.Args.NodeID); err != nil {
			return err
		}
	}
	return nil
}

// ActResult is the outcome of one act.
type ActResult struct {
	Receipt *AgentReceipt
	// Session is the snapshot returned with the final receipt.
	Session *AgentSession
	// Replayed is true when a receipt for StepID already existed: nothing
	// was sent and the stored receipt is returned.
	Replayed   bool
	Foreground *ForegroundRestore
	Raw        json.RawMessage
}

// SettledObservation is the new current observation of a succeeded step.
func (r *ActResult) SettledObservation() *Observation {
	if r == nil || r.Receipt == nil {
		return nil
	}
	return r.Receipt.SettledObservation
}

// Act sends one typed action and waits for its final receipt. It returns
// the result whenever a receipt was read; the error is non-nil unless the
// receipt succeeded: rejected or failed receipts are exit-2 errors with
// the device's errorCode. Identity errors (another session, another owner)
// are detected before anything is sent. A receipt that already exists for
// StepID is returned without sending the action again. On timeout or
// interrupt the whole session is cancelled exactly (the device would
// otherwise keep acting on behalf of a host that has gone).
func (c *AgentClient) Act(ctx context.Context, r ActRequest) (*ActResult, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultAgentActionTimeout
	}
	res := &ActResult{}
	prior, err := c.Receipt(ctx, r.Identity, r.StepID)
	switch {
	case err == nil:
		res.Replayed = true
		res.Receipt, res.Session, res.Raw = prior.Receipt, prior.Session, prior.Raw
	case deviceCode(err) == protocol.ErrReceiptNotFound:
		fr, err := c.mutate(ctx, protocol.AgentAct, r.params())
		res.Foreground = &fr
		if err != nil {
			if fault.IsInterrupt(err) {
				return res, withCleanup(ctx, err, c.CancelExact(ctx, r.Identity))
			}
			return res, withStep(err, r)
		}
	default:
		if fault.IsInterrupt(err) {
			return nil, withCleanup(ctx, err, c.CancelExact(ctx, r.Identity))
		}
		return nil, withStep(err, r)
	}
	if !res.Receipt.IsFinal() {
		pollErr := device.PollUntil(ctx, device.PollOptions{Clock: c.dev.Clock(), Timeout: r.Timeout, Interval: c.poll(r.PollInterval)}, func(ctx context.Context) (bool, error) {
			rr, err := c.Receipt(ctx, r.Identity, r.StepID)
			if err != nil {
				if deviceCode(err) == protocol.ErrReceiptNotFound {
					return false, nil
				}
				return false, err
			}
			res.Receipt, res.Session, res.Raw = rr.Receipt, rr.Session, rr.Raw
			if rr.Receipt.IsFinal() {
				return true, nil
			}
			// A session cancelled or expired while acting never finalizes
			// the receipt (§22 item 8): stop instead of waiting it out.
			if rr.Session.IsTerminal() {
				return false, fault.Newf(fault.Failed, CodeSessionTerminal,
					"the Agent session became %s while the action was executing; its receipt will stay accepted", rr.Session.State).
					With("terminalReason", rr.Session.TerminalReason).With("receipt", rr.Receipt).With("session", rr.Session)
			}
			return false, nil
		})
		switch {
		case pollErr == nil:
		case errors.Is(pollErr, device.ErrPollTimeout):
			e := fault.New(fault.Timeout, CodeAgentActTimeout, "SoloPi did not finish the action within --action-timeout").
				With("actionTimeoutSeconds", r.Timeout.Seconds())
			if res.Receipt != nil {
				e.With("lastReceipt", res.Receipt.Summary())
			}
			return res, withStep(withCleanup(ctx, e, c.CancelExact(ctx, r.Identity)), r)
		case fault.IsInterrupt(pollErr):
			return res, withStep(withCleanup(ctx, pollErr, c.CancelExact(ctx, r.Identity)), r)
		default:
			return res, withStep(pollErr, r)
		}
	}
	if res.Receipt.Status != ReceiptSucceeded {
		code := res.Receipt.ErrorCode
		if code == "" {
			code = device.CodeDeviceRejected
		}
		msg := res.Receipt.Error
		if msg == "" {
			msg = "the device " + res.Receipt.Status + " the action"
		}
		e := fault.New(fault.Failed, code, msg).With("receipt", res.Receipt).With("status", res.Receipt.Status)
		if res.Session != nil {
			e.With("session", res.Session)
		}
		if res.Replayed {
			e.With("replayed", true)
		}
		return res, withStep(e, r)
	}
	return res, nil
}

// withStep adds the step identifiers to an error.
func withStep(err error, r ActRequest) error {
	var e *fault.Error
	if errors.As(err, &e) {
		if _, ok := e.Details["sessionId"]; !ok {
			e.With("sessionId", r.Identity.SessionID)
		}
		e.With("stepId", r.StepID).With("observationId", r.ObservationID)
	}
	return err
}

// ControlOptions configure Pause, Resume, End and Cancel.
type ControlOptions struct {
	// Timeout bounds the wait for the expected state (default 15 s).
	Timeout      time.Duration
	PollInterval time.Duration
}

// ControlResult is a session after a control mutation.
type ControlResult struct {
	Session *AgentSession
	// Changed is false when the session was already in the expected state
	// and nothing was sent.
	Changed    bool
	Foreground *ForegroundRestore
}

// Pause moves an active session to paused.
func (c *AgentClient) Pause(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentPause, protocol.AgentPaused, o)
}

// Resume moves a paused session back to active.
func (c *AgentClient) Resume(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentResume, protocol.AgentActive, o)
}

// End ends the session normally (client_end).
func (c *AgentClient) End(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentEnd, protocol.AgentEnded, o)
}

// Cancel cancels the session, even while an action is executing.
func (c *AgentClient) Cancel(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentCancel, protocol.AgentCancelled, o)
}

// control sends one of pause/resume/end/cancel and polls status until the
// expected state (0), another terminal state (exit 2) or the timeout (124).
// The status is read first so that identity errors and a terminal session
// fail at once instead of as an invisible rejection and a timeout.
func (c *AgentClient) control(ctx context.Context, id AgentIdentity, typ string, want protocol.State, o ControlOptions) (*ControlResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultAgentControlWait
	}
	s, err := c.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &ControlResult{Session: s}
	if protocol.State(s.State) == want {
		return res, nil
	}
	if s.IsTerminal() {
		return res, fault.Newf(fault.Failed, protocol.ErrTerminalSession, "the session is already terminal (%s)", s.State).
			With("sessionId", id.SessionID).With("session", s)
	}
	fr, err := c.mutate(ctx, typ, id.params())
	res.Foreground = &fr
	if err != nil {
		return res, withSession(err, id.SessionID)
	}
	res.Changed = true
	pollErr := device.PollUntil(ctx, device.PollOptions{Clock: c.dev.Clock(), Timeout: o.Timeout, Interval: c.poll(o.PollInterval)}, func(ctx context.Context) (bool, error) {
		s, err := c.Status(ctx, id)
		if err != nil {
			return false, err
		}
		res.Session = s
		if protocol.State(s.State) == want {
			return true, nil
		}
		if s.IsTerminal() {
			return false, fault.Newf(fault.Failed, CodeSessionTerminal, "the session became %s instead of %s", s.State, want).
				With("session", s).With("terminalReason", s.TerminalReason)
		}
		return false, nil
	})
	switch {
	case pollErr == nil:
		return res, nil
	case errors.Is(pollErr, device.ErrPollTimeout):
		return res, fault.Newf(fault.Timeout, CodeAgentControlTimeout, "the session did not become %s in time", want).
			With("sessionId", id.SessionID).With("lastStatus", res.Session.Summary()).With("timeoutSeconds", o.Timeout.Seconds())
	}
	return res, withSession(pollErr, id.SessionID)
}

// TimelineResult is the in-memory timeline of a session.
type TimelineResult struct {
	Events       []AgentEvent
	TimelinePath string
	Check        TimelineCheck
	Raw          json.RawMessage
}

// Timeline reads the device's in-memory events and checks them.
func (c *AgentClient) Timeline(ctx context.Context, id AgentIdentity) (*TimelineResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentTimeline, id.params())
	if err != nil {
		return nil, withSession(err, id.SessionID)
	}
	res := &TimelineResult{TimelinePath: env.TimelinePath, Raw: env.raw}
	for _, b := range env.Events {
		ev, err := ParseAgentEvent(b)
		if err != nil {
			return nil, err
		}
		res.Events = append(res.Events, ev)
	}
	res.Check = CheckTimeline(res.Events, id.SessionID)
	return res, nil
}

// FindObservation looks up an observation of the session by id in its
// timeline (observation_created details, or a settled observation in an
// action_settled receipt) without creating a new one.
func (t *TimelineResult) FindObservation(observationID string) (*Observation, error) {
	for i := len(t.Events) - 1; i >= 0; i-- {
		ev := t.Events[i]
		if absent(ev.Details) {
			continue
		}
		switch ev.Type {
		case EventObservationCreated:
			var probe struct {
				ObservationID string `json:"observationId"`
			}
			if json.Unmarshal(ev.Details, &probe) == nil && probe.ObservationID == observationID {
				return ParseObservation(ev.Details)
			}
		case EventActionSettled:
			var probe struct {
				Settled json.RawMessage `json:"settledObservation"`
			}
			if json.Unmarshal(ev.Details, &probe) != nil || absent(probe.Settled) {
				continue
			}
			var id struct {
				ObservationID string `json:"observationId"`
			}
			if json.Unmarshal(probe.Settled, &id) == nil && id.ObservationID == observationID {
				return ParseObservation(probe.Settled)
			}
		}
	}
	return nil, fault.Newf(fault.Failed, CodeObservationNotFound,
		"observation %s is not in this session's timeline", observationID).With("observationId", observationID)
}
