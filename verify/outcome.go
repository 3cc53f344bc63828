package verify

import "github.com/solopi-dev/solopi/oracle"

// Segment states an execution reports.
const (
	StatePassed    = "passed"
	StateFailed    = "failed"
	stateNotTested = "not_tested"
	StateDone      = "done" // a dynamic segment whose Agent said done
)

// Verdicts.
const (
	Passed    = "passed"
	Failed    = "failed"
	NotTested = "not_tested"
)

// Reasons the engine and the judge give (device and oracle reasons pass
// through as they come).
const (
	ReasonCompiledOraclePassed = "compiled_oracle_passed"
	ReasonMatched              = oracle.ReasonMatched
	reasonUnattributedFailure  = "unattributed_replay_failure"
	ReasonOracleMismatch       = "oracle_mismatch"
	ReasonCheckpointNotReached = "checkpoint_not_reached"
	reasonMissingEvidence      = "missing_evidence"
	reasonDependencyNotPassed  = "dependency_not_passed"
	reasonPreconditionFailed   = "precondition_failed"
	ReasonAdapterError         = "adapter_error"
	ReasonCaseImportFailed     = "case_import_failed"
	ReasonReplayNotTerminal    = "replay_not_terminal"
	ReasonReplayTransport      = "replay_transport_failed"
	// Ours: the device never began the replay (another replay, an Agent
	// session or plugin maintenance held the phone, SoloPi not ready).
	ReasonReplayNotStarted     = "replay_not_started"
	ReasonTargetRestoreFailed  = "target_app_restore_failed"
	ReasonAgentStartFailed     = "agent_start_failed"
	ReasonAgentStartContract   = "agent_start_contract_invalid"
	ReasonAgentActionFailed    = "agent_action_failed"
	ReasonAgentSettleMissing   = "agent_settle_missing"
	ReasonAgentExecutionFailed = "agent_execution_failed"
	ReasonAgentCleanupFailed   = "agent_cleanup_failed"
	ReasonMissingObservation   = "missing_observation"
	ReasonModelDecisionFailed  = "model_decision_failed"
	// Ours: the run was interrupted before this work was reached.
	ReasonInterrupted = "interrupted"
	// Ours: a vision checkpoint's model could not tell, or was not asked.
	ReasonVisionUncertain = "vision_uncertain"
	reasonVisionNotJudged = "vision_not_judged"
)

// Infrastructure reports a reason that names a fault of the phone, the
// adb link, SoloPi or another owner on the phone rather than anything the
// app under test did: the work did not run, or ran without a verdict. It is
// not_tested like any reason; JUnit makes it an <error> (not <skipped>) and
// a farm may retry it on another phone.
func Infrastructure(reason string) bool { return infrastructure[reason] }

var infrastructure = map[string]bool{
	ReasonAdapterError: true, ReasonCaseImportFailed: true, ReasonReplayNotTerminal: true, ReasonReplayTransport: true,
	ReasonReplayNotStarted: true, ReasonTargetRestoreFailed: true, ReasonAgentStartFailed: true, ReasonAgentStartContract: true,
	ReasonAgentSettleMissing: true, ReasonAgentCleanupFailed: true, reasonMissingEvidence: true,
}

// Failure categories of a scenario.
const (
	CategoryCleanupFailure = "cleanup_failure"
	categoryOracleMismatch = "oracle_mismatch"
	// Ours: every checkpoint passed but the cleanup could not run or be
	// confirmed (the phone went away, the import was refused): not a
	// cleanup that failed, and not a pass either.
	CategoryCleanupNotTested = "cleanup_not_tested"
)

// SegmentOutcome is what executing one segment produced: everything the
// judge needs, nothing it must ask a device for.
type SegmentOutcome struct {
	SegmentID string
	// State is passed or failed (a replay's verdict), done (the Agent said
	// done) or not_tested.
	State string
	// Reason explains a state other than passed, failed or done ("" is
	// none, null in the report).
	Reason    string
	AgentDone bool
	// FailedStepID is the compiled step a failed replay stopped at.
	FailedStepID string
	// Observation is a dynamic segment's final observation (the last
	// settled one), as a decoded JSON object with owner tokens removed.
	Observation map[string]any
	// Evidence is what the segment left: files it wrote (type, path,
	// sha256, size) and engine notes (type, content).
	Evidence []Evidence
	// Vision holds the verdicts of vision checkpoints judged on this
	// segment's final screenshot, by checkpoint ID.
	Vision map[string]VisionVerdict
	// Error is the text of an adapter error (not in the report).
	Error string
}

// VisionVerdict is the vision model's judgement of one vision checkpoint.
type VisionVerdict struct {
	// Status is passed, failed or not_tested (the model could not tell).
	Status string
	// Reason is the model's own explanation.
	Reason   string
	Evidence []Evidence
}

// Evidence is one item of evidence: a file (Path, SHA256 of its bytes,
// Size) or an engine note (Content; its SHA256 is the canonical hash of
// the entry).
type Evidence struct {
	Type    string
	Path    string
	SHA256  string
	Size    int64
	Content map[string]any
}

// RunRecord is everything a run did, in the form the judge reads: the
// outcome of every segment that ran.
type RunRecord struct {
	ReportID    string
	StartedAt   int64 // ms
	FinishedAt  int64 // ms
	Interrupted bool
	// Outcomes are keyed by OutcomeKey(scenarioID, segmentID).
	Outcomes map[string]*SegmentOutcome
}

// outcomeKey keys a segment's outcome (segment IDs are unique within a
// scenario).
func outcomeKey(scenarioID, segmentID string) string { return scenarioID + "/" + segmentID }

// Record stores a segment's outcome.
func (r *RunRecord) Record(scenarioID string, o *SegmentOutcome) {
	if r.Outcomes == nil {
		r.Outcomes = map[string]*SegmentOutcome{}
	}
	r.Outcomes[outcomeKey(scenarioID, o.SegmentID)] = o
}
