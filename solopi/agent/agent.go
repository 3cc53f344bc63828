package agent

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// validAgentID reports whether s is a valid Agent identifier.
func validAgentID(s string) bool { return protocol.ValidID(s, 160) }

// CheckAgentID returns a usage error (exit 3) naming the flag when s is not
// a valid Agent identifier. The value is echoed: identifiers are not secret.
func CheckAgentID(name, s string) error {
	if s == "" {
		return fault.Usagef(fault.CodeMissingOption, "%s is required", name)
	}
	if !validAgentID(s) {
		return fault.Usagef(fault.CodeInvalidID, "%s %q must match [A-Za-z0-9][A-Za-z0-9._-]{0,159}", name, device.Truncate(s, 200))
	}
	return nil
}

// OwnerToken is the control credential of one Agent session: a
// redact.Secret, so that its value is only reachable through Reveal and
// every formatting and encoding path prints the marker.
type OwnerToken = redact.Secret

// NewOwnerToken returns a fresh token: 32 bytes from crypto/rand as 64
// lowercase hex characters (the reference host's length).
func NewOwnerToken() OwnerToken {
	return redact.NewSecret(hex.EncodeToString(device.RandomBytes(32)))
}

// ParseOwnerToken validates s against [A-Za-z0-9._-]{16,160}. The error
// never contains s.
func ParseOwnerToken(s string) (OwnerToken, error) {
	if s == "" {
		return OwnerToken{}, fault.Usage(fault.CodeMissingOwnerToken, "an owner token is required (--owner-token, --owner-token-file or SOLOPI_AGENT_OWNER_TOKEN)")
	}
	if !(len(s) >= 16 && protocol.ValidIDChars(s, 160)) {
		return OwnerToken{}, fault.Usagef(fault.CodeInvalidOwnerToken,
			"the owner token must be 16 to 160 characters of [A-Za-z0-9._-] (got %d characters)", len(s))
	}
	return redact.NewSecret(s), nil
}

// AgentIdentity is what every Agent call except capabilities carries.
type AgentIdentity struct {
	SessionID  string
	OwnerToken OwnerToken
}

// Validate checks both parts (exit 3).
func (id AgentIdentity) Validate() error {
	if err := CheckAgentID("sessionId", id.SessionID); err != nil {
		return err
	}
	if id.OwnerToken.IsZero() {
		return fault.Usage(fault.CodeMissingOwnerToken, "an owner token is required (--owner-token, --owner-token-file or SOLOPI_AGENT_OWNER_TOKEN)")
	}
	return nil
}

func (id AgentIdentity) params() device.Params {
	return device.P(protocol.ParamSessionID, id.SessionID, protocol.ParamOwnerToken, id.OwnerToken.Reveal())
}

// AgentBudget is the device-enforced budget of a session.
type AgentBudget struct {
	MaxSteps           int64 `json:"maxSteps"`
	MaxDurationMs      int64 `json:"maxDurationMs"`
	IdleTimeoutMs      int64 `json:"idleTimeoutMs"`
	MaxRepeatedActions int64 `json:"maxRepeatedActions"`
	MaxNoProgressSteps int64 `json:"maxNoProgressSteps"`
}

// DefaultAgentBudget is the device's default budget.
func DefaultAgentBudget() AgentBudget {
	return AgentBudget{
		MaxSteps:           protocol.AgentMaxSteps.Default,
		MaxDurationMs:      protocol.AgentMaxDurationMs.Default,
		IdleTimeoutMs:      protocol.AgentIdleTimeoutMs.Default,
		MaxRepeatedActions: protocol.AgentMaxRepeatedActions.Default,
		MaxNoProgressSteps: protocol.AgentMaxNoProgressSteps.Default,
	}
}

func (b AgentBudget) fields() []struct {
	r protocol.Range
	v int64
} {
	return []struct {
		r protocol.Range
		v int64
	}{
		{protocol.AgentMaxSteps, b.MaxSteps},
		{protocol.AgentMaxDurationMs, b.MaxDurationMs},
		{protocol.AgentIdleTimeoutMs, b.IdleTimeoutMs},
		{protocol.AgentMaxRepeatedActions, b.MaxRepeatedActions},
		{protocol.AgentMaxNoProgressSteps, b.MaxNoProgressSteps},
	}
}

// Validate applies the device's ranges locally (exit 3) with the device's
// message, so a bad bound never becomes an invisible device rejection that
// the host could only time out on.
func (b AgentBudget) Validate() error {
	for _, f := range b.fields() {
		if !f.r.Contains(f.v) {
			return fault.Usagef(fault.CodeInvalidParameter, "%s must be between %d and %d", f.r.Name, f.r.Min, f.r.Max).
				With("parameter", f.r.Name).With("value", f.v)
		}
	}
	return nil
}

func (b AgentBudget) params() device.Params {
	var p device.Params
	for _, f := range b.fields() {
		p = p.Add(f.r.Name, fmt.Sprint(f.v))
	}
	return p
}

// NewStepID returns a fresh stepId: step-<32 lowercase hex>.
func NewStepID() string {
	return "step-" + hex.EncodeToString(device.RandomBytes(16))
}

// AgentSession is the session snapshot. Raw keeps the device object
// as it was received; MarshalJSON writes Raw when present so that evidence
// keeps every device field.
type AgentSession struct {
	SessionID      string          `json:"sessionId,omitempty"`
	Generation     *int64          `json:"generation,omitempty"`
	State          string          `json:"state"`
	Active         bool            `json:"active"`
	Terminal       bool            `json:"terminal"`
	TerminalReason string          `json:"terminalReason,omitempty"`
	StartedAt      int64           `json:"startedAt,omitempty"`
	LastActivityAt int64           `json:"lastActivityAt,omitempty"`
	FinishedAt     int64           `json:"finishedAt,omitempty"`
	AcceptedSteps  int64           `json:"acceptedSteps"`
	MaxSteps       int64           `json:"maxSteps,omitempty"`
	ObservationID  string          `json:"observationId,omitempty"`
	LeaseHeld      bool            `json:"leaseHeld"`
	Raw            json.RawMessage `json:"-"`
}

// MarshalJSON writes the device object when it is known.
func (s AgentSession) MarshalJSON() ([]byte, error) {
	type plain AgentSession
	return rawOr(s.Raw, plain(s))
}

// IsTerminal reports whether the session can no longer change.
func (s *AgentSession) IsTerminal() bool {
	return s != nil && (s.Terminal || protocol.AgentSession().IsTerminal(protocol.State(s.State)))
}

// IsLive reports whether the session is active, paused or acting.
func (s *AgentSession) IsLive() bool {
	return s != nil && protocol.AgentSession().IsLive(protocol.State(s.State))
}

// Summary is a small, secret-free view for error details and progress.
func (s *AgentSession) Summary() map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{"sessionId": s.SessionID, "state": s.State, "terminal": s.Terminal, "acceptedSteps": s.AcceptedSteps, "leaseHeld": s.LeaseHeld}
	if s.TerminalReason != "" {
		m["terminalReason"] = s.TerminalReason
	}
	if s.ObservationID != "" {
		m["observationId"] = s.ObservationID
	}
	return m
}

// Rect is android.graphics.Rect as the device serializes it.
type Rect struct {
	Left   int  `json:"left"`
	Top    int  `json:"top"`
	Right  int  `json:"right"`
	Bottom int  `json:"bottom"`
	Empty  bool `json:"empty"`
}

// String renders [left,top][right,bottom] like uiautomator bounds.
func (r *Rect) String() string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("[%d,%d][%d,%d]", r.Left, r.Top, r.Right, r.Bottom)
}

// Contains reports whether the point lies inside the rectangle.
func (r *Rect) Contains(x, y int) bool {
	return r != nil && x >= r.Left && x < r.Right && y >= r.Top && y < r.Bottom
}

// UINode is one node of an observation's page. Absent strings are
// "" (the device omits nulls); HasResourceID tells an absent resourceId
// from an empty one.
type UINode struct {
	NodeID      string    `json:"nodeId,omitempty"`
	Depth       int       `json:"depth,omitempty"`
	ClassName   string    `json:"className,omitempty"`
	Bounds      *Rect     `json:"nodeBound,omitempty"`
	Text        string    `json:"text,omitempty"`
	Description string    `json:"description,omitempty"`
	ResourceID  string    `json:"resourceId,omitempty"`
	ID          string    `json:"id,omitempty"`
	PackageName string    `json:"packageName,omitempty"`
	Visible     *bool     `json:"visible,omitempty"`
	Type        string    `json:"type,omitempty"`
	Children    []*UINode `json:"children,omitempty"`
}

// Walk visits the tree in pre-order (the device's nodeId order) until fn
// returns false.
func (n *UINode) Walk(fn func(*UINode) bool) bool {
	if n == nil {
		return true
	}
	if !fn(n) {
		return false
	}
	for _, c := range n.Children {
		if !c.Walk(fn) {
			return false
		}
	}
	return true
}

// Find returns the node with nodeId id, or nil.
func (n *UINode) Find(id string) *UINode {
	var found *UINode
	n.Walk(func(x *UINode) bool {
		if x.NodeID == id {
			found = x
			return false
		}
		return true
	})
	return found
}

// Observation is the observation object. Page is the parsed tree;
// Raw is the device object as received (MarshalJSON writes it).
type Observation struct {
	ObservationID    string          `json:"observationId"`
	Signature        string          `json:"signature,omitempty"`
	CreatedAt        int64           `json:"createdAt,omitempty"`
	TreeSHA256       string          `json:"treeSha256,omitempty"`
	Page             *UINode         `json:"page,omitempty"`
	TimelinePath     string          `json:"timelinePath,omitempty"`
	ScreenshotPath   string          `json:"screenshotPath,omitempty"`
	ScreenshotSHA256 string          `json:"screenshotSha256,omitempty"`
	ScreenshotError  string          `json:"screenshotError,omitempty"`
	Raw              json.RawMessage `json:"-"`
}

// MarshalJSON writes the device object when it is known.
func (o Observation) MarshalJSON() ([]byte, error) {
	type plain Observation
	return rawOr(o.Raw, plain(o))
}

// Summary is a small view without the tree.
func (o *Observation) Summary() map[string]any {
	if o == nil {
		return nil
	}
	m := map[string]any{"observationId": o.ObservationID, "treeSha256": o.TreeSHA256}
	if o.ScreenshotPath != "" {
		m["screenshotPath"] = o.ScreenshotPath
		m["screenshotSha256"] = o.ScreenshotSHA256
	}
	if o.ScreenshotError != "" {
		m["screenshotError"] = o.ScreenshotError
	}
	return m
}

// receiptAction is the typed action recorded in a receipt.
type receiptAction struct {
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Receipt statuses.
const (
	receiptAccepted  = "accepted"
	ReceiptRejected  = "rejected"
	receiptSucceeded = "succeeded"
	receiptFailed    = "failed"
)

// AgentReceipt is the receipt of one act step.
type AgentReceipt struct {
	StepID             string          `json:"stepId"`
	ObservationID      string          `json:"observationId,omitempty"`
	Action             receiptAction   `json:"action"`
	Status             string          `json:"status"`
	ErrorCode          string          `json:"errorCode,omitempty"`
	Error              string          `json:"error,omitempty"`
	AcceptedAt         int64           `json:"acceptedAt,omitempty"`
	FinishedAt         int64           `json:"finishedAt,omitempty"`
	SettledObservation *Observation    `json:"settledObservation,omitempty"`
	Raw                json.RawMessage `json:"-"`
}

// MarshalJSON writes the device object when it is known.
func (r AgentReceipt) MarshalJSON() ([]byte, error) {
	type plain AgentReceipt
	return rawOr(r.Raw, plain(r))
}

// IsFinal reports whether the receipt will not change any more.
func (r *AgentReceipt) IsFinal() bool {
	return r != nil && (r.Status == receiptSucceeded || r.Status == ReceiptRejected || r.Status == receiptFailed)
}

// Summary is a small view without the settled tree.
func (r *AgentReceipt) Summary() map[string]any {
	if r == nil {
		return nil
	}
	m := map[string]any{"stepId": r.StepID, "observationId": r.ObservationID, "status": r.Status, "action": r.Action}
	if r.ErrorCode != "" {
		m["errorCode"] = r.ErrorCode
		m["error"] = r.Error
	}
	if r.SettledObservation != nil {
		m["settledObservationId"] = r.SettledObservation.ObservationID
	}
	return m
}

// Timeline event types.
const (
	eventSessionStarted     = "session_started"
	eventObservationCreated = "observation_created"
	eventActionAccepted     = "action_accepted"
	eventActionRejected     = "action_rejected"
	eventActionFailed       = "action_failed"
	eventActionSettled      = "action_settled"
	eventSessionPaused      = "session_paused"
	eventSessionResumed     = "session_resumed"
	eventSessionTerminal    = "session_terminal"
	eventLeaseReleased      = "lease_released"
)

// AgentEvent is one timeline event.
type AgentEvent struct {
	Sequence      int64           `json:"sequence"`
	Timestamp     int64           `json:"timestamp,omitempty"`
	Type          string          `json:"type"`
	SessionID     string          `json:"sessionId,omitempty"`
	Generation    *int64          `json:"generation,omitempty"`
	StepID        string          `json:"stepId,omitempty"`
	ObservationID string          `json:"observationId,omitempty"`
	Details       json.RawMessage `json:"details,omitempty"`
	Raw           json.RawMessage `json:"-"`
}

// MarshalJSON writes the device object when it is known.
func (e AgentEvent) MarshalJSON() ([]byte, error) {
	type plain AgentEvent
	return rawOr(e.Raw, plain(e))
}

// rawOr is a device object's JSON: raw as received when it is known,
// otherwise v (the object's fields) encoded.
func rawOr(raw json.RawMessage, v any) ([]byte, error) {
	if len(raw) > 0 {
		return raw, nil
	}
	return json.Marshal(v)
}

// decodeAgentObject decodes the device's what object; a missing or null
// one and a malformed one break the contract.
func decodeAgentObject[T any](b json.RawMessage, what string) (*T, error) {
	if absent(b) {
		return nil, device.ContractError("the device answer has no "+what+" object", nil)
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeProtocolContractViolation, "the device sent a malformed "+what+" object", err)
	}
	return v, nil
}

// absent reports a missing or null JSON value.
func absent(b json.RawMessage) bool {
	s := strings.TrimSpace(string(b))
	return s == "" || s == "null"
}

// parseAgentSession decodes a session object and checks its state.
func parseAgentSession(b json.RawMessage) (*AgentSession, error) {
	s, err := decodeAgentObject[AgentSession](b, "session")
	if err != nil {
		return nil, err
	}
	if !protocol.AgentSession().Has(protocol.State(s.State)) {
		return nil, device.ContractError(fmt.Sprintf("the device sent an unknown Agent session state %q", device.Truncate(s.State, 40)), nil)
	}
	if s.SessionID != "" && !validAgentID(s.SessionID) {
		return nil, device.ContractError("the device sent a sessionId the host cannot use", nil)
	}
	s.Raw = append(json.RawMessage(nil), b...)
	return s, nil
}

// ParseObservation decodes an observation object.
func ParseObservation(b json.RawMessage) (*Observation, error) {
	o, err := decodeAgentObject[Observation](b, "observation")
	if err != nil {
		return nil, err
	}
	if !validAgentID(o.ObservationID) {
		return nil, device.ContractError("the device sent an observation without a usable observationId", nil)
	}
	o.Raw = append(json.RawMessage(nil), b...)
	return o, nil
}

// receiptWire is a receipt as sent: the settled observation is parsed
// separately.
type receiptWire struct {
	AgentReceipt
	Settled json.RawMessage `json:"settledObservation"`
}

// parseAgentReceipt decodes a receipt object and checks its status.
func parseAgentReceipt(b json.RawMessage) (*AgentReceipt, error) {
	aux, err := decodeAgentObject[receiptWire](b, "receipt")
	if err != nil {
		return nil, err
	}
	r := aux.AgentReceipt
	r.SettledObservation = nil
	switch r.Status {
	case receiptAccepted, ReceiptRejected, receiptSucceeded, receiptFailed:
	default:
		return nil, device.ContractError(fmt.Sprintf("the device sent an unknown receipt status %q", device.Truncate(r.Status, 40)), nil)
	}
	if !absent(aux.Settled) {
		o, err := ParseObservation(aux.Settled)
		if err != nil {
			return nil, err
		}
		r.SettledObservation = o
	}
	if r.Status == receiptSucceeded && r.SettledObservation == nil {
		return nil, device.ContractError("the device sent a succeeded receipt without a settled observation", nil)
	}
	r.Raw = append(json.RawMessage(nil), b...)
	return &r, nil
}

// parseAgentEvent decodes one timeline event.
func parseAgentEvent(b json.RawMessage) (AgentEvent, error) {
	var e AgentEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fault.Wrap(fault.Transport, fault.CodeProtocolContractViolation, "the device sent a malformed timeline event", err)
	}
	if e.Type == "" {
		return e, device.ContractError("the device sent a timeline event without a type", nil)
	}
	e.Raw = append(json.RawMessage(nil), b...)
	return e, nil
}
