package verify

import (
	"encoding/json"
)

// Report is the verification report (solopi.ai.verification-report/v1).
type Report struct {
	SchemaVersion      string `json:"schemaVersion"`
	ReportID           string `json:"reportId"`
	RequirementID      string `json:"requirementId"`
	PlanFingerprint    string `json:"planFingerprint"`
	OutcomeFingerprint string `json:"outcomeFingerprint"`
	Status             string `json:"status"`
	// Interrupted marks a partial report written after SIGINT/SIGTERM.
	Interrupted        bool             `json:"interrupted,omitempty"`
	StartedAt          int64            `json:"startedAt"`
	FinishedAt         int64            `json:"finishedAt"`
	AcceptanceCriteria []acResult       `json:"acceptanceCriteria"`
	Scenarios          []ScenarioResult `json:"scenarios"`
	Evidence           []evidenceEntry  `json:"evidence"`
	Artifacts          *ReportArtifacts `json:"artifacts,omitempty"`
}

// ReportArtifacts are the absolute paths of the plan copy and event log.
type ReportArtifacts struct {
	Plan   string `json:"plan"`
	Events string `json:"events"`
}

// acResult is the verdict of one acceptance criterion.
type acResult struct {
	AcceptanceCriterionID string   `json:"acceptanceCriterionId"`
	Status                string   `json:"status"`
	CheckpointRefs        []string `json:"checkpointRefs"`
}

// ScenarioResult is the verdict of one scenario.
type ScenarioResult struct {
	ScenarioID    string             `json:"scenarioId"`
	Route         string             `json:"route"`
	Status        string             `json:"status"`
	Failure       *failure           `json:"failure"`
	Segments      []SegmentResult    `json:"segments"`
	Preconditions phaseResult        `json:"preconditions"`
	Checkpoints   []CheckpointResult `json:"checkpoints"`
	Cleanup       phaseResult        `json:"cleanup"`
}

// phaseResult is the status of a scenario's preconditions or cleanup.
type phaseResult struct {
	Status       string   `json:"status"`
	EvidenceRefs []string `json:"evidenceRefs"`
}

// failure says why a scenario did not pass.
type failure struct {
	Category     string
	CheckpointID string
	Reason       string   // not_tested only ("" is null)
	Dependencies []string // dependency_not_passed only
}

// MarshalJSON writes the keys each category has.
func (f failure) MarshalJSON() ([]byte, error) {
	m := map[string]any{"category": f.Category}
	switch {
	case f.Dependencies != nil:
		m["dependencies"] = f.Dependencies
	case f.Category == CategoryCleanupFailure:
	case f.Category == categoryOracleMismatch:
		m["checkpointId"] = f.CheckpointID
	default:
		m["checkpointId"], m["reason"] = nullable(f.CheckpointID), nullable(f.Reason)
	}
	return json.Marshal(m)
}

// SegmentResult is what one executed segment did.
type SegmentResult struct {
	SegmentID    string
	Phase        string
	Route        string
	State        string
	AgentDone    bool
	Reason       string
	EvidenceRefs []string
}

// MarshalJSON writes agentDone and reason for test segments only.
func (s SegmentResult) MarshalJSON() ([]byte, error) {
	m := map[string]any{"segmentId": s.SegmentID, "phase": s.Phase, "route": s.Route, "state": nullable(s.State), "evidenceRefs": nonNil(s.EvidenceRefs)}
	if s.Phase == PhaseTest {
		m["agentDone"], m["reason"] = s.AgentDone, nullable(s.Reason)
	}
	return json.Marshal(m)
}

// CheckpointResult is the verdict of one checkpoint.
type CheckpointResult struct {
	CheckpointID       string
	AcceptanceCriteria []string
	Oracle             map[string]any
	EvidenceRefs       []string
	Status             string
	Reason             string
	// Dynamic is set for checkpoints judged on an observation: the report
	// then carries actual (null when no single node matched).
	Dynamic bool
	Actual  *string
	// Judge is "vision" for a vision oracle (absent for UI oracles);
	// Detail is the vision model's reason.
	Judge  string
	Detail string
}

// MarshalJSON writes actual for dynamic checkpoints and judge/detail for
// vision ones.
func (c CheckpointResult) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"checkpointId": c.CheckpointID, "acceptanceCriteria": nonNil(c.AcceptanceCriteria), "oracle": c.Oracle,
		"evidenceRefs": nonNil(c.EvidenceRefs), "status": c.Status, "reason": nullable(c.Reason),
	}
	if c.Dynamic {
		m["actual"] = c.Actual
	}
	if c.Judge != "" {
		m["judge"] = c.Judge
		if c.Detail != "" {
			m["detail"] = c.Detail
		}
	}
	return json.Marshal(m)
}

// evidenceEntry is one evidence item of the report, addressed by content.
type evidenceEntry struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Path    string         `json:"path,omitempty"`
	SHA256  string         `json:"sha256"`
	Size    *int64         `json:"size,omitempty"`
	Content map[string]any `json:"content,omitempty"`
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// outcomeTree is what the outcome fingerprint hashes: the plan, the
// verdicts and the checkpoint reasons, nothing that changes between two
// runs of the same behaviour (IDs, times, paths, evidence).
func outcomeTree(planFingerprint, status string, scenarios []ScenarioResult) map[string]any {
	scs := make([]any, len(scenarios))
	for i, s := range scenarios {
		cps := make([]any, len(s.Checkpoints))
		for j, c := range s.Checkpoints {
			cps[j] = map[string]any{"checkpointId": c.CheckpointID, "status": c.Status, "reason": nullable(c.Reason)}
		}
		var category any
		if s.Failure != nil {
			category = s.Failure.Category
		}
		scs[i] = map[string]any{"scenarioId": s.ScenarioID, "status": s.Status, "failureCategory": category, "checkpoints": cps, "cleanup": s.Cleanup.Status}
	}
	return map[string]any{"planFingerprint": planFingerprint, "status": status, "scenarios": scs}
}
