package agentloop

import (
	"context"
	"errors"
	"net/http"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// Preflight checks, in the order they run. The model checks touch no
// device; the ADB keyboard check reads the input method list only.
const (
	CheckReachable   = "endpoint_reachable"
	CheckAuth        = "auth_accepted"
	checkCompletion  = "chat_completion"
	CheckImages      = "accepts_images"
	CheckCoordinates = "coordinate_space"
	CheckADBKeyboard = "adb_keyboard"
)

// Check statuses.
const (
	CheckPassed  = "passed"
	CheckFailed  = "failed"
	checkSkipped = "skipped"
)

// PreflightCheck is the result of one check.
type PreflightCheck struct {
	Name      string         `json:"name"`
	Status    string         `json:"status"`
	ErrorCode string         `json:"errorCode,omitempty"`
	Message   string         `json:"message,omitempty"`
	Detail    map[string]any `json:"detail,omitempty"`
}

// PreflightOptions configure the endpoint preflight.
type PreflightOptions struct {
	Model  chat.Model
	Key    ProfileKey
	Policy coord.ResizePolicy
	// Space is the configured coordinate space; auto reads the cached
	// profile or negotiates one.
	Space    coord.Space
	CacheDir string
	Refresh  bool
	// DisplayWidth and DisplayHeight size the negotiation's probe images
	// (as the display's production image); 0 means 1080×2340. The space a
	// model answers in does not depend on the size, so a run on another
	// display keeps the profile.
	DisplayWidth, DisplayHeight int
	Clock                       clock.Clock
	// Redact removes secrets from every event (the API key): the one
	// redactor's Text, as redact.Secret.Redact gives it (nil:
	// redact.New().Text, the fixed rules only).
	Redact func(string) string
}

// PreflightReport is what the preflight found. Its events and metrics
// (the probe requests and any negotiation) open the audit trail of a run
// that follows it (Config.Preflight).
type PreflightReport struct {
	Checks  []PreflightCheck `json:"checks"`
	Profile *Profile         `json:"coordinate_profile"`
	state   *agentState
}

// Metrics are the model usage of the preflight.
func (r *PreflightReport) Metrics() Metrics { return r.state.Metrics() }

// Events are the preflight's audit events.
func (r *PreflightReport) Events() []AgentEvent { return r.state.Events() }

func (r *PreflightReport) add(name, status string, err error, detail map[string]any) {
	c := PreflightCheck{Name: name, Status: status, Detail: detail}
	if err != nil {
		c.ErrorCode = errorCode(err)
		var fe *fault.Error
		if errors.As(err, &fe) {
			c.Message = fe.Message
		} else {
			c.Message = err.Error()
		}
		c.Message = r.state.redact(c.Message)
	}
	r.Checks = append(r.Checks, c)
}

// skip marks the checks that could not run after a failure.
func (r *PreflightReport) skip(names ...string) {
	for _, n := range names {
		r.add(n, checkSkipped, nil, nil)
	}
}

// RunCheck runs one more check (the ADB keyboard of an adb run) and adds
// its result; it returns the check's error.
func (r *PreflightReport) RunCheck(name string, fn func() error) error {
	err := fn()
	if err != nil {
		r.add(name, CheckFailed, err, nil)
		return err
	}
	r.add(name, CheckPassed, nil, nil)
	return nil
}

// preflightProbeSize is the synthetic card of the image check: small, so
// the check costs few vision tokens, yet above every provider's minimum.
const preflightProbeWidth, preflightProbeHeight = 256, 512

// RunPreflight checks, in order and without any device, that the
// endpoint answers, accepts the key, completes a text request, accepts an
// image, and that a coordinate space is frozen (configured, cached or
// negotiated). It stops at the first failure; the report lists every check
// (later ones skipped) and the error is a *fault.Error: model_unreachable,
// model_timeout, model_auth_failed and the other model codes are
// Transport; model_rejects_images is Failed (the endpoint works, the model
// cannot see); coordinate_calibration_failed is Transport.
func RunPreflight(ctx context.Context, o PreflightOptions) (*PreflightReport, error) {
	clk := clock.Or(o.Clock)
	if o.Redact == nil {
		o.Redact = redact.New().Text
	}
	rep := &PreflightReport{state: newAgentState(clk.Now, o.Redact, nil)}
	st := rep.state

	// Reachable, authorized, completing: one text request.
	_, err := st.chat(ctx, o.Model, chat.Request{Purpose: "preflight", Messages: []chat.Message{{Role: "user", Text: preflightTextPrompt}}})
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		switch errorCode(err) {
		case fault.CodeModelUnreachable, fault.CodeModelTimeout:
			rep.add(CheckReachable, CheckFailed, err, nil)
			rep.skip(CheckAuth, checkCompletion, CheckImages, CheckCoordinates)
		case fault.CodeModelAuthFailed:
			rep.add(CheckReachable, CheckPassed, nil, nil)
			rep.add(CheckAuth, CheckFailed, err, nil)
			rep.skip(checkCompletion, CheckImages, CheckCoordinates)
		default:
			rep.add(CheckReachable, CheckPassed, nil, nil)
			rep.add(CheckAuth, CheckPassed, nil, nil)
			rep.add(checkCompletion, CheckFailed, err, nil)
			rep.skip(CheckImages, CheckCoordinates)
		}
		return rep, asFault(err)
	}
	rep.add(CheckReachable, CheckPassed, nil, nil)
	rep.add(CheckAuth, CheckPassed, nil, nil)
	rep.add(checkCompletion, CheckPassed, nil, nil)

	// An image, encoded as every screenshot will be.
	img, err := chat.EncodeImage(SyntheticTarget(preflightProbeWidth, preflightProbeHeight, probeTargets[0]), chat.ImageEncodingOf(o.Model), clk)
	if err != nil {
		return rep, fault.Wrap(fault.Internal, fault.CodeModelRequestFailed, "cannot encode the probe image", err)
	}
	detail := map[string]any{"image_format": img.Format, "image_bytes": len(img.Data)}
	_, err = st.chat(ctx, o.Model, chat.Request{Purpose: "preflight", Messages: []chat.Message{{Role: "user", Text: preflightImagePrompt, Image: img}}})
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		switch chat.HTTPStatus(err) {
		case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
			// The same endpoint completed a text request a moment ago:
			// refusing the one with an image means it takes no images.
			var fe *fault.Error
			msg := err.Error()
			if errors.As(err, &fe) {
				msg = fe.Message
			}
			err = fault.Wrap(fault.Failed, fault.CodeModelRejectsImages, "the endpoint completes text but refused a request with an image ("+msg+")", err).
				WithUserAction("Use a vision model (one that accepts image_url content parts). If only JPEG is refused, set " + chat.EnvModelImageFormat + "=png.")
		}
		rep.add(CheckImages, CheckFailed, err, detail)
		rep.skip(CheckCoordinates)
		return rep, asFault(err)
	}
	rep.add(CheckImages, CheckPassed, nil, detail)

	// The coordinate contract: configured, cached or negotiated.
	w, h := o.DisplayWidth, o.DisplayHeight
	if w <= 0 || h <= 0 {
		w, h = 1080, 2340
	}
	cal := &calibrator{Model: o.Model, Key: o.Key, Policy: o.Policy, CacheDir: o.CacheDir, Refresh: o.Refresh, Clock: clk, state: st}
	p, err := cal.Resolve(ctx, o.Space, w, h)
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rep.add(CheckCoordinates, CheckFailed, err, nil)
		var ce *calibrationError
		if errors.As(err, &ce) {
			return rep, fault.Wrap(fault.Transport, fault.CodeCoordinateCalibrationFailed, ce.Msg, err).
				WithUserAction("The model answered in inconsistent coordinate spaces. Force one with --coordinate-space (or " + chat.EnvCoordinateSpace + ") if you know the model's convention, or use another model.")
		}
		return rep, asFault(err)
	}
	rep.Profile = p
	rep.add(CheckCoordinates, CheckPassed, nil, map[string]any{"space": string(p.Space), "source": p.Source})
	return rep, nil
}

// asFault is err as a *fault.Error (model errors already are one).
func asFault(err error) *fault.Error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe
	}
	return fault.From(err)
}

// absorb opens a run's audit trail with a preflight's events (renumbered)
// and metrics.
func (s *agentState) absorb(rep *PreflightReport) {
	evs := rep.Events()
	m := rep.Metrics()
	s.mu.Lock()
	s.metrics.Requests += m.Requests
	for k, v := range m.ByPurpose {
		s.metrics.ByPurpose[k] += v
	}
	s.metrics.PromptTokens += m.PromptTokens
	s.metrics.CompletionTokens += m.CompletionTokens
	s.metrics.CostUSD += m.CostUSD
	s.metrics.ModelLatencyMs += m.ModelLatencyMs
	s.metrics.ImagesSent += m.ImagesSent
	s.metrics.ImageBytes += m.ImageBytes
	var out []AgentEvent
	for _, e := range evs {
		e.Seq = len(s.events) + 1
		s.events = append(s.events, e)
		out = append(out, e)
	}
	l := s.listener
	s.mu.Unlock()
	if l != nil {
		for _, e := range out {
			l(e)
		}
	}
}
