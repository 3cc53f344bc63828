package replay

import (
	"context"
	"fmt"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// keyReplayAutoStart is the SoloPi setting that lets a replay begin
// without a human tapping start (docs/device-protocol.md).
const keyReplayAutoStart = "KEY_REPLAY_AUTO_START"

// replayResult is one element of a snapshot's results[].
type replayResult struct {
	CaseName         string            `json:"caseName,omitempty"`
	Status           string            `json:"status"`
	ExceptionMessage string            `json:"exceptionMessage,omitempty"`
	ExceptionStep    *int64            `json:"exceptionStep,omitempty"`
	ExceptionStepID  string            `json:"exceptionStepId,omitempty"`
	LogFile          string            `json:"logFile,omitempty"`
	ScreenshotFiles  map[string]string `json:"screenshotFiles,omitempty"`
	// StartTime and EndTime are the result's epoch milliseconds (0 when
	// the device did not give them); the step timeline is anchored on
	// StartTime (timeline.go).
	StartTime int64 `json:"startTime,omitempty"`
	EndTime   int64 `json:"endTime,omitempty"`
}

// replayStatus is one harness?type=status (or result) snapshot, checked
// against the contract: a known state whose active/terminal flags agree.
type replayStatus struct {
	RunID     string
	RequestID string
	CaseName  string
	State     string
	Active    bool
	Terminal  bool
	Error     string
	StartedAt int64
	// FinishedAt is 0 while the run is active.
	FinishedAt int64
	Results    []replayResult
	// Object is the device answer exactly as received (integers exact).
	Object map[string]any
}

// parseReplayStatus checks and reads a snapshot object.
func parseReplayStatus(m map[string]any) (*replayStatus, error) {
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return nil, device.ContractError("the replay status answer has no success:true", m)
	}
	st := &replayStatus{
		RunID: device.WireObject(m).Str("runId"), RequestID: device.WireObject(m).Str("requestId"), CaseName: device.WireObject(m).Str("caseName"),
		State: device.WireObject(m).Str("state"), Error: device.WireObject(m).Str("error"), Object: m,
	}
	st.StartedAt, _ = device.WireObject(m).Integer("startedAt")
	st.FinishedAt, _ = device.WireObject(m).Integer("finishedAt")
	mach := protocol.Replay()
	s := protocol.State(st.State)
	if !mach.Has(s) {
		return nil, device.Recode(device.ContractError(fmt.Sprintf("the replay status has an unknown state %q", st.State), m), fault.CodeInvalidReplayStatus)
	}
	active, aok := device.WireObject(m).Flag("active")
	terminal, tok := device.WireObject(m).Flag("terminal")
	if !aok || !tok || active != mach.IsLive(s) || terminal != mach.IsTerminal(s) {
		return nil, device.Recode(device.ContractError("the replay status flags active/terminal disagree with its state", m), fault.CodeInvalidReplayStatus)
	}
	st.Active, st.Terminal = active, terminal
	if s != protocol.ReplayIdle && st.RunID == "" {
		return nil, device.Recode(device.ContractError("the replay status has a state but no runId", m), fault.CodeInvalidReplayStatus)
	}
	raw, has := m["results"]
	if has && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, device.Recode(device.ContractError("the replay status results is not a list", m), fault.CodeInvalidReplayStatus)
		}
		for i, x := range list {
			o, ok := x.(map[string]any)
			if !ok {
				return nil, device.Recode(device.ContractError(fmt.Sprintf("results[%d] is not an object", i), m), fault.CodeInvalidReplayStatus)
			}
			r := replayResult{CaseName: device.WireObject(o).Str("caseName"), Status: device.WireObject(o).Str("status"), ExceptionMessage: device.WireObject(o).Str("exceptionMessage"),
				ExceptionStepID: device.WireObject(o).Str("exceptionStepId"), LogFile: device.WireObject(o).Str("logFile")}
			if r.Status != "passed" && r.Status != "failed" {
				return nil, device.Recode(device.ContractError(fmt.Sprintf("results[%d].status %q is neither passed nor failed", i, r.Status), m), fault.CodeInvalidReplayStatus)
			}
			if n, ok := device.WireObject(o).Integer("exceptionStep"); ok {
				r.ExceptionStep = &n
			}
			r.StartTime, _ = device.WireObject(o).Integer("startTime")
			r.EndTime, _ = device.WireObject(o).Integer("endTime")
			if sf, ok := o["screenshotFiles"].(map[string]any); ok {
				r.ScreenshotFiles = map[string]string{}
				for k, v := range sf {
					if s, ok := v.(string); ok {
						r.ScreenshotFiles[k] = s
					}
				}
			}
			st.Results = append(st.Results, r)
		}
	}
	return st, nil
}

// ReplayStatus queries harness?type=status.
func FetchReplayStatus(ctx context.Context, d *device.Device) (*replayStatus, error) {
	return replaySnapshot(ctx, d, protocol.HarnessStatus)
}

// replayLatest queries harness?type=result (the same snapshot).
func replayLatest(ctx context.Context, d *device.Device) (*replayStatus, error) {
	return replaySnapshot(ctx, d, protocol.HarnessResult)
}

func replaySnapshot(ctx context.Context, d *device.Device, typ string) (*replayStatus, error) {
	m, err := d.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, typ))
	if err != nil {
		return nil, err
	}
	return parseReplayStatus(m)
}

// FirstFailure returns the first failed result, if any.
func (s *replayStatus) FirstFailure() *replayResult {
	if s == nil {
		return nil
	}
	for i := range s.Results {
		if s.Results[i].Status == "failed" {
			return &s.Results[i]
		}
	}
	return nil
}
