package agentloop

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

func preflightFor(t *testing.T, m *chat.Client, space coord.Space, cache string) (*PreflightReport, error) {
	t.Helper()
	mc := m.Config()
	return RunPreflight(context.Background(), PreflightOptions{Model: m, Space: space, CacheDir: cache, Policy: coord.DefaultResizePolicy(),
		Key: ProfileKey{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: mc.Thinking, Resize: coord.DefaultResizePolicy()}, Redact: mc.APIKey.Redact})
}

func passed(r *PreflightReport) bool {
	for _, c := range r.Checks {
		if c.Status != CheckPassed {
			return false
		}
	}
	return len(r.Checks) > 0
}

func checkStatuses(r *PreflightReport) map[string]string {
	out := map[string]string{}
	for _, c := range r.Checks {
		out[c.Name] = c.Status
	}
	return out
}

func TestPreflightPassesAndCaches(t *testing.T) {
	t.Parallel()
	srv, m := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsRelative, APIKey: testAPIKey}, "fake-vision", func(mc *chat.Config) { mc.APIKey = redact.NewSecret(testAPIKey) })
	cache := t.TempDir()
	rep, err := preflightFor(t, m, coord.SpaceAuto, cache)
	if err != nil || !passed(rep) || len(rep.Checks) != 5 {
		t.Fatalf("%v %+v", err, rep.Checks)
	}
	if rep.Profile.Source != SourceNegotiated || rep.Profile.Space != coord.SpaceRelative {
		t.Fatalf("profile %+v", rep.Profile)
	}
	if rep.Metrics().ByPurpose["preflight"] != 2 || rep.Metrics().ByPurpose["calibration"] < 3 {
		t.Errorf("metrics %+v", rep.Metrics())
	}
	// The next preflight reads the profile from the cache; an explicit
	// space overrides the cache.
	rep, err = preflightFor(t, m, coord.SpaceAuto, cache)
	if err != nil || rep.Profile.Source != SourceCache {
		t.Fatalf("%v %+v", err, rep.Profile)
	}
	rep, err = preflightFor(t, m, coord.SpaceImage, cache)
	if err != nil || rep.Profile.Source != SourceConfigured || rep.Profile.Space != coord.SpaceImage {
		t.Fatalf("%v %+v", err, rep.Profile)
	}
	// A run that follows a preflight does not negotiate again and its
	// trail starts with the preflight's events and usage.
	before := len(srv.Requests())
	rep, _ = preflightFor(t, m, coord.SpaceAuto, cache)
	dev := &counterDevice{}
	a, _ := New(Config{Space: coord.SpaceAuto, Preflight: rep, CacheDir: t.TempDir()}, dev, m)
	res, err := a.Run(context.Background(), Task{Goal: "increase the counter to 1", MaxSteps: 5})
	if err != nil || res.Outcome != OutcomeCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	for _, r := range srv.Requests()[before:] {
		if r.Kind == "calibration" {
			t.Fatal("the run negotiated although the preflight froze a profile")
		}
	}
	evs := a.State().Events()
	if evs[0].Type != evModelRequest || evs[0].Payload["purpose"] != "preflight" || res.Metrics.ByPurpose["preflight"] != 2 {
		t.Fatalf("first event %+v, metrics %+v", evs[0], res.Metrics)
	}
	for i, e := range evs {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	if len(eventsOf(evs, EvCalibration)) != 1 {
		t.Error("the calibration evidence of the preflight is not in the run's trail")
	}
}

func TestPreflightFailures(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, tc := range []struct {
		name   string
		opts   fakemodel.Options
		adjust func(*chat.Config)
		code   string
		kind   fault.Kind
		failed string
	}{
		{"wrong key", fakemodel.Options{APIKey: "the-right-key"}, nil, fault.CodeModelAuthFailed, fault.Transport, CheckAuth},
		{"text-only", fakemodel.Options{Provider: fakemodel.ProviderTextOnly}, nil, fault.CodeModelRejectsImages, fault.Failed, CheckImages},
		{"unreachable", fakemodel.Options{}, func(mc *chat.Config) { mc.BaseURL = closed }, fault.CodeModelUnreachable, fault.Transport, CheckReachable},
		{"stream-only without streaming", fakemodel.Options{Provider: fakemodel.ProviderStreamOnly}, nil, fault.CodeModelHTTPError, fault.Transport, checkCompletion},
		{"inconsistent spaces", fakemodel.Options{Coords: fakemodel.CoordsInconsistent}, nil, fault.CodeCoordinateCalibrationFailed, fault.Transport, CheckCoordinates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, m := startFakeModel(t, tc.opts, "fake-vision", func(mc *chat.Config) {
				mc.APIKey, mc.Retries = redact.NewSecret(testAPIKey), 0
				if tc.adjust != nil {
					tc.adjust(mc)
				}
			})
			rep, err := preflightFor(t, m, coord.SpaceAuto, t.TempDir())
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != tc.code || fe.Kind != tc.kind || fe.UserAction == "" {
				t.Fatalf("err %v, want %s (%v)", err, tc.code, tc.kind)
			}
			st := checkStatuses(rep)
			if st[tc.failed] != CheckFailed || len(rep.Checks) != 5 || passed(rep) {
				t.Fatalf("checks %+v", rep.Checks)
			}
			after := false
			for _, c := range rep.Checks {
				if after && c.Status != checkSkipped {
					t.Errorf("check %s after the failure: %s", c.Name, c.Status)
				}
				after = after || c.Status == CheckFailed
			}
			for _, r := range srv.Requests() {
				if r.Kind == "plan" {
					t.Error("the preflight planned")
				}
			}
		})
	}
}
