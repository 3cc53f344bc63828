package agentloop

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
)

// trajectorySchemaVersion is the trajectory format version.
const trajectorySchemaVersion = "1.3"

// Policy is the runtime policy block every trajectory carries: the model
// saw screenshots only, no Android semantics, no deterministic app launch
// and no external API action.
type Policy struct {
	PolicyObservation              string `json:"policy_observation"`
	AndroidSemanticsVisibleToModel bool   `json:"android_semantics_visible_to_model"`
	DeterministicAppLaunch         bool   `json:"deterministic_app_launch"`
	ExternalAPIAction              bool   `json:"external_api_action"`
}

// StrictPolicy is the only policy this runtime has.
func StrictPolicy() Policy {
	return Policy{PolicyObservation: "screenshot_only"}
}

// trajectory is the audit file of one run.
type trajectory struct {
	SchemaVersion   string             `json:"schema_version"`
	RunID           string             `json:"run_id"`
	Task            string             `json:"task"`
	DeviceMode      string             `json:"device_mode"`
	StartedAt       time.Time          `json:"started_at"`
	FinishedAt      time.Time          `json:"finished_at"`
	DurationSeconds float64            `json:"duration_seconds"`
	Success         bool               `json:"success"`
	Outcome         string             `json:"outcome"`
	Exit            int                `json:"exit_code"`
	FinalMessage    string             `json:"final_message"`
	ErrorCode       string             `json:"error_code,omitempty"`
	Policy          Policy             `json:"policy"`
	Model           chat.Info          `json:"model"`
	Profile         *Profile           `json:"coordinate_profile"`
	Frame           *coord.Frame       `json:"frame"`
	ResizePolicy    coord.ResizePolicy `json:"resize_policy"`
	Counters        Counters           `json:"counters"`
	Metrics         Metrics            `json:"metrics"`
	EventCount      int                `json:"event_count"`
	Events          []AgentEvent       `json:"events"`
}

// BuildTrajectory assembles the file from a result and its events.
func BuildTrajectory(res *Result, events []AgentEvent, model chat.Info, pol coord.ResizePolicy) *trajectory {
	t := &trajectory{
		SchemaVersion: trajectorySchemaVersion, RunID: res.RunID, Task: res.Goal, DeviceMode: res.DeviceMode,
		StartedAt: res.StartedAt, FinishedAt: res.FinishedAt, DurationSeconds: res.FinishedAt.Sub(res.StartedAt).Seconds(),
		Success: res.Success, Outcome: res.Outcome, Exit: res.Exit, FinalMessage: res.Message, ErrorCode: res.ErrorCode,
		Policy: StrictPolicy(), Model: model, Profile: res.Profile, Frame: res.Frame, ResizePolicy: pol,
		Counters: res.Counters, Metrics: res.Metrics, EventCount: len(events), Events: events,
	}
	if t.Events == nil {
		t.Events = []AgentEvent{}
	}
	return t
}

// WriteTrajectory writes t to path atomically (temporary file, fsync,
// rename), readable by the owner only: task text and model output may be
// sensitive.
func WriteTrajectory(path string, t *trajectory) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encode trajectory: %w", err)
	}
	if _, err := artifacts.PrivateState.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write trajectory: %w", err)
	}
	return nil
}
