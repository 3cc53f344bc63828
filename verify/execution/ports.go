package execution

import (
	"context"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/verify"
)

// The engine reaches the phone only through these ports. cmd/solopi
// implements them with the same in-process code as the case-import, run
// and agent-* commands; tests implement them with scripted fakes.
//
// Every port call takes the run's context: when it is cancelled
// (SIGINT/SIGTERM) the implementation ends or cancels exactly what it
// started (the replay it launched, the step it sent) and returns an error
// for which fault.IsInterrupt is true. Errors of kind fault.Failed are
// business outcomes that still carry a result (a refused import, a failed
// replay, a rejected step); any other error means the call could not be
// completed (transport, timeout). Only a replay that ran its steps to
// passed or failed is a product verdict; everything else (a refused
// import, a replay that never started, was cancelled by someone else, lost
// or cut off) leaves its segment not_tested, whatever the phase.

// CaseRunner imports and replays compiled cases.
type CaseRunner interface {
	// ImportCase imports c, replacing a case of the same name, without
	// high-risk confirmation (a compiled case holds none). caseFile is the
	// case as written to the segment's evidence, with the requirement's
	// secrets hidden: the import takes c itself. The receipt is the
	// import's JSON answer, written as evidence whether or not it
	// succeeded.
	ImportCase(ctx context.Context, c *verify.Case, caseFile string) (ImportResult, error)
	// RunCase replays a case by name and waits for its terminal state,
	// collecting the replay's files into req.ArtifactsDir.
	RunCase(ctx context.Context, req RunRequest) (RunResult, error)
}

// ImportResult is the answer of an import.
type ImportResult struct {
	// Receipt is the import's JSON object (written as import-receipt.json).
	Receipt map[string]any
	// OK reports a successful import.
	OK bool
}

// RunRequest asks for one replay.
type RunRequest struct {
	CaseName      string
	TargetPackage string
	// RestartApp restarts the target app before the replay; nil leaves
	// the run's default. The engine forces false for cleanup.
	RestartApp   *bool
	ArtifactsDir string
	// SecretParams are the case's parameters that hold a value the
	// requirement marks secret (verify.Plan.Secrets): the replay keeps
	// them out of its answer and files. Never nil.
	SecretParams []casefile.ParamRef
}

// RunResult is the answer of a replay.
type RunResult struct {
	// Response is the run's JSON object (written as run-response.json):
	// its state and results[].exceptionStepId are read from it.
	Response map[string]any
	// Files are the replay's evidence files by name (result, screenshot,
	// logcat, manifest, and device/<path> for each file pulled from the
	// device), absolute paths inside the request's ArtifactsDir. Each is
	// evidence of type replay_<name> (replay_device for device files).
	Files map[string]string
	// NotStarted reports a case the device never began: another replay,
	// an Agent session or plugin maintenance held the phone, or SoloPi was
	// not ready to replay (the response says which). Whatever state the
	// response carries (a lease refusal is published as a failed run), the
	// case did not fail: the segment is not_tested.
	NotStarted bool
}

// AgentSession drives one Agent session on the phone.
type AgentSession interface {
	// LaunchTarget brings the app under test to the foreground (its
	// launcher activity).
	LaunchTarget(ctx context.Context, pkg string) error
	// Start starts a session owned by req.OwnerToken with the budget and
	// waits for its first observation.
	Start(ctx context.Context, req StartRequest) (*StartResult, error)
	// Act sends one typed action and waits for its receipt.
	Act(ctx context.Context, req ActRequest) (*ActResult, error)
	// Screenshot saves the screenshot of an observation of a live session
	// to dest (a PNG), for a vision checkpoint and the vision provider.
	// The provider's ref has no owner token (providers never see it):
	// reading an observation's screenshot must not need one.
	Screenshot(ctx context.Context, ref SessionRef, observation map[string]any, dest string) error
	// Timeline reads the session's timeline (written as evidence).
	Timeline(ctx context.Context, ref SessionRef) (map[string]any, error)
	// End ends the session (after the Agent said done) and Cancel cancels
	// it (every other way out); both wait for the state to settle.
	End(ctx context.Context, ref SessionRef) (map[string]any, error)
	Cancel(ctx context.Context, ref SessionRef) (map[string]any, error)
}

// SessionRef names a session and carries its owner token. The engine mints
// a fresh "verification-<32 hex>" token per segment and removes it from
// everything it writes.
type SessionRef struct {
	SessionID  string
	OwnerToken redact.Secret
}

// StartRequest starts a session.
type StartRequest struct {
	OwnerToken redact.Secret
	Budget     verify.Budget
}

// StartResult is a started session.
type StartResult struct {
	// Response is the start command's JSON object.
	Response    map[string]any
	SessionID   string
	Observation map[string]any
}

// ActRequest is one typed action. NodeID is set for node actions (the
// engine resolves a selector to the one matching node first); the other
// fields are set when the action takes them.
type ActRequest struct {
	Session       SessionRef
	StepID        string
	ObservationID string
	Action        string
	NodeID        string
	Text          *string
	Direction     string
	DurationMs    *int64
	Distance      *int64
}

// ActResult is a step's receipt.
type ActResult struct {
	// Response is the act command's JSON object.
	Response map[string]any
	// Status is the receipt status (succeeded, rejected, failed).
	Status string
	// Settled is the settled observation of a succeeded step.
	Settled map[string]any
}

// DecisionProvider decides an explore step's next move from what the Agent
// sees. It has no device access and no say in the verdict: a done ends
// exploration, the oracles decide.
type DecisionProvider interface {
	// Decide returns one decision object, checked exactly like a decision
	// from a decisions file:
	//   {"type":"act","action":{typed action},"stepId"?,"modelReceipt"?,"fallback"?}
	//   {"type":"done","reason"?,"modelReceipt"?,"fallback"?}
	//   {"type":"blocked","reason"?,"modelReceipt"?}
	// An error is a model failure (the segment is not_tested,
	// model_decision_failed) unless it is an interrupt.
	Decide(ctx context.Context, in DecisionContext) (map[string]any, error)
}

// DecisionContext is what a provider sees: the segment, the explore goal,
// the actions it may use, the decision's index and the current observation
// (owner tokens removed). It is also the JSON body the cloud provider
// posts.
type DecisionContext struct {
	ScenarioID     string         `json:"scenarioId"`
	SegmentID      string         `json:"segmentId"`
	StepID         string         `json:"stepId"`
	StepIndex      int            `json:"stepIndex"`
	Goal           string         `json:"goal"`
	AllowedActions []string       `json:"allowedActions"`
	Observation    map[string]any `json:"observation"`
	// Session, SessionID, Budget and EvidenceDir are for in-process
	// providers (not part of the posted context): the vision provider
	// fetches the observation's screenshot through the session (by its
	// SessionID only: providers never see the owner token), bounds its
	// planner by the explore step's budget and keeps its trajectory and
	// screenshots in the segment's evidence directory.
	Session     AgentSession  `json:"-"`
	SessionID   string        `json:"-"`
	Budget      verify.Budget `json:"-"`
	EvidenceDir string        `json:"-"`
}

// VisionJudge decides vision checkpoints: does this screenshot show the
// assertion? It is the planner's isolated completion review.
type VisionJudge interface {
	Review(ctx context.Context, req visionRequest) (verify.VisionVerdict, error)
}

// visionRequest is one vision checkpoint on one screenshot.
type visionRequest struct {
	ScenarioID   string
	CheckpointID string
	Assertion    string
	// Screenshot is a PNG file on the host.
	Screenshot string
	// EvidenceDir is where the judge may write its evidence (model
	// answers, the coordinate profile), a directory inside the run's
	// Evidence, which writes it; it returns them in the verdict.
	Evidence    *artifacts.Dir
	EvidenceDir string
	// Redactor hides the run's owner tokens and the requirement's
	// secrets in what the judge writes.
	Redactor *redact.Redactor
}
