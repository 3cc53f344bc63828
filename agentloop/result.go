package agentloop

import (
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
)

// Run outcomes and their exit codes (agent-run): 0 completed and reviewed;
// 2 not completed or blocked; 4 model or device protocol error; 124 the
// task's max duration; 130 cancelled.
const (
	OutcomeCompleted      = "completed"
	OutcomeNotCompleted   = "not_completed"
	OutcomeBlocked        = "blocked"
	OutcomeMaxSteps       = "max_steps_exceeded"
	OutcomeMaxDuration    = "max_duration_exceeded"
	OutcomeCancelled      = "cancelled"
	OutcomeProtocolError  = "model_protocol_error"
	OutcomeModelError     = "model_error"
	OutcomeDeviceError    = "device_error"
	OutcomeCalibration    = "calibration_failed"
	OutcomeRepeatedAction = "repeated_action_loop"
)

// OutcomeExit maps an outcome to the process exit code.
func OutcomeExit(o string) int {
	switch o {
	case OutcomeCompleted:
		return 0
	case OutcomeNotCompleted, OutcomeBlocked, OutcomeMaxSteps, OutcomeRepeatedAction:
		return 2
	case OutcomeMaxDuration:
		return 124
	case OutcomeCancelled:
		return 130
	}
	return 4
}

// Result is the end of a task.
type Result struct {
	RunID        string       `json:"run_id"`
	Outcome      string       `json:"outcome"`
	Success      bool         `json:"success"`
	Message      string       `json:"message"`
	Exit         int          `json:"exit"`
	Phase        Phase        `json:"phase"`
	Steps        int          `json:"steps"`
	Counters     Counters     `json:"counters"`
	Metrics      Metrics      `json:"metrics"`
	Profile      *Profile     `json:"coordinate_profile,omitempty"`
	Frame        *coord.Frame `json:"frame,omitempty"`
	StartedAt    time.Time    `json:"started_at"`
	FinishedAt   time.Time    `json:"finished_at"`
	Goal         string       `json:"task"`
	DeviceMode   string       `json:"device_mode"`
	ErrorCode    string       `json:"error_code,omitempty"`
	ErrorMessage string       `json:"error_message,omitempty"`
}

// StepResult is what one Step did.
type StepResult struct {
	Step     int            `json:"step"`
	Phase    Phase          `json:"phase"`
	Action   *action.Action `json:"action,omitempty"`
	Terminal bool           `json:"terminal"`
	Result   *Result        `json:"result,omitempty"`
}
