package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

// ---- scripted transport and fake SoloPi (shared by this package's tests) ----

// shellReply is what a scripted shell command answers.
type shellReply struct {
	stdout, stderr string
	code           int
	err            error
}

// soloTransport is a scripted Transport: Shell dispatches by command
// prefix, mutations (am start ... AdbSchemeActivity) reach the fake SoloPi,
// and DialTCP serves the fake SoloPi's HTTP handler through net.Pipe.
type soloTransport struct {
	*devicefake.Transport
	t      *testing.T
	solo   *fakeSoloPi
	mu     sync.Mutex
	rules  []shellRule
	execFn func(cmd string) ([]byte, error)
}

type shellRule struct {
	prefix string
	fn     func(cmd string) shellReply
}

func newSoloTransport(t *testing.T, solo *fakeSoloPi) *soloTransport {
	t.Helper()
	ft := &soloTransport{t: t, solo: solo, Transport: devicefake.New(t, solo)}
	ft.Name = "FAKE0001"
	ft.OnShell = func(ctx context.Context, cmd string, args []string) (devicefake.Reply, bool) {
		ft.mu.Lock()
		rules := append([]shellRule(nil), ft.rules...)
		ft.mu.Unlock()
		rep := shellReply{}
		matched := false
		for _, r := range rules {
			if strings.HasPrefix(cmd, r.prefix) {
				rep, matched = r.fn(cmd), true
				break
			}
		}
		if !matched {
			rep = solo.defaultShell(cmd)
		}
		if rep.code == notScripted {
			return devicefake.Reply{}, false // the simulated phone's shell
		}
		return devicefake.Reply{Stdout: rep.stdout, Stderr: rep.stderr, Code: rep.code, Err: rep.err}, true
	}
	ft.OnExec = func(ctx context.Context, cmd string) ([]byte, bool, error) {
		ft.mu.Lock()
		fn := ft.execFn
		ft.mu.Unlock()
		if fn == nil {
			return nil, false, nil // the simulated phone
		}
		out, err := fn(cmd)
		return out, true, err
	}
	ft.BeforeDial = func() error {
		if !solo.isServing() {
			return errors.New("adb: service refused by device: closed")
		}
		return nil
	}
	return ft
}

// on adds a rule; later rules win over earlier ones and the defaults.
func (f *soloTransport) on(prefix string, fn func(cmd string) shellReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append([]shellRule{{prefix, fn}}, f.rules...)
}

// shellCalls returns the shell (and exec:) commands run so far.
func (f *soloTransport) shellCalls() []string { return f.ShellLog() }

func (f *soloTransport) ran(prefix string) int { return f.Ran(prefix) }

// fakeSoloPi is SoloPi 1.0.2's device side, as far as these commands use it.
type fakeSoloPi struct {
	mu sync.Mutex

	installed     bool
	versionName   string
	serving       bool // the HTTP server listens
	startOnLaunch bool
	noHarness     bool // SoloPi 0.x: every request gets the text/html fallback
	caps          map[string]any
	capsFailing   int // answer capabilities with success:false this many times

	health map[string]any

	config       map[string]any // current values by key
	ignoreSet    bool           // the device silently keeps old values
	leakValues   bool           // the device forgets to redact sensitive values
	configSpecFn func(spec map[string]any) map[string]any

	adbReceipts  map[string]map[string]any
	onAdbConnect func(f *fakeSoloPi, id string) // device reaction to the mutation
	adbStatusFn  func(f *fakeSoloPi, id string) map[string]any

	status map[string]any
	page   map[string]any

	focus    string
	launches int
	queries  []string
	mutates  []string
}

func newFakeSoloPi() *fakeSoloPi {
	f := &fakeSoloPi{installed: true, versionName: "1.0.2", serving: true, startOnLaunch: true,
		focus:       "com.example.counter/com.example.counter.MainActivity",
		adbReceipts: map[string]map[string]any{},
		status:      map[string]any{"status": "none"},
		page:        map[string]any{"page": map[string]any{"className": "android.widget.FrameLayout", "children": []any{}}},
	}
	f.caps = map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0",
		"packageName": "com.alipay.hulu", "devicePort": 23342, "transports": []any{"adb-forward-http", "adb-scheme"}}
	f.health = readyHealth()
	f.config = map[string]any{}
	for _, k := range configTable {
		f.config[k.Key] = defaultValueOf(k)
	}
	f.config["KEY_AES_KEY"] = "s3cr3t-aes-key-value"
	f.config["KEY_GLOBAL_SETTINGS"] = `{"password":"hunter2-global"}`
	return f
}

func readyHealth() map[string]any {
	return map[string]any{"success": true, "protocolVersion": "2.0", "appInitialized": true,
		"permissions": map[string]any{"adb": true, "float": true, "background": true, "powerSave": true, "accessibility": true},
		"autoStart":   true, "ready": true, "run": map[string]any{"success": true, "state": "idle"}}
}

func defaultValueOf(k ConfigKey) any {
	switch k.Type {
	case ConfigBoolean:
		return false
	case ConfigInt, ConfigLong:
		if k.HasRange {
			return k.Min
		}
		return 0
	}
	return ""
}

func (f *fakeSoloPi) isServing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serving
}

func (f *fakeSoloPi) with(fn func(f *fakeSoloPi)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// notScripted marks a command the fake SoloPi leaves to the phone.
const notScripted = -1000

func (f *fakeSoloPi) defaultShell(cmd string) shellReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case strings.HasPrefix(cmd, "pm path "):
		if f.installed && strings.HasSuffix(cmd, " com.alipay.hulu") {
			return shellReply{stdout: "package:/data/app/com.alipay.hulu-1/base.apk\n"}
		}
		return shellReply{code: 1}
	case strings.HasPrefix(cmd, "dumpsys package "):
		return shellReply{stdout: "Packages:\n  Package [com.alipay.hulu]\n    versionCode=37 minSdk=18\n    versionName=" + f.versionName + "\n"}
	case cmd == "dumpsys window":
		return shellReply{stdout: "  mCurrentFocus=Window{1a2b u0 " + f.focus + "}\n"}
	case strings.HasPrefix(cmd, "monkey -p com.alipay.hulu "):
		f.launches++
		f.focus = "com.alipay.hulu/com.alipay.hulu.activity.SplashActivity"
		if f.startOnLaunch {
			f.serving = true
		}
		return shellReply{stdout: "Events injected: 1\n"}
	case strings.HasPrefix(cmd, "am start -W -n com.alipay.hulu/"+protocol.AdbSchemeActivity+" "):
		return f.mutate(cmd)
	case strings.HasPrefix(cmd, "am start -W -n "):
		f.focus = strings.Fields(cmd)[4]
		return shellReply{stdout: "Status: ok\nComplete\n"}
	}
	return shellReply{code: notScripted}
}

// mutate handles a protected-activity mutation (f.mu held).
func (f *fakeSoloPi) mutate(cmd string) shellReply {
	i := strings.Index(cmd, " -d ")
	if i < 0 {
		return shellReply{stdout: "Error: no data URI", code: 1}
	}
	raw := strings.Trim(cmd[i+4:], "'")
	action, q, err := devicefake.ParseScheme(raw)
	if err != nil {
		return shellReply{stdout: "Error: bad URI " + raw, code: 1}
	}
	f.mutates = append(f.mutates, raw)
	switch action {
	case "harness":
		if q.Get("type") == "adb-connect" && f.onAdbConnect != nil {
			f.onAdbConnect(f, q.Get("requestId"))
		}
	case "config":
		if q.Get("action") == "set" && !f.ignoreSet {
			k, ok := LookupConfigKey(q.Get("key"))
			if ok && k.Writable {
				if v, err := NormalizeConfigValue(k, q.Get("value")); err == nil {
					f.config[k.Key] = typedConfigValue(k, v)
				}
			}
		}
	}
	f.focus = "com.alipay.hulu/" + protocol.AdbSchemeActivity
	return shellReply{stdout: "Starting: Intent { act=android.intent.action.VIEW }\nStatus: ok\nComplete\n"}
}

func (f *fakeSoloPi) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r.URL.RequestURI())
	noListener := func() {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `{"success": false, "error": "No Valid Listener"}`)
	}
	if f.noHarness && r.URL.Path != "/scheme/status" {
		noListener()
		return
	}
	q := r.URL.Query()
	var body any
	switch r.URL.Path {
	case "/scheme/harness":
		switch q.Get("type") {
		case "capabilities":
			if f.capsFailing > 0 {
				f.capsFailing--
				body = map[string]any{"success": false, "error": "not yet"}
			} else {
				body = f.caps
			}
		case "health":
			body = f.health
		case "apps":
			body = map[string]any{"success": true, "count": 1, "includesSystemApps": false,
				"apps": []any{map[string]any{"packageName": "com.example.counter", "label": "Counter", "system": false}}}
		case "info":
			body = map[string]any{"success": true, "protocolVersion": "2.0", "packageName": "com.alipay.hulu",
				"versionName": f.versionName, "versionCode": 37, "license": "Apache-2.0",
				"device": map[string]any{"model": "Pixel", "sdk": 34}}
		case "adb-connect-status":
			id := q.Get("requestId")
			if f.adbStatusFn != nil {
				body = f.adbStatusFn(f, id)
			} else if rc, ok := f.adbReceipts[id]; ok {
				body = rc
			} else {
				body = map[string]any{"success": false, "state": "failed", "terminal": true, "connected": false,
					"userActionRequired": false, "errorCode": "adb_connect_receipt_not_found",
					"error": "No matching ADB connection receipt is available", "requestId": id, "finishedAt": 1}
			}
		default:
			body = map[string]any{"success": false, "errorCode": "unsupported_type", "error": "Unsupported harness type: " + q.Get("type")}
		}
	case "/scheme/config":
		switch q.Get("action") {
		case "list":
			var cs []any
			for _, k := range configTable {
				cs = append(cs, f.spec(k, false))
			}
			body = map[string]any{"success": true, "count": len(cs), "configs": cs}
		case "get":
			k, ok := LookupConfigKey(q.Get("key"))
			if !ok {
				body = map[string]any{"success": false, "errorCode": "unsupported_config", "error": "Unsupported config key: " + q.Get("key")}
			} else {
				body = map[string]any{"success": true, "config": f.spec(k, true)}
			}
		default:
			body = map[string]any{"success": false, "errorCode": "unsupported_action", "error": "Unsupported config action"}
		}
	case "/scheme/status":
		switch q.Get("type") {
		case "status":
			body = f.status
		case "page":
			body = f.page
		default:
			noListener()
			return
		}
	default:
		noListener()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// spec renders a config spec the way the device does (f.mu held).
func (f *fakeSoloPi) spec(k ConfigKey, withValue bool) map[string]any {
	m := map[string]any{"key": k.Key, "type": k.Type, "description": "d", "default": defaultValueOf(k),
		"writable": k.Writable, "sensitive": k.Sensitive}
	if k.HasRange {
		m["min"], m["max"] = k.Min, k.Max
	}
	if withValue {
		m["redacted"] = k.Sensitive && !f.leakValues
		if !k.Sensitive || f.leakValues {
			m["value"] = f.config[k.Key]
		}
	} else if k.Sensitive && f.leakValues {
		m["value"] = f.config[k.Key]
	}
	if f.configSpecFn != nil {
		m = f.configSpecFn(m)
	}
	return m
}

// fastSession are session options that keep the tests quick.
func fastSession() device.SessionOptions {
	return device.SessionOptions{Device: device.DeviceOptions{RequestTimeout: 2 * time.Second}, StartupTimeout: 1500 * time.Millisecond, PollInterval: 20 * time.Millisecond}
}

func openTestSession(t *testing.T, ft *soloTransport) *device.Session {
	t.Helper()
	s, err := device.OpenSession(context.Background(), ft, fastSession())
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
	solo := newFakeSoloPi()
	solo.installed = false
	ft := newSoloTransport(t, solo)
	_, err := device.OpenSession(context.Background(), ft, fastSession())
	e := wantCode(t, err, device.CodeNotInstalled, fault.Invalid)
	if !strings.Contains(e.UserAction, "Install SoloPi 1.x") {
		t.Errorf("user action %q", e.UserAction)
	}
	if ft.ran("monkey") != 0 {
		t.Error("must not launch a package that is not installed")
	}
}

func TestSessionNoLaunchWhenAnswering(t *testing.T) {
	solo := newFakeSoloPi()
	ft := newSoloTransport(t, solo)
	s := openTestSession(t, ft)
	if s.Launched || ft.ran("monkey") != 0 {
		t.Fatal("SoloPi was launched although its service answered")
	}
	if !strings.Contains(string(s.Capabilities), `"protocolVersion":"2.0"`) {
		t.Fatalf("capabilities %v", s.Capabilities)
	}
	if ft.ran("dumpsys window") != 0 {
		t.Error("foreground read although nothing was launched")
	}
}

func TestSessionLaunchesWhenNotAnswering(t *testing.T) {
	solo := newFakeSoloPi()
	solo.serving = false
	solo.capsFailing = 3 // and needs a few polls after the launch
	ft := newSoloTransport(t, solo)
	s := openTestSession(t, ft)
	if !s.Launched || ft.ran("monkey -p com.alipay.hulu -c android.intent.category.LAUNCHER 1") != 1 {
		t.Fatalf("launched=%v calls=%v", s.Launched, ft.shellCalls())
	}
}

func TestSessionPreserveForeground(t *testing.T) {
	solo := newFakeSoloPi()
	solo.serving = false
	ft := newSoloTransport(t, solo)
	o := fastSession()
	o.PreserveForeground = true
	s, err := device.OpenSession(context.Background(), ft, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := "com.example.counter/com.example.counter.MainActivity"
	if s.Foreground != want || !s.Restored {
		t.Fatalf("foreground %q restored %v", s.Foreground, s.Restored)
	}
	if ft.ran("am start -W -n "+want) != 1 {
		t.Fatalf("foreground not restored: %v", ft.shellCalls())
	}
}

func TestSessionLaunchFails(t *testing.T) {
	solo := newFakeSoloPi()
	solo.serving = false
	ft := newSoloTransport(t, solo)
	ft.on("monkey", func(string) shellReply {
		return shellReply{stdout: "** No activities found to run, monkey aborted.\n"}
	})
	_, err := device.OpenSession(context.Background(), ft, fastSession())
	wantCode(t, err, device.CodeLaunchFailed, fault.Transport)
}

func TestSessionStartupTimeout(t *testing.T) {
	solo := newFakeSoloPi()
	solo.serving = false
	solo.startOnLaunch = false
	ft := newSoloTransport(t, solo)
	o := fastSession()
	o.StartupTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err := device.OpenSession(context.Background(), ft, o)
	e := wantCode(t, err, device.CodeControlNotReady, fault.Transport)
	if e.Details["lastError"] == nil {
		t.Error("no lastError")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("startup timeout took %s", d)
	}
}

func TestSessionProtocolMismatch(t *testing.T) {
	for _, c := range []struct{ harness, agent string }{{"1.0", "1.0"}, {"2.0", "2.0"}, {"", ""}} {
		solo := newFakeSoloPi()
		solo.caps["protocolVersion"] = c.harness
		solo.caps["agentProtocolVersion"] = c.agent
		ft := newSoloTransport(t, solo)
		_, err := device.OpenSession(context.Background(), ft, fastSession())
		e := wantCode(t, err, device.CodeProtocolMismatch, fault.Transport)
		if e.Details["protocolVersion"] != c.harness || e.Details["agentProtocolVersion"] != c.agent {
			t.Errorf("details %v", e.Details)
		}
		if !strings.Contains(e.Message, `"`+c.harness+`"`) || !strings.Contains(e.Message, "agent protocol") {
			t.Errorf("message must name both versions: %s", e.Message)
		}
	}
}

func TestSessionClassicSoloPi(t *testing.T) {
	t.Run("versionName 0.x", func(t *testing.T) {
		solo := newFakeSoloPi()
		solo.noHarness = true
		solo.versionName = "0.12.3"
		ft := newSoloTransport(t, solo)
		_, err := device.OpenSession(context.Background(), ft, fastSession())
		e := wantCode(t, err, device.CodeVersionUnsupported, fault.Transport)
		if !strings.HasPrefix(e.UserAction, "Install SoloPi 1.x (harness protocol 2.0)") {
			t.Errorf("user action %q", e.UserAction)
		}
		if ft.ran("monkey") != 0 {
			t.Error("a classic SoloPi must be reported at once, not launched and waited for")
		}
	})
	t.Run("no harness resolver whatever the version says", func(t *testing.T) {
		solo := newFakeSoloPi()
		solo.noHarness = true
		ft := newSoloTransport(t, solo)
		o := fastSession()
		o.StartupTimeout = 200 * time.Millisecond
		_, err := device.OpenSession(context.Background(), ft, o)
		wantCode(t, err, device.CodeVersionUnsupported, fault.Transport)
	})
}

func TestSessionInterrupted(t *testing.T) {
	solo := newFakeSoloPi()
	solo.serving = false
	solo.startOnLaunch = false
	ft := newSoloTransport(t, solo)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := fastSession()
	o.StartupTimeout = 10 * time.Second
	start := time.Now()
	_, err := device.OpenSession(ctx, ft, o)
	wantCode(t, err, device.CodeInterrupted, fault.Interrupted)
	if time.Since(start) > 2*time.Second {
		t.Error("the readiness poll did not stop on cancellation")
	}
}

func TestParseVersionName(t *testing.T) {
	if v := device.ParseVersionName("  versionCode=37\n    versionName=1.0.2\n  versionName=9"); v != "1.0.2" {
		t.Errorf("got %q", v)
	}
	if v := device.ParseVersionName("nothing"); v != "" {
		t.Errorf("got %q", v)
	}
}

// ---- against the simulator (SoloPi's device side per docs/device-protocol.md,
// reached in-process through the same Transport interface adb uses) ----

func newSimDevice(t *testing.T, o sim.Options) *sim.Device {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = 50
	}
	if o.Serial == "" {
		o.Serial = "sim-device-cmds"
	}
	dev := sim.New(o)
	t.Cleanup(func() { dev.Close() })
	return dev
}

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
	dev := newSimDevice(t, sim.Options{})
	s := simSession(t, dev)
	ctx := context.Background()
	r, err := DoctorOnSession(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	// SoloPi's default KEY_REPLAY_AUTO_START is false: the one finding.
	if r.Ready || len(r.MissingPermissions) != 0 || !slices.Equal(r.FailedChecks, []string{device.FailedAutoStart}) || !r.Installed {
		t.Fatalf("doctor ready=%v missing=%v failed=%v", r.Ready, r.MissingPermissions, r.FailedChecks)
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
	dev := newSimDevice(t, sim.Options{App: core.Config{DeniedPermissions: []string{"float"}, Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}}})
	r, err := Doctor(context.Background(), dev, DoctorOptions{Session: device.SessionOptions{StartupTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ready || !slices.Contains(r.MissingPermissions, "float") {
		t.Fatalf("%+v", r)
	}
}

func TestSimAdbConnect(t *testing.T) {
	dev := newSimDevice(t, sim.Options{App: core.Config{DeniedPermissions: []string{"adb"}, Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}}})
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
	dev := newSimDevice(t, sim.Options{})
	s := simSession(t, dev)
	ctx := context.Background()
	list, err := ConfigList(ctx, s)
	if err != nil || list["count"] != 25 {
		t.Fatalf("list %v %v", list["count"], err)
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
		if c := got["config"].(map[string]any); c["redacted"] != true || c["value"] != nil {
			t.Fatalf("%s: %v", key, c)
		}
	}
}

func TestSimScreenshotLogsStartup(t *testing.T) {
	dev := newSimDevice(t, sim.Options{})
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
	for _, mode := range []string{StartupCold, StartupWarm} {
		rep, err := MeasureStartup(ctx, dev, StartupOptions{TargetPackage: "com.example.counter", Mode: mode, Count: 2, Interval: time.Millisecond})
		if err != nil {
			t.Fatalf("startup-time %s against the simulator: %v", mode, err)
		}
		if rep.ValidSampleCount != 2 || !rep.Statistics["TotalTime"].Available {
			t.Fatalf("%+v", rep)
		}
	}
}

// The fake passes the transport conformance suite: everything but its
// scripted SoloPi is the simulated phone.
func TestSoloTransportConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: newSoloTransport(t, newFakeSoloPi()), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}
