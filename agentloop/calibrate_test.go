package agentloop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/redact"
)

func newCalibrator(t *testing.T, opts fakemodel.Options, cache string) (*calibrator, *fakemodel.Server) {
	t.Helper()
	opts.APIKey = testAPIKey
	srv, m := startFakeModel(t, opts, "fake-"+opts.Coords, func(mc *chat.Config) { mc.APIKey = redact.NewSecret(testAPIKey) })
	mc := m.Config()
	st := newAgentState(time.Now, mc.APIKey.Redact, nil)
	return &calibrator{Model: m, Policy: coord.DefaultResizePolicy(), CacheDir: cache, state: st,
		Key: ProfileKey{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: chat.ThinkingAuto, Resize: coord.DefaultResizePolicy()}}, srv
}

// TestNegotiationPerFamily: the right space per model family, through
// format quirks, and fail-closed for the inconsistent family.
func TestNegotiationPerFamily(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts fakemodel.Options
		want coord.Space // "" = must fail closed
	}{
		{"relative", fakemodel.Options{Coords: fakemodel.CoordsRelative}, coord.SpaceRelative},
		{"image pixels", fakemodel.Options{Coords: fakemodel.CoordsImagePixels}, coord.SpaceImage},
		{"wrapped relative", fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: fakemodel.QuirkWrapped}, coord.SpaceRelative},
		{"trailing image", fakemodel.Options{Coords: fakemodel.CoordsImagePixels, Quirk: fakemodel.QuirkTrailing}, coord.SpaceImage},
		{"inconsistent", fakemodel.Options{Coords: fakemodel.CoordsInconsistent}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cal, srv := newCalibrator(t, tt.opts, t.TempDir())
			for _, display := range [][2]int{{1216, 2640}, {1080, 2340}} {
				cal.Refresh = true
				p, err := cal.Resolve(context.Background(), coord.SpaceAuto, display[0], display[1])
				if tt.want == "" {
					var ce *calibrationError
					if !errors.As(err, &ce) || len(ce.Candidates) != 2 {
						t.Fatalf("%v: inconsistent family froze %+v (err %v)", display, p, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%v: %v", display, err)
				}
				if p.Space != tt.want || p.Source != SourceNegotiated || p.MaxError > calibrationMaxBound || p.Samples != 3 {
					t.Errorf("%v: profile %+v", display, p)
				}
			}
			// Probes are asymmetric and never the centre.
			for _, r := range srv.Requests() {
				if r.Kind != "calibration" || r.Images != 1 {
					t.Errorf("request %+v", r)
				}
			}
			// Calibration requests are metered like any other.
			m := cal.state.Metrics()
			if m.ByPurpose["calibration"] == 0 || m.PromptTokens == 0 {
				t.Errorf("calibration not metered: %+v", m)
			}
		})
	}
}

func TestProbeTargetsAvoidCentre(t *testing.T) {
	t.Parallel()
	for _, p := range probeTargets {
		if p[0] > 0.4 && p[0] < 0.6 && p[1] > 0.4 && p[1] < 0.6 {
			t.Errorf("probe %v is near the centre", p)
		}
		if p[0] == p[1] {
			t.Errorf("probe %v is symmetric", p)
		}
	}
}

// TestProfileCache: a negotiated profile is cached atomically without the
// key and reused; a configured space never calibrates; a corrupt entry is
// ignored.
func TestProfileCache(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "profiles")
	cal, srv := newCalibrator(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels}, dir)
	if _, err := cal.Resolve(context.Background(), coord.SpaceAuto, 1080, 2340); err != nil {
		t.Fatal(err)
	}
	n := len(srv.Requests())
	p, err := cal.Resolve(context.Background(), coord.SpaceAuto, 1080, 2340)
	if err != nil || p.Source != SourceCache || p.Space != coord.SpaceImage {
		t.Fatalf("second resolve %+v %v", p, err)
	}
	if len(srv.Requests()) != n {
		t.Error("a cached profile still sent calibration requests")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".json") {
		t.Fatalf("cache dir %v %v", entries, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if strings.Contains(string(b), testAPIKey) || strings.Contains(entries[0].Name(), testAPIKey) {
		t.Fatal("the cache holds the API key")
	}
	info, _ := entries[0].Info()
	if info.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v", info.Mode().Perm())
	}
	// Another model is another key.
	other := *cal
	other.Key.Model = "another"
	if other.Key.Hash() == cal.Key.Hash() {
		t.Fatal("the cache key ignores the model")
	}
	other.Key = cal.Key
	other.Key.Thinking = chat.ThinkingEnabled
	if other.Key.Hash() == cal.Key.Hash() {
		t.Fatal("the cache key ignores the thinking mode")
	}
	// A corrupt entry is not trusted: negotiation runs again.
	if err := os.WriteFile(filepath.Join(dir, entries[0].Name()), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = cal.Resolve(context.Background(), coord.SpaceAuto, 1080, 2340)
	if err != nil || p.Source != SourceNegotiated {
		t.Fatalf("after corruption %+v %v", p, err)
	}
	// A configured space is used as it is, with no request at all.
	n = len(srv.Requests())
	p, err = cal.Resolve(context.Background(), coord.SpaceRelative, 1080, 2340)
	if err != nil || p.Source != SourceConfigured || len(srv.Requests()) != n {
		t.Fatalf("configured %+v %v", p, err)
	}
}

func TestSyntheticTargetIsFoundWhereDrawn(t *testing.T) {
	t.Parallel()
	img := SyntheticTarget(591, 1280, [2]float64{0.79, 0.41})
	x, y, ok := fakemodel.FindTarget(img, targetFill)
	if !ok {
		t.Fatal("no target")
	}
	if ex, ey := 0.79*590, 0.41*1279; absF(x-ex) > 1 || absF(y-ey) > 1 {
		t.Errorf("target at %.1f,%.1f, want %.1f,%.1f", x, y, ex, ey)
	}
}

func absF(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
