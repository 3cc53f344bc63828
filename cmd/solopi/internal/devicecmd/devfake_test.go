package devicecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas"
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
func testGlobals() *cmdutil.Globals {
	return &cmdutil.Globals{Package: protocol.DefaultPackage, DevicePort: protocol.DefaultDevicePort, AdbServerPort: 5037,
		RequestTimeout: 2 * time.Second, StartupTimeout: time.Second}
}

func testDeps(tr device.Transport) cmdutil.DeviceDeps {
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

// The device commands' fake passes the transport conformance suite:
// everything but its scripted SoloPi is the simulated phone.
func TestDevTransportConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: newDevTransport(t, newDevSoloPi()), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}
