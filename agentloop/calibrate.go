package agentloop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/textclip"
	"github.com/solopi-dev/solopi/redact"
)

// coordinateProtocolVersion versions the contract (prompt wording,
// rounding rule, probe set); a change invalidates cached profiles.
const coordinateProtocolVersion = "coord-1"

// Calibration bounds in canonical distance (fractions of the screen).
const (
	calibrationMeanBound = 0.04
	calibrationMaxBound  = 0.07
)

// CodeCalibrationFailed is a calibration that found no contract. (A
// profile cache that cannot be read or written is only an event: the cache
// is an optimisation.)

// Profile sources.
const (
	SourceConfigured = "configured"
	SourceCache      = "cache"
	SourceNegotiated = "negotiated"
	sourceRejected   = "rejected"
)

// probeParseOptions accept any finite coordinate; Map checks the bounds.
var probeParseOptions = action.ParseOptions{XMax: math.MaxFloat64, YMax: math.MaxFloat64}

// probeTargets are asymmetric canonical points, never the centre: a model
// that always answers the middle of the image must not pass.
var probeTargets = [][2]float64{{0.18, 0.23}, {0.79, 0.41}, {0.63, 0.82}}

// probeResult is one calibration sample.
type probeResult struct {
	Target    [2]float64    `json:"target_canonical"`
	Answer    *action.Point `json:"model_coordinate,omitempty"`
	Canonical [2]float64    `json:"canonical_coordinate"`
	Error     float64       `json:"error"`
	Rejection string        `json:"rejection,omitempty"`
	Retried   bool          `json:"protocol_retry"`
}

// candidateResult is one space tried during negotiation.
type candidateResult struct {
	Space     coord.Space   `json:"space"`
	MeanError float64       `json:"mean_error"`
	MaxError  float64       `json:"max_error"`
	Accepted  bool          `json:"accepted"`
	Samples   []probeResult `json:"samples"`
}

// Profile is a frozen coordinate profile.
type Profile struct {
	Space           coord.Space `json:"space"`
	Source          string      `json:"source"`
	Confidence      float64     `json:"confidence"`
	MeanError       float64     `json:"calibration_mean_error"`
	MaxError        float64     `json:"calibration_max_error"`
	Samples         int         `json:"calibration_samples"`
	ProtocolVersion string      `json:"protocol_version"`
	Endpoint        string      `json:"endpoint"`
	Model           string      `json:"model"`
	Thinking        string      `json:"thinking"`
	ResizePolicy    string      `json:"resize_policy"`
	CreatedAt       time.Time   `json:"created_at"`
}

// ProfileKey identifies a cached profile. It holds no secret: the API key
// is not part of the identity of a model's coordinate behaviour.
type ProfileKey struct {
	Endpoint string
	Model    string
	Thinking string
	Resize   coord.ResizePolicy
}

// Hash is the cache file name stem.
func (k ProfileKey) Hash() string {
	h := sha256.Sum256([]byte(k.Endpoint + "\x00" + k.Model + "\x00" + k.Thinking + "\x00" + k.Resize.String() + "\x00" + coordinateProtocolVersion))
	return hex.EncodeToString(h[:12])
}

// defaultCacheDir is <user cache dir>/solopi/planner-profiles.
func defaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory: %w", err)
	}
	return filepath.Join(d, "solopi", "planner-profiles"), nil
}

// calibrator negotiates a coordinate space with synthetic images. It holds
// no device: negotiation cannot touch one.
type calibrator struct {
	Model  chat.Model
	Key    ProfileKey
	Policy coord.ResizePolicy
	// CacheDir stores profiles; "" disables the cache.
	CacheDir string
	// Refresh ignores a cached profile (it is still rewritten).
	Refresh bool
	Clock   clock.Clock // clock.System when nil
	state   *agentState
}

// calibrationError is a failed negotiation: the run fails closed.
type calibrationError struct {
	Candidates []candidateResult
	Msg        string
}

func (e *calibrationError) Error() string {
	return fault.CodeCoordinateCalibrationFailed + ": " + e.Msg
}

// Resolve freezes the profile for space: a configured space directly, auto
// from the cache or by negotiation on images of the display's production
// size.
func (c *calibrator) Resolve(ctx context.Context, space coord.Space, displayW, displayH int) (*Profile, error) {
	now := c.now()
	base := Profile{ProtocolVersion: coordinateProtocolVersion, Endpoint: c.Key.Endpoint, Model: c.Key.Model,
		Thinking: c.Key.Thinking, ResizePolicy: c.Key.Resize.String(), CreatedAt: now}
	if space != coord.SpaceAuto {
		p := base
		p.Space, p.Source, p.Confidence = space, SourceConfigured, 1
		c.state.emit(EvCalibration, "coordinate space configured explicitly", map[string]any{"source": SourceConfigured, "space": string(space)})
		return &p, nil
	}
	if c.CacheDir != "" && !c.Refresh {
		p, err := c.load()
		switch {
		case err == nil:
			p.Source = SourceCache
			c.state.emit(EvCalibration, "coordinate profile loaded from cache", map[string]any{"source": SourceCache, "space": string(p.Space),
				"calibration_mean_error": p.MeanError, "calibration_max_error": p.MaxError, "cache_key": c.Key.Hash()})
			return p, nil
		case !errors.Is(err, fs.ErrNotExist):
			// A corrupt cache entry is not trusted; negotiate afresh.
			c.state.emit(EvCalibration, "cached coordinate profile ignored", map[string]any{"source": SourceCache, "error": err.Error()})
		}
	}
	iw, ih := c.Policy.ImageSize(displayW, displayH)
	frame := coord.Frame{ImageWidth: iw, ImageHeight: ih, DisplayWidth: displayW, DisplayHeight: displayH}
	var results []candidateResult
	for _, cand := range []coord.Space{coord.SpaceRelative, coord.SpaceImage} {
		r, err := c.probe(ctx, coord.Contract{Space: cand, Frame: frame})
		if err != nil {
			return nil, err
		}
		results = append(results, r)
		if r.Accepted {
			p := base
			p.Space, p.Source = cand, SourceNegotiated
			p.MeanError, p.MaxError, p.Samples = r.MeanError, r.MaxError, len(r.Samples)
			p.Confidence = math.Max(0, 1-r.MaxError/calibrationMaxBound)
			c.state.emit(EvCalibration, "coordinate profile negotiated", map[string]any{"source": SourceNegotiated, "space": string(cand),
				"calibration_mean_error": r.MeanError, "calibration_max_error": r.MaxError, "candidates": candidatesPayload(results),
				"image_width": iw, "image_height": ih, "device_actions": 0})
			if c.CacheDir != "" {
				if err := c.store(p); err != nil {
					c.state.emit(EvCalibration, "coordinate profile not cached", map[string]any{"source": SourceNegotiated, "error": err.Error()})
				}
			}
			return &p, nil
		}
	}
	c.state.emit(EvCalibration, "no coordinate space met the error bounds; failing closed", map[string]any{"source": sourceRejected,
		"candidates": candidatesPayload(results), "device_actions": 0})
	return nil, &calibrationError{Candidates: results, Msg: fmt.Sprintf("no candidate space met mean error ≤ %.2f and max error ≤ %.2f on every probe", calibrationMeanBound, calibrationMaxBound)}
}

func candidatesPayload(rs []candidateResult) []any {
	out := make([]any, 0, len(rs))
	for _, r := range rs {
		var samples []any
		for _, s := range r.Samples {
			m := map[string]any{"target_canonical": s.Target[:], "canonical_coordinate": s.Canonical[:], "error": finiteOr(s.Error, -1), "protocol_retry": s.Retried}
			if s.Answer != nil {
				m["model_coordinate"] = s.Answer[:]
			}
			if s.Rejection != "" {
				m["rejection"] = s.Rejection
			}
			samples = append(samples, m)
		}
		out = append(out, map[string]any{"space": string(r.Space), "mean_error": finiteOr(r.MeanError, -1), "max_error": finiteOr(r.MaxError, -1), "accepted": r.Accepted, "samples": samples})
	}
	return out
}

func finiteOr(f, alt float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return alt
	}
	return f
}

func (c *calibrator) now() time.Time { return clock.Or(c.Clock).Now() }

// probe runs every target for one candidate contract. Probes are not
// short-circuited: the whole set is the evidence in the trajectory.
func (c *calibrator) probe(ctx context.Context, contract coord.Contract) (candidateResult, error) {
	res := candidateResult{Space: contract.Space}
	var sum float64
	for _, t := range probeTargets {
		img, err := chat.EncodeImage(SyntheticTarget(contract.Frame.ImageWidth, contract.Frame.ImageHeight, t), chat.ImageEncodingOf(c.Model), nil)
		if err != nil {
			return res, err
		}
		s := probeResult{Target: t, Error: math.Inf(1)}
		req := chat.Request{Purpose: "calibration", Messages: []chat.Message{{Role: "user", Text: calibrationPrompt(contract), Image: img}}}
		resp, err := c.state.chat(ctx, c.Model, req)
		if err != nil {
			return res, err
		}
		// Bounds are not enforced by the parser here: an answer outside the
		// candidate's range is evidence against that space, not a format
		// slip, so it fails the probe (below, in Map) instead of earning a
		// retry that would let an inconsistent model switch spaces.
		parsed, perrv := action.Parse(resp.Content, resp.Reasoning, probeParseOptions)
		if perrv != nil {
			// One bounded retry per probe, as in planning.
			s.Retried = true
			pe := asProtocolError(perrv)
			retry := req
			retry.Purpose = "calibration"
			retry.Messages = append(append([]chat.Message(nil), req.Messages...),
				chat.Message{Role: "assistant", Text: textclip.Runes(resp.Content, 2000)},
				chat.Message{Role: "user", Text: fmt.Sprintf("%s: %s: %s. Answer with exactly one call do(action=\"Tap\", element=[x,y]).", retryMarker, pe.Code, pe.Message)})
			resp, err = c.state.chat(ctx, c.Model, retry)
			if err != nil {
				return res, err
			}
			parsed, perrv = action.Parse(resp.Content, resp.Reasoning, probeParseOptions)
		}
		switch {
		case perrv != nil:
			s.Rejection = asProtocolError(perrv).Code
		case parsed.Action.Name != action.Tap:
			s.Rejection = "probe_answer_not_tap"
		default:
			p := *parsed.Action.Element
			s.Answer = &p
			mp, err := contract.Map(p)
			if err != nil {
				s.Rejection = err.(*coord.Error).Code
				break
			}
			s.Canonical = mp.Canonical
			s.Error = math.Hypot(mp.Canonical[0]-t[0], mp.Canonical[1]-t[1])
		}
		res.Samples = append(res.Samples, s)
		sum += s.Error
		res.MaxError = math.Max(res.MaxError, s.Error)
	}
	res.MeanError = sum / float64(len(res.Samples))
	res.Accepted = res.MeanError <= calibrationMeanBound && res.MaxError <= calibrationMaxBound
	return res, nil
}

func asProtocolError(err error) *action.ProtocolError {
	var pe *action.ProtocolError
	if errors.As(err, &pe) {
		return pe
	}
	return &action.ProtocolError{Code: fault.CodeMissingAction, Message: err.Error(), Offset: -1}
}

// Target colours of the synthetic card: a magenta disc in a white ring in
// a black ring on light grey, high contrast in every channel.
var (
	targetBG    = color.RGBA{0xee, 0xee, 0xee, 0xff}
	targetFill  = color.RGBA{0xff, 0x00, 0xff, 0xff}
	targetRing  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	targetOuter = color.RGBA{0x00, 0x00, 0x00, 0xff}
)

// SyntheticTarget draws a w×h test card with one target disc centred at
// canonical point t (pixel t·(size−1)).
func SyntheticTarget(w, h int, t [2]float64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = targetBG.R, targetBG.G, targetBG.B, 0xff
	}
	cx, cy := t[0]*float64(w-1), t[1]*float64(h-1)
	r := math.Max(6, 0.035*float64(min(w, h)))
	for y := int(cy - r - 4); y <= int(cy+r+4); y++ {
		for x := int(cx - r - 4); x <= int(cx+r+4); x++ {
			if x < 0 || y < 0 || x >= w || y >= h {
				continue
			}
			d := math.Hypot(float64(x)-cx, float64(y)-cy)
			switch {
			case d <= r-4:
				img.SetRGBA(x, y, targetFill)
			case d <= r:
				img.SetRGBA(x, y, targetRing)
			case d <= r+4:
				img.SetRGBA(x, y, targetOuter)
			}
		}
	}
	return img
}

func (c *calibrator) path() string { return filepath.Join(c.CacheDir, c.Key.Hash()+".json") }

func (c *calibrator) load() (*Profile, error) {
	b, err := os.ReadFile(c.path())
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("cached profile %s: %w", c.path(), err)
	}
	if p.ProtocolVersion != coordinateProtocolVersion || (p.Space != coord.SpaceRelative && p.Space != coord.SpaceImage && p.Space != coord.SpaceDisplay) ||
		p.Endpoint != c.Key.Endpoint || p.Model != c.Key.Model {
		return nil, fmt.Errorf("cached profile %s does not match this endpoint, model or protocol", c.path())
	}
	return &p, nil
}

// store writes the profile atomically (temp file, fsync, rename) with
// owner-only permissions. The profile type has no field that could hold
// the API key.
func (c *calibrator) store(p Profile) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = artifacts.PrivateState.WriteFile(c.path(), b)
	return err
}

// NewCalibrator returns a standalone calibrator (planner-calibrate) and
// the state that records its events and metrics.
func NewCalibrator(m chat.Model, key ProfileKey, pol coord.ResizePolicy, cacheDir string, refresh bool, clk clock.Clock, hide func(string) string) (*calibrator, *agentState) {
	if clk == nil {
		clk = clock.System
	}
	if hide == nil {
		hide = redact.New().Text
	}
	st := newAgentState(clk.Now, hide, nil)
	return &calibrator{Model: m, Key: key, Policy: pol, CacheDir: cacheDir, Refresh: refresh, Clock: clk, state: st}, st
}
