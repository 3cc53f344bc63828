package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

const testAPIKey = "sk-test-SECRET-6f1c0b9e2d7a4c35"

// startFakeModel starts a fake model server for the test and a model
// client named name for it; adjust, when set, changes the client's
// configuration first.
func startFakeModel(t *testing.T, opts fakemodel.Options, name string, adjust func(*chat.Config)) (*fakemodel.Server, *chat.Client) {
	t.Helper()
	srv, err := fakemodel.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model = srv.URL, name
	if adjust != nil {
		adjust(&mc)
	}
	m, err := chat.NewClient(mc)
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

// harness wires a fake model server, a counter device and an agent.
type harness struct {
	srv   *fakemodel.Server
	dev   *counterDevice
	agent *phoneAgent
	model *chat.Client
	cfg   Config
	cache string
}

func newHarness(t *testing.T, opts fakemodel.Options, space coord.Space, mutate func(*Config)) *harness {
	t.Helper()
	opts.APIKey = testAPIKey
	srv, model := startFakeModel(t, opts, "fake-vision", func(mc *chat.Config) {
		mc.APIKey = redact.NewSecret(testAPIKey)
		mc.Timeout = 20 * time.Second
		mc.InputPricePerMTok, mc.OutputPricePerMTok = 0.5, 1.5
	})
	mc := model.Config()
	cache := t.TempDir()
	dev := &counterDevice{}
	cfg := Config{
		Space: space, Policy: coord.DefaultResizePolicy(), CacheDir: cache, RecheckDelay: time.Millisecond,
		ProfileKey: ProfileKey{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: chat.ThinkingAuto, Resize: coord.DefaultResizePolicy()},
		Redact:     mc.APIKey.Redact,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	agent, err := New(cfg, dev, model)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{srv: srv, dev: dev, agent: agent, model: model, cfg: cfg, cache: cache}
}

func (h *harness) run(t *testing.T, goal string, maxSteps int) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.agent.Run(ctx, Task{Goal: goal, MaxSteps: maxSteps, MaxDuration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (h *harness) trajectory(t *testing.T, res *Result) []byte {
	t.Helper()
	tr := BuildTrajectory(res, h.agent.State().Events(), chat.Info{Endpoint: h.model.Config().Endpoint(), Model: "fake-vision", Thinking: chat.ThinkingAuto}, h.cfg.Policy)
	path := filepath.Join(t.TempDir(), "trajectory.json")
	if err := WriteTrajectory(path, tr); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "trajectory", b)
	return b
}

func eventsOf(evs []AgentEvent, typ string) []AgentEvent {
	var out []AgentEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestCounterToThreeEndToEnd is the whole loop: negotiation (the fake
// answers in 0..999), then the model reads the counter from the pixels,
// taps +1 until it reads 3 and finishes; the completion review confirms
// it on a fresh screenshot.
func TestCounterToThreeEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsRelative}, coord.SpaceAuto, nil)
	res := h.run(t, "increase the counter to 3", 15)
	if res.Outcome != OutcomeCompleted || !res.Success || res.Exit != 0 {
		t.Fatalf("outcome %s (%s) %s", res.Outcome, res.Message, res.ErrorMessage)
	}
	v, _, cmds := h.dev.state()
	if v != 3 {
		t.Fatalf("counter = %d, want 3", v)
	}
	if len(cmds) != 3 {
		t.Errorf("dispatched %d commands, want 3 taps: %+v", len(cmds), cmds)
	}
	for _, c := range cmds {
		if c.Action != action.Tap || !inRect(c.Point.Device, plusRect) {
			t.Errorf("dispatched %s at %v, want taps on +1", c.Action, c.Point.Device)
		}
	}
	if res.Profile == nil || res.Profile.Space != coord.SpaceRelative || res.Profile.Source != SourceNegotiated {
		t.Errorf("profile %+v, want negotiated relative_0_999", res.Profile)
	}
	if res.Metrics.ByPurpose["calibration"] < 3 || res.Metrics.ByPurpose["completion_review"] != 1 {
		t.Errorf("metrics by purpose %v", res.Metrics.ByPurpose)
	}
	b := h.trajectory(t, res)
	var tr map[string]any
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	pol := tr["policy"].(map[string]any)
	if pol["policy_observation"] != "screenshot_only" || pol["android_semantics_visible_to_model"] != false {
		t.Errorf("policy %v", pol)
	}
	evs := h.agent.State().Events()
	if n := len(eventsOf(evs, EvCalibration)); n != 1 {
		t.Errorf("%d calibration events, want 1", n)
	}
	// Every coordinate action carries the full mapping.
	for _, e := range eventsOf(evs, EvAction) {
		if e.Payload["action"].(map[string]any)["action"] != action.Tap {
			continue
		}
		f := e.Payload["fields"].(map[string]any)["element"].(coord.MappedPoint)
		if f.Device[0] == 0 || f.Canonical[0] <= 0 || f.Runtime[0] <= 0 {
			t.Errorf("incomplete mapping %+v", f)
		}
	}
	// Exactly one image per request, and every request authorized.
	for _, r := range h.srv.Requests() {
		if r.Images != 1 || !r.Authorized {
			t.Errorf("request %+v: want one image and authorization", r)
		}
	}
	// The cached profile is reused by the next agent: no calibration.
	h2agent, _ := New(h.cfg, &counterDevice{}, h.model)
	before := len(h.srv.Requests())
	ctx := context.Background()
	res2, err := h2agent.Run(ctx, Task{Goal: "increase the counter to 1", MaxSteps: 5})
	if err != nil || res2.Outcome != OutcomeCompleted {
		t.Fatalf("second run: %v %+v", err, res2)
	}
	if res2.Profile.Source != SourceCache {
		t.Errorf("second run profile source %s, want cache", res2.Profile.Source)
	}
	for _, r := range h.srv.Requests()[before:] {
		if r.Kind == "calibration" {
			t.Error("the second run calibrated again despite the cache")
		}
	}
}

func inRect(p [2]int, r image.Rectangle) bool { return image.Pt(p[0], p[1]).In(r) }

func fmtAll(v any) string { return fmt.Sprintf("%v %+v %#v %s %q", v, v, v, v, v) }

// TestImagePixelFamily negotiates image_pixels and still reaches 3.
func TestImagePixelFamily(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels}, coord.SpaceAuto, nil)
	res := h.run(t, "increase the counter to 2", 10)
	if res.Outcome != OutcomeCompleted || res.Profile.Space != coord.SpaceImage {
		t.Fatalf("outcome %s profile %+v: %s", res.Outcome, res.Profile, res.Message)
	}
	if v, _, _ := h.dev.state(); v != 2 {
		t.Fatalf("counter = %d", v)
	}
}

// TestInconsistentFamilyFailsClosed: a model that mixes spaces across
// requests freezes no contract, and nothing touches the device.
func TestInconsistentFamilyFailsClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsInconsistent}, coord.SpaceAuto, nil)
	res := h.run(t, "increase the counter to 3", 10)
	if res.Outcome != OutcomeCalibration || res.Exit != 4 || res.ErrorCode != fault.CodeCoordinateCalibrationFailed {
		t.Fatalf("outcome %s exit %d code %s", res.Outcome, res.Exit, res.ErrorCode)
	}
	if _, _, cmds := h.dev.state(); len(cmds) != 0 {
		t.Fatalf("%d device commands during a failed negotiation", len(cmds))
	}
	for _, r := range h.srv.Requests() {
		if r.Kind == "plan" {
			t.Fatal("the planner was asked although no contract was frozen")
		}
	}
	evs := eventsOf(h.agent.State().Events(), EvCalibration)
	if len(evs) != 1 || evs[0].Payload["source"] != sourceRejected {
		t.Fatalf("calibration events %+v", evs)
	}
	entries, _ := os.ReadDir(h.cache)
	if len(entries) != 0 {
		t.Errorf("a rejected negotiation left %d cache files", len(entries))
	}
	h.trajectory(t, res)
}

// TestFreshnessCancelsZeroTouch: a dialog appears between planning and
// dispatch; the planned +1 tap is cancelled without touching the device
// and the planner replans on the new screenshot.
func TestFreshnessCancelsZeroTouch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsRelative}, coord.SpaceRelative, nil)
	h.dev.beforeObserve = func(d *counterDevice, n int) {
		if n == 2 { // the pre-dispatch re-observation of step 1
			d.mu.Lock()
			d.dialog = true
			d.mu.Unlock()
		}
	}
	res := h.run(t, "increase the counter to 1", 10)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Message)
	}
	_, _, cmds := h.dev.state()
	if len(cmds) < 2 {
		t.Fatalf("commands %+v", cmds)
	}
	if first := cmds[0].Point.Device; !inRect(first, overlayRect) {
		t.Fatalf("first dispatched tap at %v, want the dialog's OK (the stale +1 tap must never be sent)", first)
	}
	evs := h.agent.State().Events()
	var stale bool
	for _, e := range eventsOf(evs, evPrecondition) {
		if e.Payload["verdict"] == staleTarget || e.Payload["verdict"] == staleReplaced {
			stale = true
		}
	}
	if !stale {
		t.Fatal("no stale precondition event")
	}
	c := res.Counters
	if c.SoftReplans[softStale] != 1 || c.HardTotal != 0 {
		t.Errorf("counters %+v: want one soft stale replan and no hard failure", c)
	}
	h.trajectory(t, res)
}

// TestCompletionReviewRejectsFalseFinish: the planner claims success on
// the first screen (counter 0); the isolated review reads 0 and rejects,
// the run continues and completes for real.
func TestCompletionReviewRejectsFalseFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: fakemodel.QuirkFalseFinish}, coord.SpaceRelative, nil)
	res := h.run(t, "increase the counter to 2", 10)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Message)
	}
	if v, _, _ := h.dev.state(); v != 2 {
		t.Fatalf("counter %d", v)
	}
	reviews := eventsOf(h.agent.State().Events(), EvTaskReview)
	if len(reviews) != 2 || reviews[0].Payload["status"] != VerifyFailed || reviews[1].Payload["status"] != VerifyPassed {
		t.Fatalf("task reviews %+v", reviews)
	}
	if res.Counters.SoftReplans[softCompletion] != 1 || res.Counters.HardTotal != 0 {
		t.Errorf("counters %+v", res.Counters)
	}
}

// TestFalseFinishOnlyEndsNotCompleted: with a review budget of one, a
// false claim ends the task as not completed (exit 2), never as success.
func TestFalseFinishOnlyEndsNotCompleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: fakemodel.QuirkFalseFinish}, coord.SpaceRelative,
		func(c *Config) { c.SoftBudget = 1 })
	res := h.run(t, "increase the counter to 2", 10)
	if res.Outcome != outcomeNotCompleted || res.Exit != 2 || res.Success {
		t.Fatalf("outcome %+v", res)
	}
}

// TestWrappedOutputUsesOneProtocolRetry: fenced answers are rejected before
// any device contact and corrected by the same-step retry.
func TestWrappedOutputUsesOneProtocolRetry(t *testing.T) {
	t.Parallel()
	for _, q := range []string{fakemodel.QuirkWrapped, fakemodel.QuirkTrailing} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: q}, coord.SpaceAuto, nil)
			res := h.run(t, "increase the counter to 1", 10)
			if res.Outcome != OutcomeCompleted {
				t.Fatalf("outcome %s: %s", res.Outcome, res.Message)
			}
			retries := eventsOf(h.agent.State().Events(), evProtocolRetry)
			if len(retries) < 2 {
				t.Fatalf("%d protocol retries, want one per plan", len(retries))
			}
			want := map[string]string{fakemodel.QuirkWrapped: fault.CodeMarkdownWrapped, fakemodel.QuirkTrailing: fault.CodeTrailingOutput}[q]
			if retries[0].Payload["code"] != want {
				t.Errorf("retry code %v, want %s", retries[0].Payload["code"], want)
			}
			if res.Counters.HardTotal != 0 {
				t.Errorf("a corrected answer consumed the hard budget: %+v", res.Counters)
			}
		})
	}
}

// TestAPIKeyNeverInOutputs searches everything the runtime produced:
// events, the trajectory file, the cached profile and the result.
func TestAPIKeyNeverInOutputs(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	h := newHarness(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels}, coord.SpaceAuto, func(c *Config) {
		c.OnEvent = func(e AgentEvent) { b, _ := json.Marshal(e); stream.Write(b) }
	})
	res := h.run(t, "increase the counter to 1", 10)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	for _, r := range h.srv.Requests() {
		if !r.Authorized {
			t.Fatal("the key was not sent to the endpoint")
		}
	}
	rb, _ := json.Marshal(res)
	tb := h.trajectory(t, res)
	blobs := map[string][]byte{"events": stream.Bytes(), "result": rb, "trajectory": tb}
	filepath.WalkDir(h.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			blobs[p] = b
		}
		return nil
	})
	if len(blobs) < 4 {
		t.Fatalf("no cache file written: %v", len(blobs))
	}
	for name, b := range blobs {
		if bytes.Contains(b, []byte(testAPIKey)) || bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("%s contains the API key", name)
		}
	}
	if s := redact.NewSecret(testAPIKey); strings.Contains(fmtAll(s), testAPIKey) {
		t.Error("formatting a redact.Secret shows the key")
	}
}

// TestModelErrorRedactsKey: an endpoint that rejects the key produces an
// error without it.
func TestModelErrorRedactsKey(t *testing.T) {
	t.Parallel()
	_, m := startFakeModel(t, fakemodel.Options{APIKey: "another-key"}, "m", func(mc *chat.Config) {
		mc.APIKey, mc.Retries = redact.NewSecret(testAPIKey), 0
	})
	_, err := m.Chat(context.Background(), chat.Request{Purpose: "plan", Messages: []chat.Message{{Role: "user", Text: "hi"}}})
	var fe *fault.Error
	if err == nil || !errors.As(err, &fe) || fe.Code != fault.CodeModelAuthFailed || fe.Kind != fault.Transport {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), testAPIKey) {
		t.Fatal("the error shows the key")
	}
}
