package agentloop

import (
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/redact"
)

// phase is the live lifecycle phase of a task. AgentState is its only
// owner: devices, verifiers, recovery and the model client never keep a
// lifecycle of their own.
type phase string

// Phases. Every recoverable path ends in PhaseObserving before it returns
// to the caller, so the returned phase is also the legal re-entry point of
// the next step.
const (
	phaseIdle            phase = "idle"
	phaseObserving       phase = "observing"
	phaseCalibrating     phase = "calibrating"
	PhasePlanning        phase = "planning"
	phaseReviewing       phase = "reviewing"
	phaseConfirming      phase = "confirming"
	phasePrecondition    phase = "checking_freshness"
	phaseDispatching     phase = "dispatching"
	phaseVerifying       phase = "verifying"
	phaseRecovering      phase = "recovering"
	phaseCompletionCheck phase = "completion_review"
	phaseSucceeded       phase = "succeeded"
	phaseNotCompleted    phase = "not_completed"
	phaseBlocked         phase = "blocked"
	phaseFailed          phase = "failed"
	phaseCancelled       phase = "cancelled"
)

// Terminal reports whether no further step may run.
func (p phase) Terminal() bool {
	switch p {
	case phaseSucceeded, phaseNotCompleted, phaseBlocked, phaseFailed, phaseCancelled:
		return true
	}
	return false
}

// Event types of the audit stream (trajectory schema 1.3).
const (
	evStart          = "start"
	EvPhaseChange    = "phase_change"
	evObservation    = "observation"
	EvCalibration    = "coordinate_calibration"
	evModelRequest   = "model_request"
	EvModelResponse  = "model_response"
	evProtocolRetry  = "protocol_retry"
	evProtocolReject = "protocol_rejection"
	EvAction         = "action"
	evPrecondition   = "precondition"
	EvRiskReview     = "risk_review"
	EvConfirmation   = "confirmation"
	evExecution      = "execution"
	EvVerification   = "verification"
	EvTaskReview     = "task_verification"
	EvRecovery       = "recovery"
	evNote           = "note"
	evMetrics        = "metrics"
	EvFinish         = "finish"
	evError          = "error"
)

// AgentEvent is one entry of the authoritative audit history: callbacks
// and the trajectory consume the same stream.
type AgentEvent struct {
	Seq       int            `json:"seq"`
	Timestamp time.Time      `json:"timestamp"`
	Type      string         `json:"type"`
	Step      int            `json:"step"`
	Phase     phase          `json:"phase"`
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

// agentState owns the live phase, the latest working values and the event
// history of one task.
type agentState struct {
	mu       sync.Mutex
	phase    phase
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

func newAgentState(now func() time.Time, redact func(string) string, listener func(AgentEvent)) *agentState {
	return &agentState{
		phase:    phaseIdle,
		now:      now,
		redact:   redact,
		listener: listener,
		counters: Counters{HardFailures: map[string]int{}, SoftReplans: map[string]int{}},
		streak:   map[string]int{},
		metrics:  Metrics{ByPurpose: map[string]int{}},
	}
}

// Phase returns the current phase.
func (s *agentState) Phase() phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// Step returns the current step number.
func (s *agentState) Step() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.step
}

// Events returns a copy of the history.
func (s *agentState) Events() []AgentEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AgentEvent(nil), s.events...)
}

// Counters returns a copy of the counters.
func (s *agentState) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counters
	c.HardFailures = copyMap(s.counters.HardFailures)
	c.SoftReplans = copyMap(s.counters.SoftReplans)
	return c
}

// Metrics returns a copy of the metrics.
func (s *agentState) Metrics() Metrics {
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
func (s *agentState) emit(typ, msg string, payload map[string]any) AgentEvent {
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

func (s *agentState) setPhase(p phase, why string) {
	s.mu.Lock()
	old := s.phase
	s.phase = p
	s.mu.Unlock()
	if old != p {
		s.emit(EvPhaseChange, why, map[string]any{"from": string(old), "to": string(p)})
	}
}

func (s *agentState) nextStep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step++
	s.counters.Steps = s.step
	return s.step
}

// hard counts a hard failure of class and returns the class's streak.
func (s *agentState) hard(class string) int {
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
func (s *agentState) resetStreaks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.streak)
}

func (s *agentState) soft(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters.SoftReplans[class]++
	s.counters.SoftTotal++
	return s.counters.SoftReplans[class]
}

func (s *agentState) count(f func(c *Counters)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.counters)
}

// addUsage adds one response to the metrics; it returns the totals and
// the image bytes sent so far in the current step.
func (s *agentState) addUsage(purpose string, u chat.Usage, latency time.Duration, images, imageBytes int) (Metrics, int64) {
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
