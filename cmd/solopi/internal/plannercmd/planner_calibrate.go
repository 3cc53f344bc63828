package plannercmd

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// CalibrateResult is what planner-calibrate prints.
type CalibrateResult struct {
	Success    bool               `json:"success"`
	Profile    *agentloop.Profile `json:"profile"`
	Candidates []any              `json:"candidates"`
	CacheFile  string             `json:"cacheFile,omitempty"`
	Model      chat.Info          `json:"model"`
	Metrics    agentloop.Metrics  `json:"metrics"`
	Display    [2]int             `json:"displaySize"`
	Image      [2]int             `json:"imageSize"`
	// DeviceActions is always 0: negotiation uses synthetic images only.
	DeviceActions int `json:"deviceActions"`
}

// runPlannerCalibrate negotiates (or loads, or reports the configured
// space) without opening any device.
func runPlannerCalibrate(ctx context.Context, s *Setup, space coord.Space, w, h int) (outcome.Result, error) {
	cal, st := agentloop.NewCalibrator(s.Model, s.ProfileKey(), s.Policy, s.CacheDir, s.Refresh, clock.System, s.Redact)
	p, err := cal.Resolve(ctx, space, w, h)
	var candidates []any
	for _, ev := range st.Events() {
		if ev.Type == agentloop.EvCalibration {
			if c, ok := ev.Payload["candidates"].([]any); ok {
				candidates = c
			}
		}
	}
	if candidates == nil {
		candidates = []any{}
	}
	if err != nil {
		var ce *agentloop.CalibrationError
		if errors.As(err, &ce) {
			return outcome.Result{}, fault.New(fault.Transport, agentloop.CodeCalibrationFailed, ce.Msg).
				With("candidates", plannerScrub(candidates, s.Redact)).With("deviceActions", 0).With("metrics", st.Metrics()).
				WithUserAction(plannerUserAction[agentloop.OutcomeCalibration])
		}
		if ctx.Err() != nil {
			return outcome.Result{}, ctx.Err()
		}
		return outcome.Result{}, fault.Wrap(fault.Transport, chat.CodeModelRequest, s.Redact(err.Error()), err)
	}
	iw, ih := s.Policy.ImageSize(w, h)
	out := CalibrateResult{Success: true, Profile: p, Candidates: candidates, Model: s.modelInfo(), Metrics: st.Metrics(),
		Display: [2]int{w, h}, Image: [2]int{iw, ih}}
	if s.CacheDir != "" && p.Source != agentloop.SourceConfigured {
		out.CacheFile = filepath.Join(s.CacheDir, s.ProfileKey().Hash()+".json")
	}
	return outcome.OK(plannerScrub(out, s.Redact)), nil
}
