package readiness

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ---- the simulated phone (shared by this package's tests) ----

// The device of these tests is the simulator (SoloPi's device side per
// docs/device-protocol.md, reached in-process through the same Transport
// interface adb uses); what a test needs from an odd or broken device comes
// from the simulator's fault knobs.

// Sensitive values the simulated SoloPi holds; no output may carry them.
const (
	secretAESKey = "s3cr3t-aes-key-value"
	secretGlobal = `{"password":"hunter2-global"}`
)

// newSimDevice starts a simulated phone at a high time scale with a ready
// SoloPi (auto-start on, every permission granted, secrets set); opts
// adjust it first.
func newSimDevice(t *testing.T, opts ...func(*sim.Options)) *sim.Device {
	t.Helper()
	o := sim.Options{Serial: "sim-readiness", TimeScale: 50, App: core.Config{Settings: map[string]string{
		"KEY_REPLAY_AUTO_START": "true", "KEY_AES_KEY": secretAESKey, "KEY_GLOBAL_SETTINGS": secretGlobal}}}
	for _, fn := range opts {
		fn(&o)
	}
	dev := sim.New(o)
	t.Cleanup(func() { dev.Close() })
	return dev
}

// answering waits until SoloPi's control service answers.
func answering(t *testing.T, dev *sim.Device) *sim.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return dev
}

// denied starts the phone with these health permissions denied.
func denied(perms ...string) func(*sim.Options) {
	return func(o *sim.Options) { o.App.DeniedPermissions = append(o.App.DeniedPermissions, perms...) }
}

// setting starts the phone with one more SoloPi setting.
func setting(key, value string) func(*sim.Options) {
	return func(o *sim.Options) { o.App.Settings[key] = value }
}

// answerFault edits the device's answers (sim.AnswerFault).
func answerFault(t *testing.T, dev *sim.Device, f sim.AnswerFault) {
	t.Helper()
	if err := dev.AddAnswerFault(f); err != nil {
		t.Fatal(err)
	}
}

// ran counts the commands the device ran that start with prefix.
func ran(dev *sim.Device, prefix string) int {
	n := 0
	for _, c := range dev.Commands() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// touches counts what reaches the device from now on (queries answered,
// mutations received).
func touches(t *testing.T, dev *sim.Device) func() int {
	var n atomic.Int64
	stop := dev.OnAnswer(func(sim.Answer) { n.Add(1) })
	t.Cleanup(stop)
	muts := len(dev.Mutations())
	return func() int { return int(n.Load()) + len(dev.Mutations()) - muts }
}

// fastSession are session options that keep the tests quick.
func fastSession() device.SessionOptions {
	return device.SessionOptions{Device: device.DeviceOptions{RequestTimeout: 2 * time.Second}, StartupTimeout: 1500 * time.Millisecond, PollInterval: 20 * time.Millisecond}
}

func openTestSession(t *testing.T, dev *sim.Device) *device.Session {
	t.Helper()
	s, err := device.OpenSession(context.Background(), dev, fastSession())
	if err != nil {
		t.Fatalf("OpenSession: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// wantCode checks an *fault.Error's code and exit.
func wantCode(t *testing.T, err error, code string, exit fault.Kind) *fault.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %s (exit %v), got nil", code, exit)
	}
	var e *fault.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *fault.Error %s, got %T %v", code, err, err)
	}
	if e.Code != code || e.Kind != exit {
		t.Fatalf("want %s/exit %v, got %s/exit %v: %v", code, exit, e.Code, e.Kind, e)
	}
	return e
}

// ---- session bootstrap ----

func TestSessionNotInstalled(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	if err := dev.Phone.UninstallApp(protocol.DefaultPackage); err != nil {
		t.Fatal(err)
	}
	_, err := device.OpenSession(context.Background(), dev, fastSession())
	e := wantCode(t, err, fault.CodeSolopiNotInstalled, fault.Invalid)
	if !strings.Contains(e.UserAction, "Install SoloPi 1.x") {
		t.Errorf("user action %q", e.UserAction)
	}
	if ran(dev, "monkey") != 0 {
		t.Error("must not launch a package that is not installed")
	}
}

func TestSessionNoLaunchWhenAnswering(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	if s.Launched || ran(dev, "monkey") != 0 {
		t.Fatal("SoloPi was launched although its service answered")
	}
	if !strings.Contains(string(s.Capabilities), `"protocolVersion":"2.0"`) {
		t.Fatalf("capabilities %s", s.Capabilities)
	}
	if ran(dev, "dumpsys window") != 0 {
		t.Error("foreground read although nothing was launched")
	}
}

func TestSessionLaunchesWhenNotAnswering(t *testing.T) {
	t.Parallel()
	// SoloPi is not running, and its service answers success:false a few
	// times after the launch.
	dev := stoppedUntilLaunched(t)
	answerFault(t, dev, sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "capabilities"},
		Set: map[string]any{"success": false, "error": "not yet"}, Remove: []string{"protocolVersion"}, Times: 3})
	s := openTestSession(t, dev)
	if !s.Launched || ran(dev, "monkey -p com.alipay.hulu -c android.intent.category.LAUNCHER 1") != 1 {
		t.Fatalf("launched=%v calls=%v", s.Launched, dev.Commands())
	}
}

func TestSessionPreserveForeground(t *testing.T) {
	t.Parallel()
	dev := stoppedUntilLaunched(t)
	if err := dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	o := fastSession()
	o.PreserveForeground = true
	s, err := device.OpenSession(context.Background(), dev, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := "com.example.counter/com.example.counter.MainActivity"
	if s.Foreground != want || !s.Restored {
		t.Fatalf("foreground %q restored %v", s.Foreground, s.Restored)
	}
	if ran(dev, "am start -W -n "+want) != 1 {
		t.Fatalf("foreground not restored: %v", dev.Commands())
	}
	if pkg, _ := dev.Phone.Foreground(); pkg != "com.example.counter" {
		t.Fatalf("foreground after the session %s", pkg)
	}
}

func TestSessionLaunchFails(t *testing.T) {
	t.Parallel()
	dev := notStarting(t)
	if err := dev.Phone.OverrideCommand("monkey", nil, android.CommandOutput{Stdout: "** No activities found to run, monkey aborted.\n"}); err != nil {
		t.Fatal(err)
	}
	_, err := device.OpenSession(context.Background(), dev, fastSession())
	wantCode(t, err, fault.CodeSolopiLaunchFailed, fault.Transport)
}

// notStarting is a SoloPi whose init never finishes: its service never
// answers, launched or not.
func notStarting(t *testing.T) *sim.Device {
	return newSimDevice(t, func(o *sim.Options) { o.App.InitDelay = time.Hour })
}

// stoppedUntilLaunched is a phone just booted whose SoloPi was not opened
// yet: its init, and 5 s later its service, start once something launches
// it.
func stoppedUntilLaunched(t *testing.T) *sim.Device {
	dev := notStarting(t)
	stop := dev.OnCommand(func(cmd string) {
		if strings.HasPrefix(cmd, "monkey -p "+protocol.DefaultPackage+" ") {
			dev.App.SetAppInitialized(true)
		}
	})
	t.Cleanup(stop)
	return dev
}

func TestSessionStartupTimeout(t *testing.T) {
	t.Parallel()
	dev := notStarting(t)
	o := fastSession()
	o.StartupTimeout = 300 * time.Millisecond
	_, err := device.OpenSession(context.Background(), dev, o)
	e := wantCode(t, err, fault.CodeControlServiceNotReady, fault.Transport)
	if e.Details["lastError"] == nil {
		t.Error("no lastError")
	}
}

func TestSessionProtocolMismatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ harness, agent string }{{"1.0", "1.0"}, {"2.0", "2.0"}, {"", ""}} {
		dev := newSimDevice(t)
		answerFault(t, dev, sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "capabilities"},
			Set: map[string]any{"protocolVersion": c.harness, "agentProtocolVersion": c.agent}})
		_, err := device.OpenSession(context.Background(), dev, fastSession())
		e := wantCode(t, err, fault.CodeProtocolVersionMismatch, fault.Transport)
		if e.Details["protocolVersion"] != c.harness || e.Details["agentProtocolVersion"] != c.agent {
			t.Errorf("details %v", e.Details)
		}
		if !strings.Contains(e.Message, `"`+c.harness+`"`) || !strings.Contains(e.Message, "agent protocol") {
			t.Errorf("message must name both versions: %s", e.Message)
		}
	}
}

// classicSoloPi installs SoloPi with versionName v and no harness resolver
// (SoloPi 0.x answers NanoHTTPD's text/html fallback).
func classicSoloPi(t *testing.T, v string) *sim.Device {
	dev := newSimDevice(t, func(o *sim.Options) {
		for _, a := range appspec.DefaultApps() {
			if a.Package == protocol.DefaultPackage {
				a.VersionName = v
			}
			o.Phone.Apps = append(o.Phone.Apps, a)
		}
	})
	answerFault(t, dev, sim.AnswerFault{Action: "harness", HTML: true})
	return dev
}

func TestSessionClassicSoloPi(t *testing.T) {
	t.Parallel()
	t.Run("versionName 0.x", func(t *testing.T) {
		t.Parallel()
		dev := answering(t, classicSoloPi(t, "0.12.3"))
		_, err := device.OpenSession(context.Background(), dev, fastSession())
		e := wantCode(t, err, fault.CodeSolopiVersionUnsupported, fault.Transport)
		if !strings.HasPrefix(e.UserAction, "Install SoloPi 1.x (harness protocol 2.0)") {
			t.Errorf("user action %q", e.UserAction)
		}
		if ran(dev, "monkey") != 0 {
			t.Error("a classic SoloPi must be reported at once, not launched and waited for")
		}
	})
	t.Run("no harness resolver whatever the version says", func(t *testing.T) {
		t.Parallel()
		dev := answering(t, classicSoloPi(t, "1.0.2"))
		// SoloPi is launched and waited for until the start-up timeout;
		// what the last probe saw classifies it. A probe a loaded machine
		// answers late must still fit in the wait (1.5 s was overrun under
		// the whole suite's load).
		o := fastSession()
		o.StartupTimeout = 3 * time.Second
		_, err := device.OpenSession(context.Background(), dev, o)
		wantCode(t, err, fault.CodeSolopiVersionUnsupported, fault.Transport)
	})
}

func TestSessionInterrupted(t *testing.T) {
	t.Parallel()
	dev := notStarting(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := fastSession()
	o.StartupTimeout = 10 * time.Second
	// A poll that ignored the cancellation would end at StartupTimeout
	// with control_service_not_ready instead.
	_, err := device.OpenSession(ctx, dev, o)
	wantCode(t, err, fault.CodeInterrupted, fault.Interrupted)
}

func TestParseVersionName(t *testing.T) {
	t.Parallel()
	if v := device.ParseVersionName("  versionCode=37\n    versionName=1.0.2\n  versionName=9"); v != "1.0.2" {
		t.Errorf("got %q", v)
	}
	if v := device.ParseVersionName("nothing"); v != "" {
		t.Errorf("got %q", v)
	}
}

// ---- whole flows ----

func simSession(t *testing.T, dev *sim.Device) *device.Session {
	t.Helper()
	s, err := device.OpenSession(context.Background(), dev, device.SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("open session on the simulator: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestSimSessionDoctorAndInfo(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t, setting("KEY_REPLAY_AUTO_START", "false"))
	s := simSession(t, dev)
	ctx := context.Background()
	r, err := doctorOnSession(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	// SoloPi's default KEY_REPLAY_AUTO_START is false: the one finding,
	// upstream's failedChecks, and one run and verify-run fix themselves:
	// the device is ready, and nothing tells the tester to set up SoloPi.
	if !r.Ready || !r.Success || len(r.MissingPermissions) != 0 || !slices.Equal(r.FailedChecks, []string{device.FailedAutoStart}) || !r.Installed ||
		!slices.Equal(r.FixedByRun, []string{device.CheckAutoStart, device.CheckReady}) || r.ErrorCode != "" || r.UserActionRequired != "" {
		t.Fatalf("doctor %+v", r)
	}
	for _, c := range r.Checks {
		if !c.OK && (!c.FixedByRun || c.UserActionRequired != device.ActionAutoStartByRun) {
			t.Errorf("check %+v", c)
		}
	}
	// A second session finds the service answering and must not launch.
	again := simSession(t, dev)
	if again.Launched {
		t.Error("launched SoloPi although its control service answered")
	}
	for name, q := range map[string]func(context.Context, *device.Session) (map[string]any, error){
		"apps": Apps, "app-info": AppInfo, "app-status": AppStatus,
	} {
		if _, err := q(ctx, s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := CapabilitiesOf(s); err != nil {
		t.Error(err)
	}
}

func TestSimDoctorMissingPermission(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t, denied("float"), setting("KEY_REPLAY_AUTO_START", "false"))
	r, err := Doctor(context.Background(), dev, DoctorOptions{Session: device.SessionOptions{StartupTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ready || !slices.Contains(r.MissingPermissions, "float") || r.FixedByRun != nil || r.ErrorCode != fault.CodeSolopiNotReady {
		t.Fatalf("%+v", r)
	}
	// With a real gap, auto-start is reported as before (nothing is
	// waved through as fixed by the run).
	for _, c := range r.Checks {
		if c.FixedByRun {
			t.Errorf("check %+v", c)
		}
	}
}

func TestSimAdbConnect(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t, denied("adb"))
	s := simSession(t, dev)
	res, err := AdbConnect(context.Background(), s, AdbConnectOptions{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("adb-connect against the simulator: %v", err)
	}
	if !res.Connected || res.AlreadyConnected || res.Doctor == nil || !res.Doctor.Ready {
		t.Fatalf("%+v", res)
	}
	again, err := AdbConnect(context.Background(), s, AdbConnectOptions{PollInterval: 20 * time.Millisecond})
	if err != nil || !again.AlreadyConnected {
		t.Fatalf("second adb-connect: %+v %v", again, err)
	}
}

func TestSimConfig(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	s := simSession(t, dev)
	ctx := context.Background()
	list, err := ConfigList(ctx, s)
	if err != nil || list.Count != 25 {
		t.Fatalf("list %+v %v", list, err)
	}
	for key, v := range map[string]string{"KEY_MAX_WAIT_TIME": "20000", "KEY_HIDE_LOG": "FALSE", "KEY_OUTPUT_CHARSET": "UTF-8", "KEY_USE_LANGUAGE": "2"} {
		res, err := ConfigSet(ctx, s, key, v, ConfigSetOptions{PollInterval: 20 * time.Millisecond, AckTimeout: 10 * time.Second})
		if err != nil || !res.Confirmed {
			t.Fatalf("%s=%s: %+v %v", key, v, res, err)
		}
	}
	for _, key := range []string{"KEY_AES_KEY", "KEY_GLOBAL_SETTINGS"} {
		got, err := ConfigGet(ctx, s, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if c := printed(t, got.Config); c["redacted"] != true || c["value"] != nil {
			t.Fatalf("%s: %v", key, c)
		}
	}
}

func TestSimScreenshotLogsStartup(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	ctx := context.Background()
	dir := t.TempDir()
	shot, err := Screenshot(ctx, dev, filepath.Join(dir, "s.png"))
	if err != nil || shot.Width <= 0 {
		t.Fatalf("screenshot %+v %v", shot, err)
	}
	logs, err := Logs(ctx, dev, filepath.Join(dir, "l.txt"), 50)
	if err != nil {
		t.Fatalf("logs %+v %v", logs, err)
	}
	for _, mode := range []string{StartupCold, startupWarm} {
		rep, err := MeasureStartup(ctx, dev, StartupOptions{TargetPackage: "com.example.counter", Mode: mode, Count: 2, Interval: time.Millisecond})
		if err != nil {
			t.Fatalf("startup-time %s against the simulator: %v", mode, err)
		}
		if rep.ValidSampleCount != 2 || !rep.Statistics["TotalTime"].Available {
			t.Fatalf("%+v", rep)
		}
	}
}
