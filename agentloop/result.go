package agentloop

import (
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
)

// Run outcomes (agent-run). Their exit codes are outcome's table's, by
// kind: completed and reviewed is success; not completed, blocked or a
// step budget is a failure; the task's max duration a timeout; cancelled
// an interrupt; anything else a model or device protocol error.
const (
	OutcomeCompleted      = "completed"
	outcomeNotCompleted   = "not_completed"
	OutcomeBlocked        = "blocked"
	outcomeMaxSteps       = "max_steps_exceeded"
	OutcomeMaxDuration    = "max_duration_exceeded"
	OutcomeCancelled      = "cancelled"
	OutcomeProtocolError  = "model_protocol_error"
	OutcomeModelError     = "model_error"
	OutcomeDeviceError    = "device_error"
	OutcomeCalibration    = "calibration_failed"
	outcomeRepeatedAction = "repeated_action_loop"
)

// exitCode is the process exit code of an outcome, from outcome's table.
func exitCode(o string) int {
	switch o {
	case OutcomeCompleted:
		return outcome.ExitOK
	case outcomeNotCompleted, OutcomeBlocked, outcomeMaxSteps, outcomeRepeatedAction:
		return outcome.ExitFor(fault.Failed)
	case OutcomeMaxDuration:
		return outcome.ExitFor(fault.Timeout)
	case OutcomeCancelled:
		return outcome.ExitFor(fault.Interrupted)
	}
	return outcome.ExitFor(fault.Transport)
}

// Result is the end of a task.
type Result struct {
	RunID        string       `json:"run_id"`
	Outcome      string       `json:"outcome"`
	Success      bool         `json:"success"`
	Message      string       `json:"message"`
	Exit         int          `json:"exit"`
	Phase        phase        `json:"phase"`
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

// stepResult is what one Step did.
type stepResult struct {
	Step     int            `json:"step"`
	Phase    phase          `json:"phase"`
	Action   *action.Action `json:"action,omitempty"`
	Terminal bool           `json:"terminal"`
	Result   *Result        `json:"result,omitempty"`
}
