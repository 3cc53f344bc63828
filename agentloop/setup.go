package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// SetupOptions are the planner's model options: the endpoint (with the
// key) and what the coordinates and the profile cache follow.
type SetupOptions struct {
	Config chat.Config
	// ResizeLongSide is the longest side of the image the model sees (0:
	// the screenshot as it is; else 64..8192).
	ResizeLongSide int
	// CacheDir holds the coordinate and endpoint profiles ("": the user
	// cache directory), unless NoCache.
	CacheDir    string
	NoCache     bool
	Recalibrate bool
}

// ModelSetup is the planner's model and the policy its coordinates
// follow: what agent-run, planner-check, planner-calibrate and verify-run
// share before any device is opened.
type ModelSetup struct {
	Model    *chat.Client
	Policy   coord.ResizePolicy
	CacheDir string
	Refresh  bool
	cfg      chat.Config
	redactor *redact.Redactor
}

// NewModelSetup checks the options and builds the model client (its
// endpoint profile cached beside the coordinate profiles). Errors never
// contain the key.
func NewModelSetup(o SetupOptions) (*ModelSetup, error) {
	mc := o.Config
	if mc.InputPricePerMTok < 0 || mc.OutputPricePerMTok < 0 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--price-input and --price-output must not be negative")
	}
	m, err := chat.NewClient(mc)
	if err != nil {
		return nil, fault.Usage(fault.CodeModelConfigInvalid, err.Error()).
			WithUserAction("Point --model-base-url (or " + chat.EnvModelBaseURL + ") at an OpenAI-compatible endpoint and name the model with --model (or " + chat.EnvModel + ").")
	}
	n := o.ResizeLongSide
	if n < 0 || (n > 0 && n < 64) || n > 8192 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--resize-long-side must be 0 or between 64 and 8192")
	}
	s := &ModelSetup{Model: m, cfg: mc, Policy: coord.ResizePolicy{MaxLongSide: n}, Refresh: o.Recalibrate,
		redactor: redact.New(mc.APIKey.Reveal())}
	if !o.NoCache {
		s.CacheDir = o.CacheDir
		if s.CacheDir == "" {
			if s.CacheDir, err = defaultCacheDir(); err != nil {
				return nil, fault.Usage(fault.CodeInvalidOption, err.Error()+"; pass --calibration-cache DIR or --no-calibration-cache")
			}
		}
	}
	m.UseCache(s.CacheDir)
	return s, nil
}

// ProfileKey names the coordinate profile of this endpoint, model,
// thinking mode and resize policy.
func (s *ModelSetup) ProfileKey() ProfileKey {
	return ProfileKey{Endpoint: s.cfg.Endpoint(), Model: s.cfg.Model, Thinking: s.cfg.Thinking, Resize: s.Policy}
}

// ProfileFile is where the coordinate profile of p is cached ("" for a
// configured space or without a cache).
func (s *ModelSetup) ProfileFile(p *Profile) string {
	if s.CacheDir == "" || p == nil || p.Source == SourceConfigured {
		return ""
	}
	return filepath.Join(s.CacheDir, s.ProfileKey().Hash()+".json")
}

// Info describes the model for outputs (never the key).
func (s *ModelSetup) Info() chat.Info { return s.cfg.Info() }

// Redact removes the API key (and every bearer credential and owner
// token) from any text.
func (s *ModelSetup) Redact(text string) string { return s.redactor.Text(text) }

// Scrub is v encoded and redacted: the last line of defence for the API
// key in what is printed.
func (s *ModelSetup) Scrub(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(s.Redact(string(b)))
}

// Runtime is the runtime configuration the setup implies for space; the
// caller adds its observers and confirmer.
func (s *ModelSetup) Runtime(space coord.Space) Config {
	return Config{Space: space, Policy: s.Policy, ProfileKey: s.ProfileKey(), CacheDir: s.CacheDir, Recalibrate: s.Refresh, Redact: s.Redact}
}

// Preflight runs the model checks (no device). A failure is the check's
// fault error carrying every check's result, the model and the usage so
// far.
func (s *ModelSetup) Preflight(ctx context.Context, space coord.Space, w, h int) (*PreflightReport, error) {
	rep, err := RunPreflight(ctx, PreflightOptions{Model: s.Model, Key: s.ProfileKey(), Policy: s.Policy, Space: space,
		CacheDir: s.CacheDir, Refresh: s.Refresh, DisplayWidth: w, DisplayHeight: h, Redact: s.Redact})
	if err != nil {
		return rep, s.preflightFault(rep, err)
	}
	return rep, nil
}

// RunCheck adds a device-side check to the preflight (the ADB keyboard of
// an adb run, once the transport is open and before anything is sent to
// the phone); its failure reads like a failed model check.
func (s *ModelSetup) RunCheck(rep *PreflightReport, name string, fn func() error) error {
	if err := rep.RunCheck(name, fn); err != nil {
		return s.preflightFault(rep, err)
	}
	return nil
}

// preflightFault is err as the printed error object: redacted, with the
// checks, the model and the usage.
func (s *ModelSetup) preflightFault(rep *PreflightReport, err error) error {
	var fe *fault.Error
	if !errors.As(err, &fe) {
		fe = fault.From(err)
	}
	if fe.Kind == fault.Interrupted || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fe
	}
	out := fault.New(fe.Kind, fe.Code, s.Redact(fe.Message)).WithUserAction(fe.UserAction)
	for k, v := range fe.Details {
		out.With(k, v)
	}
	out.With("checks", s.Scrub(rep.Checks)).With("model", s.Info()).With("metrics", rep.Metrics()).With("deviceActions", 0)
	out.Err = fe
	return out
}

// calibration is what a negotiation found, without any device.
type calibration struct {
	Profile *Profile
	// Candidates are the spaces tried and what each probe answered.
	Candidates []any
	Metrics    Metrics
}

// Calibrate negotiates (or loads, or reports the configured) coordinate
// space for a w×h display with synthetic images only. A negotiation that
// finds no contract is coordinate_calibration_failed with the candidates.
func (s *ModelSetup) Calibrate(ctx context.Context, space coord.Space, w, h int) (*calibration, error) {
	cal, st := NewCalibrator(s.Model, s.ProfileKey(), s.Policy, s.CacheDir, s.Refresh, clock.System, s.Redact)
	p, err := cal.Resolve(ctx, space, w, h)
	out := &calibration{Profile: p, Candidates: []any{}, Metrics: st.Metrics()}
	for _, ev := range st.Events() {
		if ev.Type == EvCalibration {
			if c, ok := ev.Payload["candidates"].([]any); ok {
				out.Candidates = c
			}
		}
	}
	if err == nil {
		return out, nil
	}
	var ce *calibrationError
	switch {
	case errors.As(err, &ce):
		return out, fault.New(fault.Transport, fault.CodeCoordinateCalibrationFailed, ce.Msg).
			With("candidates", s.Scrub(out.Candidates)).With("deviceActions", 0).With("metrics", out.Metrics)
	case ctx.Err() != nil:
		return out, ctx.Err()
	}
	return out, fault.Wrap(fault.Transport, fault.CodeModelRequestFailed, s.Redact(err.Error()), err)
}
