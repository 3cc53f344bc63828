package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Host defaults of the Agent commands.
const (
	defaultAgentAckTimeout    = 15 * time.Second
	defaultAgentActionTimeout = 15 * time.Second
	defaultAgentControlWait   = 15 * time.Second
	defaultAgentPollInterval  = 200 * time.Millisecond
	// agentCleanupTimeout bounds the exact cancel sent after a timeout or an
	// interrupt (the reference host's 10 s).
	agentCleanupTimeout = 10 * time.Second
	// agentQueryTimeout bounds one Agent query: observe may block ~5.5 s on
	// root acquisition plus the screenshot, more than the default
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
		opts.PollInterval = defaultAgentPollInterval
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
		return nil, fault.Wrap(fault.Transport, fault.CodeInvalidDeviceResponse, "the device sent a malformed Agent answer", err).With("type", typ)
	}
	env.raw = b
	if env.Success == nil {
		return nil, device.ContractError("the Agent answer has no success field", nil).With("type", typ)
	}
	if !*env.Success {
		code := env.ErrorCode
		if code == "" {
			code = fault.CodeDeviceRejected
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
// for a controllable one.
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

// agentCapabilities is agent?type=capabilities.
type agentCapabilities struct {
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
func (c *AgentClient) Capabilities(ctx context.Context) (*agentCapabilities, error) {
	env, err := c.query(ctx, protocol.AgentCapabilities, nil)
	if err != nil {
		return nil, err
	}
	var caps agentCapabilities
	if err := json.Unmarshal(env.raw, &caps); err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeProtocolContractViolation, "the device sent malformed Agent capabilities", err)
	}
	if caps.ProtocolVersion != protocol.AgentProtocolVersion {
		return nil, fault.Newf(fault.Transport, fault.CodeProtocolVersionMismatch, "SoloPi speaks Agent protocol %q; this CLI needs %s",
			device.Truncate(caps.ProtocolVersion, 20), protocol.AgentProtocolVersion).
			With("protocolVersion", caps.ProtocolVersion).With("expectedProtocolVersion", protocol.AgentProtocolVersion)
	}
	caps.Raw = env.raw
	return &caps, nil
}

// observeResult is a new current observation.
type observeResult struct {
	Session     *AgentSession
	Observation *Observation
	Raw         json.RawMessage
}

// Observe creates a new current observation (which makes the previous
// observationId stale). Device refusals are exit-2 errors with the device
// code.
func (c *AgentClient) Observe(ctx context.Context, id AgentIdentity) (*observeResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentObserve, id.params())
	if err != nil {
		return nil, withSession(err, id.SessionID)
	}
	s, err := parseAgentSession(env.Session)
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
	return &observeResult{Session: s, Observation: o, Raw: env.raw}, nil
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
	s, err := parseAgentSession(env.Session)
	if err != nil {
		return nil, err
	}
	return s, sameSession(s, id.SessionID)
}
