package execution

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

func TestSelectProvider(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opts ProviderOptions
		code string
	}{
		{ProviderOptions{}, ""},
		{ProviderOptions{Name: "static", DecisionsFile: "d.json"}, ""},
		{ProviderOptions{Name: "on-device", OnDeviceFlags: []string{"model-package"}}, fault.CodeProviderNotSupported},
		{ProviderOptions{Name: "static", OnDeviceFlags: []string{"public-key"}}, fault.CodeInvalidProviderOptions},
		{ProviderOptions{Name: "static", CloudEndpoint: "http://127.0.0.1:1/d"}, fault.CodeInvalidProviderOptions},
		{ProviderOptions{Name: "vision", CloudFallbackEndpoint: "file:///x"}, fault.CodeInvalidProviderOptions},
		{ProviderOptions{Name: "cloud"}, fault.CodeInvalidProviderOptions},
		{ProviderOptions{Name: "cloud", CloudEndpoint: "ftp://x"}, fault.CodeInvalidProviderOptions},
		{ProviderOptions{Name: "cloud", CloudEndpoint: "http://127.0.0.1:1/d", DecisionsFile: "d.json"}, fault.CodeProviderConflict},
		{ProviderOptions{Name: "vision"}, fault.CodeProviderNotSupported},
		{ProviderOptions{Name: "magic"}, fault.CodeInvalidProviderOptions},
	}
	for _, c := range cases {
		p, err := selectProvider(c.opts)
		if got := fault.CodeOf(err); got != c.code {
			t.Errorf("%+v: code %q, want %q", c.opts, got, c.code)
		}
		if err != nil && fault.KindOf(err) != fault.Invalid {
			t.Errorf("%+v: kind %v, want invalid (exit 3)", c.opts, fault.KindOf(err))
		}
		if c.code == "" && p != nil {
			t.Errorf("%+v: static must not be a live provider", c.opts)
		}
	}
	p, err := selectProvider(ProviderOptions{Name: "cloud", CloudEndpoint: "http://127.0.0.1:1/a", CloudFallbackEndpoint: "http://127.0.0.1:1/b"})
	if _, ok := p.(*fallbackProvider); err != nil || !ok {
		t.Errorf("cloud with a fallback endpoint = %T, %v", p, err)
	}
}

func TestCloudProvider(t *testing.T) {
	t.Parallel()
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body.Store(string(b))
		switch r.URL.Path {
		case "/ok":
			_, _ = io.WriteString(w, `{"type":"done","reason":"ok"}`)
		case "/list":
			_, _ = io.WriteString(w, `[1]`)
		case "/big":
			_, _ = io.WriteString(w, `{"type":"done","reason":"`+strings.Repeat("x", maxCloudResponse)+`"}`)
		case "/garbage":
			_, _ = io.WriteString(w, `not json`)
		default:
			http.Error(w, "down", http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	in := DecisionContext{ScenarioID: "s", SegmentID: "g", StepID: "e", StepIndex: 2, Goal: "goal", AllowedActions: []string{"click"}, Observation: map[string]any{"observationId": "o"}}
	c := newCloudProvider(srv.URL+"/ok", 0, fastClock)
	d, err := c.Decide(context.Background(), in)
	if err != nil || d["type"] != "done" {
		t.Fatalf("Decide = %v, %v", d, err)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(body.Load().(string)), &sent); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenarioId", "segmentId", "stepId", "stepIndex", "goal", "allowedActions", "observation"} {
		if _, ok := sent[k]; !ok {
			t.Errorf("the posted context lacks %s: %v", k, sent)
		}
	}
	for path, want := range map[string]struct {
		code     string
		eligible bool
	}{
		"/down": {fault.CodeCloudUnavailable, true}, "/big": {fault.CodeCloudUnavailable, true},
		"/garbage": {fault.CodeCloudUnavailable, true}, "/list": {fault.CodeInvalidDecision, false},
	} {
		c := newCloudProvider(srv.URL+path, 0, fastClock)
		_, err := c.Decide(context.Background(), in)
		if fault.CodeOf(err) != want.code || fallbackEligible(err) != want.eligible {
			t.Errorf("%s: %v (eligible %v), want %s %v", path, err, fallbackEligible(err), want.code, want.eligible)
		}
	}
	fb := &fallbackProvider{Primary: mustCloud(t, srv.URL+"/down"), Fallback: mustCloud(t, srv.URL+"/ok")}
	d, err = fb.Decide(context.Background(), in)
	if err != nil || d["fallback"].(map[string]any)["reason"] != fault.CodeCloudUnavailable {
		t.Errorf("fallback = %v, %v", d, err)
	}
	fb = &fallbackProvider{Primary: mustCloud(t, srv.URL+"/list"), Fallback: mustCloud(t, srv.URL+"/ok")}
	if _, err := fb.Decide(context.Background(), in); fault.CodeOf(err) != fault.CodeInvalidDecision {
		t.Errorf("a wrong answer must not fall back: %v", err)
	}
}

func mustCloud(t *testing.T, u string) *cloudProvider {
	if err := checkEndpoint(u); err != nil {
		t.Fatal(err)
	}
	return newCloudProvider(u, 0, fastClock)
}

// fastClock takes the retries' 200 ms pauses in 0.2 µs.
var fastClock = clock.NewScaled(1e6)

// The retry of a 503 waits on the provider's clock, not on the wall.
func TestCloudProviderRetryPause(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"type":"done","reason":"ok"}`)
	}))
	defer srv.Close()
	clk := clock.NewFake(time.Unix(0, 0))
	c := newCloudProvider(srv.URL, 0, clk)
	done := make(chan error, 1)
	go func() { _, err := c.Decide(context.Background(), DecisionContext{ScenarioID: "s"}); done <- err }()
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d requests before the pause", n)
	}
	clk.Advance(200 * time.Millisecond)
	if err := <-done; err != nil || calls.Load() != 2 {
		t.Fatalf("after the pause: %v, %d requests", err, calls.Load())
	}
}

// A live provider drives the matrix's explore steps: the hybrid scenario
// passes with the provider deciding, and a provider that says done without
// acting is still judged failed by the oracle.
func TestEngineWithLiveProvider(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in DecisionContext
		_ = json.NewDecoder(r.Body).Decode(&in)
		value := ""
		if page, ok := in.Observation["page"].(map[string]any); ok {
			for _, c := range page["children"].([]any) {
				n := c.(map[string]any)
				if strings.HasSuffix(n["resourceId"].(string), "counter_value") {
					value = n["text"].(string)
				}
			}
		}
		switch {
		case in.ScenarioID == "hybrid-success" && value == "0":
			_, _ = io.WriteString(w, `{"type":"act","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/increment_button"}},"modelReceipt":{"provider":"test"}}`)
		default:
			_, _ = io.WriteString(w, `{"type":"done","reason":"claimed"}`)
		}
	}))
	defer srv.Close()
	plan := compileFixture(t, "counter-outcome-matrix")
	rememberCases(plan)
	p, err := selectProvider(ProviderOptions{Name: "cloud", CloudEndpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	phone := &counterPhone{}
	out, err := (&Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Provider: p}).Run(context.Background(), plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range out.Report.Scenarios {
		got[s.ScenarioID] = s.Status
	}
	want := map[string]string{"hybrid-success": verify.Passed, "product-failure": verify.Failed, "agent-false-done": verify.Failed, "uncovered-checkpoint": verify.Failed, "cleanup-failure": verify.Failed}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	if c := out.Report.Scenarios[2].Checkpoints[0]; c.Reason != verify.ReasonOracleMismatch || *c.Actual != "0" {
		t.Errorf("agent-false-done checkpoint = %+v: a false done must be judged by the oracle", c)
	}
}
