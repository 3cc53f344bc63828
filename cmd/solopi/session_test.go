package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
	"github.com/solopi-dev/solopi/solopi/readiness"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

// ---- a scripted device for the device commands' run functions ----

// devTransport is a scripted solopi.Transport: Shell answers by command
// prefix (the longest scripted prefix wins), protected-activity mutations
// reach devSoloPi, and DialTCP serves devSoloPi's HTTP handler over
// net.Pipe.
type devTransport struct {
	*devicefake.Transport
	mu    sync.Mutex
	solo  *devSoloPi
	shell map[string]func(cmd string) (string, int)
	exec  func(cmd string) ([]byte, error)
}

func newDevTransport(t *testing.T, solo *devSoloPi) *devTransport {
	t.Helper()
	d := &devTransport{solo: solo, shell: map[string]func(string) (string, int){}, Transport: devicefake.New(t, solo)}
	d.Name = "emulator-5554"
	d.OnShell = d.scripted
	d.Mutate = func(uri string) devicefake.Reply {
		action, q, err := devicefake.ParseScheme(uri)
		if err != nil {
			return devicefake.Reply{Code: 1, Err: err}
		}
		solo.mutate(action, q)
		return devicefake.AmStarted
	}
	d.OnExec = func(ctx context.Context, cmd string) ([]byte, bool, error) {
		if d.exec == nil {
			return nil, false, nil // the simulated phone
		}
		out, err := d.exec(cmd)
		return out, true, err
	}
	return d
}

func (d *devTransport) scripted(ctx context.Context, cmd string, args []string) (devicefake.Reply, bool) {
	d.mu.Lock()
	var best string
	for p := range d.shell {
		if strings.HasPrefix(cmd, p) && len(p) > len(best) {
			best = p
		}
	}
	fn := d.shell[best]
	d.mu.Unlock()
	if fn != nil {
		out, code := fn(cmd)
		return devicefake.Reply{Stdout: out, Code: code}, true
	}
	if cmd == "pm path com.alipay.hulu" {
		return devicefake.Reply{Stdout: "package:/data/app/base.apk\n"}, true
	}
	return devicefake.Reply{}, false
}

func (d *devTransport) ran(prefix string) bool { return d.Ran(prefix) > 0 }

// devSoloPi answers the HTTP queries these commands use.
type devSoloPi struct {
	mu       sync.Mutex
	health   map[string]any
	config   map[string]any
	receipts map[string]map[string]any
	// connect is what the device does on an adb-connect mutation.
	connect func(s *devSoloPi, id string)
}

func newDevSoloPi() *devSoloPi {
	s := &devSoloPi{health: devHealth(true), receipts: map[string]map[string]any{}, config: map[string]any{}}
	for _, k := range readiness.ConfigKeys() {
		switch k.Type {
		case "boolean":
			s.config[k.Key] = false
		case "int", "long":
			s.config[k.Key] = k.Min
		default:
			s.config[k.Key] = ""
		}
	}
	s.config["KEY_AES_KEY"] = "topsecret-aes-0042"
	return s
}

func devHealth(adbOK bool) map[string]any {
	return map[string]any{"success": true, "protocolVersion": "2.0", "appInitialized": true,
		"permissions": map[string]any{"adb": adbOK, "float": true, "background": true, "powerSave": true, "accessibility": true},
		"autoStart":   true, "ready": adbOK, "run": map[string]any{"success": true, "state": "idle"}}
}

func (s *devSoloPi) mutate(action string, q url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case action == "config" && q.Get("action") == "set":
		k, _ := readiness.LookupConfigKey(q.Get("key"))
		if k.Writable {
			switch k.Type {
			case "boolean":
				s.config[k.Key] = q.Get("value") == "true"
			case "int", "long":
				var n int64
				fmt.Sscan(q.Get("value"), &n)
				s.config[k.Key] = n
			default:
				s.config[k.Key] = q.Get("value")
			}
		}
	case action == "harness" && q.Get("type") == "adb-connect" && s.connect != nil:
		s.connect(s, q.Get("requestId"))
	}
}

func (s *devSoloPi) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	var body any
	switch r.URL.Path + "?" + q.Get("type") + q.Get("action") {
	case "/scheme/harness?capabilities":
		body = map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0", "packageName": "com.alipay.hulu", "devicePort": 23342}
	case "/scheme/harness?health":
		body = s.health
	case "/scheme/harness?apps":
		body = map[string]any{"success": true, "count": 1, "includesSystemApps": false,
			"apps": []any{map[string]any{"packageName": "com.example.counter", "label": "Counter", "system": false, "versionName": "1.0", "versionCode": 1}}}
	case "/scheme/harness?info":
		body = map[string]any{"success": true, "protocolVersion": "2.0", "packageName": "com.alipay.hulu", "versionName": "1.0.2",
			"versionCode": 37, "license": "Apache-2.0", "device": map[string]any{"model": "Pixel 7", "sdk": 34, "supportedAbis": []string{"arm64-v8a"}}}
	case "/scheme/harness?adb-connect-status":
		if rc, ok := s.receipts[q.Get("requestId")]; ok {
			body = rc
		} else {
			body = map[string]any{"success": false, "state": "failed", "terminal": true, "connected": false, "userActionRequired": false,
				"errorCode": "adb_connect_receipt_not_found", "error": "No matching ADB connection receipt is available", "requestId": q.Get("requestId")}
		}
	case "/scheme/status?status":
		body = map[string]any{"status": "none"}
	case "/scheme/status?page":
		body = map[string]any{"page": map[string]any{"className": "android.widget.FrameLayout", "text": "", "children": []any{}}}
	case "/scheme/config?list", "/scheme/config?get":
		var specs []any
		for _, k := range readiness.ConfigKeys() {
			spec := map[string]any{"key": k.Key, "type": k.Type, "description": "d", "writable": k.Writable, "sensitive": k.Sensitive}
			if k.HasRange {
				spec["min"], spec["max"] = k.Min, k.Max
			}
			if q.Get("action") == "get" {
				if k.Key != q.Get("key") {
					continue
				}
				spec["redacted"] = k.Sensitive
				if !k.Sensitive {
					spec["value"] = s.config[k.Key]
				}
				body = map[string]any{"success": true, "config": spec}
			}
			specs = append(specs, spec)
		}
		if q.Get("action") == "list" {
			body = map[string]any{"success": true, "count": len(specs), "configs": specs}
		}
	}
	if body == nil {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `{"success": false, "error": "No Valid Listener"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// testGlobals are the globals of a command line without options.
func testGlobals() *Globals {
	return &Globals{Package: protocol.DefaultPackage, DevicePort: protocol.DefaultDevicePort, AdbServerPort: 5037,
		RequestTimeout: 2 * time.Second, StartupTimeout: time.Second}
}

func testDeps(tr device.Transport) DeviceDeps {
	g := testGlobals()
	g.Env.Transport = func(context.Context) (device.Transport, error) { return tr, nil }
	return g.Deps()
}

// printed renders a command's result the way the CLI prints it and checks
// it against the command's schema (handled errors against "error").
func printed(t *testing.T, schema string, res outcome.Result, err error) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	code := outcome.Print(&buf, res, err, false)
	schemas.Validate(t, schema, buf.Bytes())
	return buf.Bytes(), code
}

// ---- adb typed errors → outcome errors ----

func TestMapAdbErrors(t *testing.T) {
	cases := []struct {
		err  error
		code string
		exit int
	}{
		{&adb.Error{Kind: adb.ErrNoDevice, Op: "select device"}, CodeNoDevice, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrMultipleDevices, Devices: []adb.DeviceInfo{{Serial: "A", State: "device", Model: "Pixel"}, {Serial: "B", State: "device"}}}, CodeMultipleDevices, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrDeviceNotFound, Serial: "X1"}, CodeDeviceNotFound, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrUnauthorized, Serial: "X1", ServerMsg: "device unauthorized."}, CodeDeviceUnauthorized, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrOffline, Serial: "X1"}, CodeDeviceOffline, outcome.ExitUsage},
		{fmt.Errorf("select: %w", &adb.Error{Kind: adb.ErrNotReady, Serial: "X1"}), CodeDeviceNotReady, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037"}, CodeAdbServerUnreachable, outcome.ExitTransport},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037", Err: adb.ErrAdbNotFound}, CodeAdbNotFound, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrDeviceGone, Serial: "X1"}, CodeDeviceDisconnected, outcome.ExitTransport},
		{&adb.FailError{Service: "host:features", Msg: "unknown host service"}, CodeAdbError, outcome.ExitTransport},
	}
	for _, c := range cases {
		err := MapAdbError(c.err, "X1")
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != c.code || outcome.ExitFor(e.Kind) != c.exit {
			t.Errorf("%v → %v", c.err, err)
			continue
		}
		if c.exit == outcome.ExitUsage && e.UserAction == "" {
			t.Errorf("%s has no userActionRequired", c.code)
		}
		out, code := printed(t, "error", outcome.Result{}, err)
		if code != c.exit {
			t.Errorf("%s printed exit %d", c.code, code)
		}
		if c.code == CodeMultipleDevices && !strings.Contains(string(out), `"devices":[{"model":"Pixel","serial":"A","state":"device"},{"serial":"B","state":"device"}]`) {
			t.Errorf("devices list missing: %s", out)
		}
	}
}

// The real CLI path: no adb server on the port and no adb to start one
// (exit 3, as solopi-ai); with an adb that fails to start it, exit 4.
func TestTransportServerUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, c := range []struct {
		adb, code string
		exit      int
	}{
		{"/nonexistent/adb", CodeAdbNotFound, outcome.ExitUsage},
		{"/bin/false", CodeAdbServerUnreachable, outcome.ExitTransport},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"solopi", "--adb", c.adb, "--adb-server-port", fmt.Sprint(port), "app-status"},
			Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != c.exit {
			t.Fatalf("--adb %s: exit %d stdout %s stderr %s", c.adb, code, out.String(), errb.String())
		}
		schemas.Validate(t, "app-status", out.Bytes())
		if !strings.Contains(out.String(), `"errorCode":"`+c.code+`"`) || !strings.Contains(out.String(), "userActionRequired") {
			t.Fatalf("--adb %s: stdout %s", c.adb, out.String())
		}
	}
}

func TestSessionOptionsFromGlobals(t *testing.T) {
	g := testGlobals()
	g.Package, g.DevicePort, g.StartupTimeout = "com.example.solopi", 24000, 7*time.Second
	o := g.SessionOptions(true)
	if o.Device.Package != "com.example.solopi" || o.Device.Port != 24000 || o.StartupTimeout != 7*time.Second || !o.PreserveForeground {
		t.Fatalf("%+v", o)
	}
	s, err := testDeps(newDevTransport(t, newDevSoloPi())).Session(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Device == nil || s.Launched {
		t.Fatalf("%+v", s)
	}
}

// ---- the whole CLI path against the simulator's adb-server front: our adb
// client, device selection, session bootstrap and the commands ----

func TestFarmDeviceCommands(t *testing.T) {
	ctx := context.Background()
	farm, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: 2, TimeScale: 50, NoAdbd: true,
		Configure: func(i int, o *sim.Options) {
			o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer farm.Close()
	if err := farm.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	serial := farm.Devices()[0].Serial()
	dir := t.TempDir()
	cli := func(args ...string) ([]byte, int) {
		t.Helper()
		var out, errb bytes.Buffer
		full := append([]string{"solopi", "--adb", "/nonexistent/adb", "--adb-server-port", fmt.Sprint(farm.Server().Port())}, args...)
		code := run(ctx, full, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		return out.Bytes(), code
	}

	out, code := cli("doctor")
	if code != outcome.ExitUsage || !strings.Contains(string(out), `"errorCode":"multiple_devices"`) || !strings.Contains(string(out), serial) {
		t.Fatalf("without --serial: exit %d %s", code, out)
	}
	schemas.Validate(t, "doctor", out)

	for _, c := range []struct {
		args   []string
		schema string
	}{
		{[]string{"doctor"}, "doctor"},
		{[]string{"adb-connect"}, "adb-connect"},
		{[]string{"capabilities"}, "capabilities"},
		{[]string{"apps"}, "apps"},
		{[]string{"app-info"}, "app-info"},
		{[]string{"app-status"}, "app-status"},
		{[]string{"inspect"}, "inspect"},
		{[]string{"config-list"}, "config-list"},
		{[]string{"config-get", "--key", "KEY_AES_KEY"}, "config-get"},
		{[]string{"config-set", "--key", "KEY_SCREENSHOT_RESOLUTION", "--value", "1080"}, "config-set"},
		{[]string{"screenshot", "--output", filepath.Join(dir, "s.png")}, "screenshot"},
		{[]string{"logs", "--output", filepath.Join(dir, "l.txt"), "--lines", "20"}, "logs"},
		{[]string{"startup-time", "--target-package", "com.example.counter", "--count", "2", "--interval", "0"}, "startup-time"},
	} {
		out, code := cli(append([]string{"--serial", serial}, c.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d %s", c.args, code, out)
			continue
		}
		schemas.Validate(t, c.schema, out)
	}
}

// The command tests' fakes pass the transport conformance suite:
// everything but their scripted SoloPi is the simulated phone.
func TestFakeTransportsConformance(t *testing.T) {
	t.Run("devTransport", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
			return transporttest.Fixture{Transport: newDevTransport(t, newDevSoloPi()), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
		})
	})
	t.Run("sessCLIFake", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
			return transporttest.Fixture{Transport: newSessCLIFake(t), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
		})
	})
}
