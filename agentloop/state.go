package agentloop

import (
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/redact"
)

// Phase is the live lifecycle phase of a task. AgentState is its only
// owner: devices, verifiers, recovery and the model client never keep a
// lifecycle of their own.
type Phase string

// Phases. Every recoverable path ends in PhaseObserving before it returns
// to the caller, so the returned phase is also the legal re-entry point of
// the next step.
const (
	PhaseIdle            Phase = "idle"
	PhaseObserving       Phase = "observing"
	PhaseCalibrating     Phase = "calibrating"
	PhasePlanning        Phase = "planning"
	PhaseReviewing       Phase = "reviewing"
	PhaseConfirming      Phase = "confirming"
	PhasePrecondition    Phase = "checking_freshness"
	PhaseDispatching     Phase = "dispatching"
	PhaseVerifying       Phase = "verifying"
	PhaseRecovering      Phase = "recovering"
	PhaseCompletionCheck Phase = "completion_review"
	PhaseSucceeded       Phase = "succeeded"
	PhaseNotCompleted    Phase = "not_completed"
	PhaseBlocked         Phase = "blocked"
	PhaseFailed          Phase = "failed"
	PhaseCancelled       Phase = "cancelled"
)

// Terminal reports whether no further step may run.
func (p Phase) Terminal() bool {
	switch p {
	case PhaseSucceeded, PhaseNotCompleted, PhaseBlocked, PhaseFailed, PhaseCancelled:
		return true
	}
	return false
}

// Event types of the audit stream (trajectory schema 1.3).
const (
	EvStart          = "start"
	EvPhaseChange    = "phase_change"
	EvObservation    = "observation"
	EvCalibration    = "coordinate_calibration"
	EvModelRequest   = "model_request"
	EvModelResponse  = "model_response"
	EvProtocolRetry  = "protocol_retry"
	EvProtocolReject = "protocol_rejection"
	EvAction         = "action"
	EvPrecondition   = "precondition"
	EvRiskReview     = "risk_review"
	EvConfirmation   = "confirmation"
	EvExecution      = "execution"
	EvVerification   = "verification"
	EvTaskReview     = "task_verification"
	EvRecovery       = "recovery"
	EvNote           = "note"
	EvMetrics        = "metrics"
	EvFinish         = "finish"
	EvError          = "error"
)

// AgentEvent is one entry of the authoritative audit history: callbacks
// and the trajectory consume the same stream.
type AgentEvent struct {
	Seq       int            `json:"seq"`
	Timestamp time.Time      `json:"timestamp"`
	Type      string         `json:"type"`
	Step      int            `json:"step"`
	Phase     Phase          `json:"phase"`
	Message   string         `json:"message"`
	Payload   map[string]any `json:"payload,omitempty"`
}

// Counters separate hard failures (device, protocol, verification) from
// soft replans (stale screens, failed completion reviews): soft replans
// stay auditable but never consume the hard recovery budget. Both are
// totals over the run; the recovery budget is spent by a class's streak,
// which only a dispatched action with a passed verification clears.
type Counters struct {
	Steps          int            `json:"steps"`
	Dispatched     int            `json:"dispatched"`
	HardFailures   map[string]int `json:"hard_failures"`
	HardTotal      int            `json:"hard_failures_total"`
	SoftReplans    map[string]int `json:"soft_replans"`
	SoftTotal      int            `json:"soft_replans_total"`
	ProtocolErrors int            `json:"protocol_errors"`
	Warnings       int            `json:"warnings"`
}

// Metrics aggregate model usage over the run, calibration included.
type Metrics struct {
	Requests         int            `json:"requests"`
	ByPurpose        map[string]int `json:"requests_by_purpose"`
	PromptTokens     int            `json:"prompt_tokens"`
	CompletionTokens int            `json:"completion_tokens"`
	CostUSD          float64        `json:"cost_usd"`
	ModelLatencyMs   int64          `json:"model_latency_ms"`
	// ImagesSent and ImageBytes count the encoded screenshots on the wire
	// (an image resent by a retry or a review counts again).
	ImagesSent int   `json:"images_sent"`
	ImageBytes int64 `json:"image_bytes"`
}

// AgentState owns the live phase, the latest working values and the event
// history of one task.
type AgentState struct {
	mu       sync.Mutex
	phase    Phase
	step     int
	events   []AgentEvent
	counters Counters
	// streak is each hard failure class's count since the last action
	// whose verification passed: what the recovery budget is spent on.
	streak   map[string]int
	metrics  Metrics
	now      func() time.Time
	redact   func(string) string
	listener func(AgentEvent)
	// stepImageBytes counts the image bytes sent in step imageStep.
	imageStep      int
	stepImageBytes int64
}

func newAgentState(now func() time.Time, redact func(string) string, listener func(AgentEvent)) *AgentState {
	return &AgentState{
		phase:    PhaseIdle,
		now:      now,
		redact:   redact,
		listener: listener,
		counters: Counters{HardFailures: map[string]int{}, SoftReplans: map[string]int{}},
		streak:   map[string]int{},
		metrics:  Metrics{ByPurpose: map[string]int{}},
	}
}

// Phase returns the current phase.
func (s *AgentState) Phase() Phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// Step returns the current step number.
func (s *AgentState) Step() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.step
}

// Events returns a copy of the history.
func (s *AgentState) Events() []AgentEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AgentEvent(nil), s.events...)
}

// Counters returns a copy of the counters.
func (s *AgentState) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counters
	c.HardFailures = copyMap(s.counters.HardFailures)
	c.SoftReplans = copyMap(s.counters.SoftReplans)
	return c
}

// Metrics returns a copy of the metrics.
func (s *AgentState) Metrics() Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.metrics
	m.ByPurpose = copyMap(s.metrics.ByPurpose)
	return m
}

func copyMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// emit appends an event; payload strings are redacted before they are
// stored, so no consumer can ever see the API key.
func (s *AgentState) emit(typ, msg string, payload map[string]any) AgentEvent {
	s.mu.Lock()
	ev := AgentEvent{Seq: len(s.events) + 1, Timestamp: s.now().UTC(), Type: typ, Step: s.step, Phase: s.phase, Message: s.redact(msg)}
	if payload != nil {
		ev.Payload = redact.Walk(payload, s.redact).(map[string]any)
	}
	s.events = append(s.events, ev)
	l := s.listener
	s.mu.Unlock()
	if l != nil {
		l(ev)
	}
	return ev
}

func (s *AgentState) setPhase(p Phase, why string) {
	s.mu.Lock()
	old := s.phase
	s.phase = p
	s.mu.Unlock()
	if old != p {
		s.emit(EvPhaseChange, why, map[string]any{"from": string(old), "to": string(p)})
	}
}

func (s *AgentState) nextStep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step++
	s.counters.Steps = s.step
	return s.step
}

// hard counts a hard failure of class and returns the class's streak.
func (s *AgentState) hard(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters.HardFailures[class]++
	s.counters.HardTotal++
	s.streak[class]++
	return s.streak[class]
}

// resetStreaks clears every class's streak after an action and its
// verification really succeeded. A clean parse, a successful replan or a
// reobserve does not: the failure that triggered them still counts.
func (s *AgentState) resetStreaks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.streak)
}

func (s *AgentState) soft(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters.SoftReplans[class]++
	s.counters.SoftTotal++
	return s.counters.SoftReplans[class]
}

func (s *AgentState) count(f func(c *Counters)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.counters)
}

// addUsage adds one response to the metrics; it returns the totals and
// the image bytes sent so far in the current step.
func (s *AgentState) addUsage(purpose string, u chat.Usage, latency time.Duration, images, imageBytes int) (Metrics, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.imageStep != s.step {
		s.imageStep, s.stepImageBytes = s.step, 0
	}
	s.stepImageBytes += int64(imageBytes)
	s.metrics.ImagesSent += images
	s.metrics.ImageBytes += int64(imageBytes)
	s.metrics.Requests++
	s.metrics.ByPurpose[purpose]++
	s.metrics.PromptTokens += u.PromptTokens
	s.metrics.CompletionTokens += u.CompletionTokens
	s.metrics.CostUSD += u.CostUSD
	s.metrics.ModelLatencyMs += latency.Milliseconds()
	m := s.metrics
	m.ByPurpose = copyMap(s.metrics.ByPurpose)
	return m, s.stepImageBytes
}
