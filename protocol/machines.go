package protocol

// The state machines of the SoloPi control protocol and of managed execution,
// one function each (docs/state-machines.md).
// A function builds a fresh table so that no caller can change another's.

// Replay states (docs/state-machines.md#replay).
const (
	ReplayIdle            State = "idle"
	ReplayRunning         State = "running"
	replayCancelRequested State = "cancel_requested"
	ReplayPassed          State = "passed"
	ReplayFailed          State = "failed"
	ReplayCancelled       State = "cancelled"
)

// Replay events.
const (
	EvReplayStart        Event = "start"
	EvReplayLeaseBusy    Event = "lease_busy"
	EvReplayPassed       Event = "results_passed"
	EvReplayFailed       Event = "results_failed"
	EvReplayStartFailed  Event = "start_failed"
	EvReplayCancel       Event = "cancel"
	EvReplayCancelled    Event = "manager_stopped"
	EvReplayPreStartStop Event = "cancelled_before_start"
)

// Replay is one harness run: a start either runs or is refused at once
// because the device-control lease is busy (a visible failed run).
func Replay() *Machine {
	return &Machine{
		Name:     "replay",
		Initial:  ReplayIdle,
		States:   []State{ReplayIdle, ReplayRunning, replayCancelRequested, ReplayPassed, ReplayFailed, ReplayCancelled},
		Terminal: []State{ReplayPassed, ReplayFailed, ReplayCancelled},
		Live:     []State{ReplayRunning, replayCancelRequested},
		Transitions: table(
			edges(EvReplayStart, ReplayRunning, ReplayIdle),
			edges(EvReplayLeaseBusy, ReplayFailed, ReplayIdle),
			edges(EvReplayPassed, ReplayPassed, ReplayRunning),
			edges(EvReplayFailed, ReplayFailed, ReplayRunning),
			edges(EvReplayStartFailed, ReplayFailed, ReplayRunning),
			edges(EvReplayCancel, replayCancelRequested, ReplayRunning),
			edges(EvReplayCancelled, ReplayCancelled, replayCancelRequested),
			edges(EvReplayPreStartStop, ReplayCancelled, replayCancelRequested),
		),
	}
}

// Receipt states shared by the request/receipt machines.
const (
	ReceiptNew State = "new"
)

// Internal adb-connect receipt states (docs/state-machines.md#adb-connect).
const (
	adbConnecting State = "connecting"
	AdbConnected  State = "connected"
	AdbFailed     State = "failed"
)

// Adb-connect events.
const (
	EvAdbAttempt        Event = "attempt"
	EvAdbAlreadyHealthy Event = "already_healthy"
	EvAdbRejected       Event = "rejected"
	EvAdbConnected      Event = "connected"
	EvAdbFailed         Event = "connect_failed"
)

// AdbConnect is one adb-connect receipt, keyed by requestId.
func AdbConnect() *Machine {
	return &Machine{
		Name:     "adb-connect",
		Initial:  ReceiptNew,
		States:   []State{ReceiptNew, adbConnecting, AdbConnected, AdbFailed},
		Terminal: []State{AdbConnected, AdbFailed},
		Live:     []State{adbConnecting},
		Transitions: table(
			edges(EvAdbAttempt, adbConnecting, ReceiptNew),
			edges(EvAdbAlreadyHealthy, AdbConnected, ReceiptNew),
			edges(EvAdbRejected, AdbFailed, ReceiptNew),
			edges(EvAdbConnected, AdbConnected, adbConnecting),
			edges(EvAdbFailed, AdbFailed, adbConnecting),
		),
	}
}

// Case import / delete receipt states as the host sees them
// (docs/state-machines.md#case-import-and-case-delete): the device answers
// synchronously into a single slot; until the slot holds our requestId the
// host keeps polling.
const (
	caseReceiptPending   State = "pending"
	caseReceiptSucceeded State = "succeeded"
	caseReceiptFailed    State = "failed"
)

// Case receipt events.
const (
	EvReceiptStored   Event = "receipt_stored"
	EvReceiptRejected Event = "receipt_rejected"
)

func caseReceipt(name string) *Machine {
	return &Machine{
		Name:     name,
		Initial:  caseReceiptPending,
		States:   []State{caseReceiptPending, caseReceiptSucceeded, caseReceiptFailed},
		Terminal: []State{caseReceiptSucceeded, caseReceiptFailed},
		Live:     []State{caseReceiptPending},
		Transitions: table(
			edges(EvReceiptStored, caseReceiptSucceeded, caseReceiptPending),
			edges(EvReceiptRejected, caseReceiptFailed, caseReceiptPending),
		),
	}
}

// CaseImport is one case-import request.
func CaseImport() *Machine { return caseReceipt("case-import") }

// CaseDelete is one case-delete request.
func CaseDelete() *Machine { return caseReceipt("case-delete") }

// Agent session states (docs/state-machines.md#agent-session).
const (
	AgentIdle      State = "idle"
	AgentActive    State = "active"
	AgentPaused    State = "paused"
	AgentActing    State = "acting"
	AgentEnded     State = "ended"
	AgentCancelled State = "cancelled"
	agentFailed    State = "failed"
	agentExpired   State = "expired"
)

// Agent session events.
const (
	EvAgentStart    Event = "start"
	EvAgentPause    Event = "pause"
	EvAgentResume   Event = "resume"
	EvAgentAccept   Event = "action_accepted"
	EvAgentSettled  Event = "action_settled"
	EvAgentEnd      Event = "end"
	EvAgentCancel   Event = "cancel"
	EvAgentFail     Event = "fail"
	EvAgentExpire   Event = "expire"
	EvAgentActFails Event = "action_failed"
)

// AgentSession is one dynamic Agent session (protocol 1.0).
func AgentSession() *Machine {
	live := []State{AgentActive, AgentPaused, AgentActing}
	return &Machine{
		Name:     "agent-session",
		Initial:  AgentIdle,
		States:   []State{AgentIdle, AgentActive, AgentPaused, AgentActing, AgentEnded, AgentCancelled, agentFailed, agentExpired},
		Terminal: []State{AgentEnded, AgentCancelled, agentFailed, agentExpired},
		Live:     live,
		Transitions: table(
			edges(EvAgentStart, AgentActive, AgentIdle),
			edges(EvAgentPause, AgentPaused, AgentActive),
			edges(EvAgentResume, AgentActive, AgentPaused),
			edges(EvAgentAccept, AgentActing, AgentActive),
			edges(EvAgentSettled, AgentActive, AgentActing),
			edges(EvAgentActFails, agentFailed, AgentActing),
			// end is refused while acting ("Cancel the session while an action is executing").
			edges(EvAgentEnd, AgentEnded, AgentActive, AgentPaused),
			edges(EvAgentCancel, AgentCancelled, live...),
			edges(EvAgentFail, agentFailed, live...),
			edges(EvAgentExpire, agentExpired, live...),
		),
	}
}

// Agent receipt states (docs/state-machines.md#agent-receipt).
const (
	receiptAccepted  State = "accepted"
	receiptRejected  State = "rejected"
	receiptSucceeded State = "succeeded"
	receiptFailed    State = "failed"
)

// Agent receipt events.
const (
	EvStepAccept  Event = "accept"
	EvStepReject  Event = "reject"
	EvStepSucceed Event = "succeed"
	EvStepFail    Event = "fail"
)

// AgentReceipt is the receipt of one act step. A step cancelled while acting
// legitimately stays accepted forever (the device never finalizes it), so
// accepted is live, not terminal.
func AgentReceipt() *Machine {
	return &Machine{
		Name:     "agent-receipt",
		Initial:  ReceiptNew,
		States:   []State{ReceiptNew, receiptAccepted, receiptRejected, receiptSucceeded, receiptFailed},
		Terminal: []State{receiptRejected, receiptSucceeded, receiptFailed},
		Live:     []State{receiptAccepted},
		Transitions: table(
			edges(EvStepAccept, receiptAccepted, ReceiptNew),
			edges(EvStepReject, receiptRejected, ReceiptNew),
			edges(EvStepSucceed, receiptSucceeded, receiptAccepted),
			edges(EvStepFail, receiptFailed, receiptAccepted),
		),
	}
}

// Session states shared by record, performance, display and stress.
const (
	SessionIdle     State = "idle"
	SessionStarting State = "starting"
	SessionStopping State = "stopping"
	SessionStopped  State = "stopped"
	SessionFailed   State = "failed"
	// SessionRecording is record's and performance's working state.
	SessionRecording State = "recording"
	// SessionRunning is performance display's and stress's working state.
	SessionRunning State = "running"
)

// Session events.
const (
	EvStart           Event = "start"
	EvReady           Event = "ready"
	EvStop            Event = "stop"
	EvAutoStop        Event = "auto_stop"
	EvStopped         Event = "stopped"
	EvError           Event = "error"
	EvCleanupPending  Event = "cleanup_incomplete"
	EvStopBeforeStart Event = "stop_before_start"
)

// Record is an interactive recording session (docs/state-machines.md#record).
func Record() *Machine {
	return &Machine{
		Name:     "record",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, SessionStarting, SessionRecording, SessionStopping, SessionStopped, SessionFailed},
		Terminal: []State{SessionStopped, SessionFailed},
		Live:     []State{SessionStarting, SessionRecording, SessionStopping},
		Transitions: table(
			edges(EvStart, SessionStarting, SessionIdle),
			edges(EvReady, SessionRecording, SessionStarting),
			edges(EvStopBeforeStart, SessionStopped, SessionStarting),
			edges(EvStop, SessionStopping, SessionRecording),
			edges(EvStopped, SessionStopped, SessionStopping),
			edges(EvError, SessionFailed, SessionStarting, SessionRecording, SessionStopping),
		),
	}
}

// Screen-record states (docs/state-machines.md#screen-record).
const (
	ScreenPending State = "pending-user-confirmation"
)

// Screen-record events.
const (
	EvUserGranted    Event = "user_granted"
	EvEncoderRunning Event = "encoder_running"
)

// ScreenRecord is a standalone MediaProjection recording.
func ScreenRecord() *Machine {
	live := []State{ScreenPending, SessionStarting, SessionRecording, SessionStopping}
	return &Machine{
		Name:     "screen-record",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, ScreenPending, SessionStarting, SessionRecording, SessionStopping, SessionStopped, SessionFailed},
		Terminal: []State{SessionStopped, SessionFailed},
		Live:     live,
		Transitions: table(
			edges(EvStart, ScreenPending, SessionIdle),
			edges(EvUserGranted, SessionStarting, ScreenPending),
			edges(EvStopBeforeStart, SessionStopped, ScreenPending),
			edges(EvEncoderRunning, SessionRecording, SessionStarting),
			edges(EvStop, SessionStopping, SessionStarting, SessionRecording),
			edges(EvAutoStop, SessionStopping, SessionRecording),
			edges(EvStopped, SessionStopped, SessionStopping),
			edges(EvError, SessionFailed, live...),
		),
	}
}

// Scan states (docs/state-machines.md#scan).
const (
	ScanPendingPermission State = "pending-camera-permission"
	ScanScanning          State = "scanning"
	ScanCompleted         State = "completed"
	ScanCancelled         State = "cancelled"
)

// Scan events.
const (
	EvPermissionMissing Event = "permission_missing"
	EvPermissionGranted Event = "permission_granted"
	EvCameraReady       Event = "camera_ready"
	EvCodeRead          Event = "code_read"
	EvCancel            Event = "cancel"
)

// Scan is a camera scanning session.
func Scan() *Machine {
	live := []State{SessionStarting, ScanPendingPermission, ScanScanning}
	return &Machine{
		Name:     "scan",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, SessionStarting, ScanPendingPermission, ScanScanning, ScanCompleted, ScanCancelled, SessionFailed},
		Terminal: []State{ScanCompleted, ScanCancelled, SessionFailed},
		Live:     live,
		Transitions: table(
			edges(EvStart, SessionStarting, SessionIdle),
			edges(EvPermissionMissing, ScanPendingPermission, SessionStarting),
			edges(EvCameraReady, ScanScanning, SessionStarting),
			edges(EvPermissionGranted, ScanScanning, ScanPendingPermission),
			edges(EvCodeRead, ScanCompleted, ScanScanning),
			edges(EvCancel, ScanCancelled, live...),
			edges(EvError, SessionFailed, live...),
		),
	}
}

// Video analysis states (docs/state-machines.md#video-analysis).
const (
	AnalysisAnalyzing State = "analyzing"
	AnalysisCompleted State = "completed"
	AnalysisFailed    State = "failed"
)

// Video analysis events.
const (
	EvAnalysisAccept   Event = "accept"
	EvAnalysisReject   Event = "reject"
	EvAnalysisComplete Event = "complete"
	EvAnalysisFail     Event = "fail"
)

// VideoAnalysis is one analysis request, keyed by requestId. Every rejection
// after the requestId is known is a stored failed receipt.
func VideoAnalysis() *Machine {
	return &Machine{
		Name:     "video-analysis",
		Initial:  ReceiptNew,
		States:   []State{ReceiptNew, AnalysisAnalyzing, AnalysisCompleted, AnalysisFailed},
		Terminal: []State{AnalysisCompleted, AnalysisFailed},
		Live:     []State{AnalysisAnalyzing},
		Transitions: table(
			edges(EvAnalysisAccept, AnalysisAnalyzing, ReceiptNew),
			edges(EvAnalysisReject, AnalysisFailed, ReceiptNew),
			edges(EvAnalysisComplete, AnalysisCompleted, AnalysisAnalyzing),
			edges(EvAnalysisFail, AnalysisFailed, AnalysisAnalyzing),
		),
	}
}

// Performance is a performance collection session
// (docs/state-machines.md#performance). Stopping may stay in stopping while
// cleanup is incomplete (stopRetryable), and a stop while starting waits in
// stopping for the permission callback.
func Performance() *Machine {
	return &Machine{
		Name:     "performance",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, SessionStarting, SessionRecording, SessionStopping, SessionStopped, SessionFailed},
		Terminal: []State{SessionStopped, SessionFailed},
		Live:     []State{SessionStarting, SessionRecording, SessionStopping},
		Transitions: table(
			edges(EvStart, SessionStarting, SessionIdle),
			edges(EvReady, SessionRecording, SessionStarting),
			edges(EvStop, SessionStopping, SessionStarting, SessionRecording),
			edges(EvCleanupPending, SessionStopping, SessionStarting, SessionStopping),
			edges(EvStopped, SessionStopped, SessionStopping),
			edges(EvError, SessionFailed, SessionStarting, SessionRecording, SessionStopping),
		),
	}
}

// PerformanceDisplay is the live monitor lease
// (docs/state-machines.md#performance-display).
func PerformanceDisplay() *Machine {
	return &Machine{
		Name:     "performance-display",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, SessionStarting, SessionRunning, SessionStopping, SessionStopped, SessionFailed},
		Terminal: []State{SessionStopped, SessionFailed},
		Live:     []State{SessionStarting, SessionRunning, SessionStopping},
		Transitions: table(
			edges(EvStart, SessionStarting, SessionIdle),
			edges(EvReady, SessionRunning, SessionStarting),
			edges(EvStop, SessionStopping, SessionStarting, SessionRunning),
			edges(EvCleanupPending, SessionStopping, SessionStarting, SessionStopping),
			edges(EvStopped, SessionStopped, SessionStopping),
			edges(EvError, SessionFailed, SessionStarting, SessionRunning, SessionStopping),
		),
	}
}

// Stress is a bounded CPU and memory load session
// (docs/state-machines.md#stress).
func Stress() *Machine {
	return &Machine{
		Name:     "stress",
		Initial:  SessionIdle,
		States:   []State{SessionIdle, SessionStarting, SessionRunning, SessionStopping, SessionStopped, SessionFailed},
		Terminal: []State{SessionStopped, SessionFailed},
		Live:     []State{SessionStarting, SessionRunning, SessionStopping},
		Transitions: table(
			edges(EvStart, SessionStarting, SessionIdle),
			edges(EvReady, SessionRunning, SessionStarting),
			edges(EvStopBeforeStart, SessionStopped, SessionStarting),
			edges(EvStop, SessionStopping, SessionRunning),
			edges(EvAutoStop, SessionStopping, SessionRunning),
			edges(EvStopped, SessionStopped, SessionStopping),
			edges(EvError, SessionFailed, SessionStarting, SessionStopping),
		),
	}
}

// Mutation receipt states for plugins and history deletes
// (docs/state-machines.md#device-mutations).
const (
	MutationInProgress      State = "in_progress"
	MutationCompleted       State = "completed"
	MutationRestartRequired State = "completed_restart_required"
	MutationFailed          State = "failed"
)

// Mutation events.
const (
	EvMutationAccept   Event = "accept"
	EvMutationComplete Event = "complete"
	EvMutationFail     Event = "fail"
)

// PluginMutation is a plugin import or remove request.
func PluginMutation() *Machine {
	return &Machine{
		Name:     "plugin-mutation",
		Initial:  ReceiptNew,
		States:   []State{ReceiptNew, MutationInProgress, MutationRestartRequired, MutationFailed},
		Terminal: []State{MutationRestartRequired, MutationFailed},
		Live:     []State{MutationInProgress},
		Transitions: table(
			edges(EvMutationAccept, MutationInProgress, ReceiptNew),
			edges(EvMutationComplete, MutationRestartRequired, MutationInProgress),
			edges(EvMutationFail, MutationFailed, MutationInProgress),
		),
	}
}

// HistoryDelete is a replay or performance history delete request.
func HistoryDelete() *Machine {
	return &Machine{
		Name:     "history-delete",
		Initial:  ReceiptNew,
		States:   []State{ReceiptNew, MutationInProgress, MutationCompleted, MutationFailed},
		Terminal: []State{MutationCompleted, MutationFailed},
		Live:     []State{MutationInProgress},
		Transitions: table(
			edges(EvMutationAccept, MutationInProgress, ReceiptNew),
			edges(EvMutationComplete, MutationCompleted, MutationInProgress),
			edges(EvMutationFail, MutationFailed, MutationInProgress),
		),
	}
}

// Managed execution states: tasks, shards and attempts of a device farm
// (docs/managed.md#state-machines).
const (
	ManagedQueued          State = "queued"
	ManagedLeased          State = "leased"
	ManagedRunning         State = "running"
	ManagedPassed          State = "passed"
	ManagedFailed          State = "failed"
	ManagedNotTested       State = "not_tested"
	ManagedCancelled       State = "cancelled"
	managedRetryableFailed State = "retryable_failed"
	managedExpired         State = "expired"
)

// Managed events.
const (
	EvClaim     Event = "claim"             // a worker leased a device for the shard
	EvBegin     Event = "begin"             // the worker started the attempt
	EvPass      Event = "pass"              // Result Judge verdict passed
	EvFailVerdt Event = "fail"              // Result Judge verdict failed (final, never retried)
	EvNotTested Event = "not_tested"        // Result Judge verdict not_tested (final, never retried)
	EvGiveUp    Event = "give_up"           // infrastructure failure with no retry left
	EvRetryable Event = "retryable_failure" // infrastructure failure that will be retried
	EvRelease   Event = "release"           // a stopping worker handed the shard back
	EvRequeue   Event = "requeue"           // back to the queue (retry, expiry, hand-back; a task with no active shard)
	EvExpire    Event = "expire"            // the lease ran out before the worker reported
	EvCancelled Event = "cancel"            // the owner cancelled the task
)

// ManagedTask is a submitted verification task. Its state follows its shards:
// running while one is leased or running, terminal once all are.
func ManagedTask() *Machine {
	return &Machine{
		Name:     "managed-task",
		Initial:  ManagedQueued,
		States:   []State{ManagedQueued, ManagedRunning, ManagedPassed, ManagedFailed, ManagedNotTested, ManagedCancelled},
		Terminal: []State{ManagedPassed, ManagedFailed, ManagedNotTested, ManagedCancelled},
		Live:     []State{ManagedQueued, ManagedRunning},
		Transitions: table(
			edges(EvClaim, ManagedRunning, ManagedQueued),
			edges(EvRequeue, ManagedQueued, ManagedRunning),
			edges(EvPass, ManagedPassed, ManagedRunning),
			edges(EvFailVerdt, ManagedFailed, ManagedRunning),
			edges(EvNotTested, ManagedNotTested, ManagedQueued, ManagedRunning),
			edges(EvCancelled, ManagedCancelled, ManagedQueued, ManagedRunning),
		),
	}
}

// ManagedShard is one replica of one matrix target: it is claimed onto a
// device, runs, and ends with the Judge's verdict, not_tested when retries
// run out, or cancelled.
func ManagedShard() *Machine {
	active := []State{ManagedLeased, ManagedRunning}
	return &Machine{
		Name:     "managed-shard",
		Initial:  ManagedQueued,
		States:   []State{ManagedQueued, ManagedLeased, ManagedRunning, ManagedPassed, ManagedFailed, ManagedNotTested, ManagedCancelled},
		Terminal: []State{ManagedPassed, ManagedFailed, ManagedNotTested, ManagedCancelled},
		Live:     []State{ManagedQueued, ManagedLeased, ManagedRunning},
		Transitions: table(
			edges(EvClaim, ManagedLeased, ManagedQueued),
			edges(EvBegin, ManagedRunning, ManagedLeased),
			edges(EvPass, ManagedPassed, active...),
			edges(EvFailVerdt, ManagedFailed, active...),
			edges(EvNotTested, ManagedNotTested, active...),
			edges(EvGiveUp, ManagedNotTested, ManagedQueued, ManagedLeased, ManagedRunning),
			edges(EvRequeue, ManagedQueued, active...),
			edges(EvCancelled, ManagedCancelled, ManagedQueued, ManagedLeased, ManagedRunning),
		),
	}
}

// ManagedAttempt is one claim of a shard by a worker on one device
// generation.
func ManagedAttempt() *Machine {
	active := []State{ManagedLeased, ManagedRunning}
	return &Machine{
		Name:     "managed-attempt",
		Initial:  ManagedLeased,
		States:   []State{ManagedLeased, ManagedRunning, ManagedPassed, ManagedFailed, ManagedNotTested, managedRetryableFailed, managedExpired, ManagedCancelled},
		Terminal: []State{ManagedPassed, ManagedFailed, ManagedNotTested, managedRetryableFailed, managedExpired, ManagedCancelled},
		Live:     active,
		Transitions: table(
			edges(EvBegin, ManagedRunning, ManagedLeased),
			edges(EvPass, ManagedPassed, active...),
			edges(EvFailVerdt, ManagedFailed, active...),
			edges(EvNotTested, ManagedNotTested, active...),
			edges(EvGiveUp, ManagedFailed, active...),
			edges(EvRetryable, managedRetryableFailed, active...),
			edges(EvRelease, managedRetryableFailed, active...),
			edges(EvExpire, managedExpired, active...),
			edges(EvCancelled, ManagedCancelled, active...),
		),
	}
}
