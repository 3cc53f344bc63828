package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// setupFor is the model setup of a fake model expecting the test key.
func setupFor(t *testing.T, fo fakemodel.Options, cache string) *ModelSetup {
	t.Helper()
	fo.APIKey = testAPIKey
	srv, err := fakemodel.Start(fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.APIKey, mc.Retries = srv.URL, "fake-vision", redact.NewSecret(testAPIKey), 0
	s, err := NewModelSetup(SetupOptions{Config: mc, ResizeLongSide: 1280, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The options a setup refuses before any request: negative prices, no
// endpoint, a resize outside 64..8192.
func TestModelSetupRefusesOptions(t *testing.T) {
	t.Parallel()
	good := chat.DefaultConfig()
	good.BaseURL, good.Model = "http://127.0.0.1:1/v1", "m"
	negative := good
	negative.InputPricePerMTok = -1
	for _, c := range []struct {
		o    SetupOptions
		code string
	}{
		{SetupOptions{Config: negative}, fault.CodeInvalidOption},
		{SetupOptions{Config: chat.DefaultConfig()}, fault.CodeModelConfigInvalid},
		{SetupOptions{Config: good, ResizeLongSide: 32}, fault.CodeInvalidOption},
		{SetupOptions{Config: good, ResizeLongSide: 9000}, fault.CodeInvalidOption},
	} {
		_, err := NewModelSetup(c.o)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != c.code || fe.Kind != fault.Invalid {
			t.Errorf("%+v: %v", c.o.ResizeLongSide, err)
		}
	}
	s, err := NewModelSetup(SetupOptions{Config: good, NoCache: true})
	if err != nil || s.CacheDir != "" || s.ProfileFile(&Profile{Source: SourceNegotiated}) != "" {
		t.Fatalf("no cache: %v %+v", err, s)
	}
}

// The setup's key never leaves it: Redact and Scrub hide it, Info does not
// hold it, and the runtime configuration redacts with the same rule.
func TestModelSetupHidesTheKey(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	s := setupFor(t, fakemodel.Options{Coords: fakemodel.CoordsRelative}, cache)
	if got := s.Redact("key=" + testAPIKey); strings.Contains(got, testAPIKey) || !strings.Contains(got, redact.Marker) {
		t.Fatalf("Redact: %q", got)
	}
	b, _ := json.Marshal(s.Scrub(map[string]string{"detail": "sent " + testAPIKey}))
	if strings.Contains(string(b), testAPIKey) {
		t.Fatalf("Scrub: %s", b)
	}
	if b, _ := json.Marshal(s.Info()); strings.Contains(string(b), testAPIKey) {
		t.Fatalf("Info: %s", b)
	}
	cfg := s.Runtime(coord.SpaceAuto)
	if cfg.Redact(testAPIKey) != redact.Marker || cfg.CacheDir != cache || cfg.ProfileKey != s.ProfileKey() || cfg.Policy.MaxLongSide != 1280 {
		t.Fatalf("runtime %+v", cfg)
	}
	if f := s.ProfileFile(&Profile{Source: SourceNegotiated}); f != filepath.Join(cache, s.ProfileKey().Hash()+".json") {
		t.Fatalf("profile file %q", f)
	}
	if s.ProfileFile(&Profile{Source: SourceConfigured}) != "" {
		t.Fatal("a configured space has no profile file")
	}
}

// Preflight passes on a vision model and caches the profile a calibration
// then reads; a device-side check that fails reads like a failed model
// check, with the checks, the model and the usage, and without the key.
func TestModelSetupPreflightAndCalibrate(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	s := setupFor(t, fakemodel.Options{Coords: fakemodel.CoordsRelative}, cache)
	ctx := context.Background()
	rep, err := s.Preflight(ctx, coord.SpaceAuto, 1080, 2340)
	if err != nil || !passed(rep) {
		t.Fatalf("%v %+v", err, rep)
	}
	err = s.RunCheck(rep, "adb_keyboard", func() error {
		return fault.Usage("adb_keyboard_missing", "no ADB keyboard; key "+testAPIKey)
	})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != "adb_keyboard_missing" || fe.Details["checks"] == nil || fe.Details["model"] == nil ||
		strings.Contains(fe.Message, testAPIKey) {
		t.Fatalf("%#v", err)
	}
	if s.RunCheck(rep, "fine", func() error { return nil }) != nil {
		t.Fatal("a passing check failed")
	}
	cal, err := s.Calibrate(ctx, coord.SpaceAuto, 1080, 2340)
	if err != nil || cal.Profile == nil || cal.Profile.Source != SourceCache {
		t.Fatalf("%v %+v", err, cal)
	}
}

// A preflight against nothing is a model failure carrying the checks; a
// calibration against a model that finds no contract is
// coordinate_calibration_failed with the candidates; a cancelled one is
// the context's error.
func TestModelSetupFailures(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.APIKey, mc.Retries = closed, "m", redact.NewSecret(testAPIKey), 0
	s, err := NewModelSetup(SetupOptions{Config: mc, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Preflight(context.Background(), coord.SpaceAuto, 1080, 2340)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Details["checks"] == nil {
		t.Fatalf("%#v", err)
	}
	if _, err := s.Calibrate(context.Background(), coord.SpaceAuto, 1080, 2340); err == nil {
		t.Fatal("a calibration against nothing passed")
	}

	bad := setupFor(t, fakemodel.Options{Coords: fakemodel.CoordsInconsistent}, "")
	if _, err := bad.Calibrate(context.Background(), coord.SpaceAuto, 1080, 2340); !errors.As(err, &fe) || fe.Code != fault.CodeCoordinateCalibrationFailed {
		t.Fatalf("%#v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bad.Preflight(ctx, coord.SpaceAuto, 1080, 2340); err == nil {
		t.Fatal("a cancelled preflight passed")
	}
}
