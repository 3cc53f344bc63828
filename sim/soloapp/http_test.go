package soloapp

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

func TestHTTPBeforeServerStart(t *testing.T) {
	t.Parallel()
	ph := newFakePhone()
	clk := clock.NewScaled(10) // slow enough to see the 5 s gap under load
	app := New(core.Config{InitDelay: time.Second}, ph, clk)
	r := &rig{t: t, app: app, phone: ph, clk: clk}
	ct, body, code := r.raw(http.MethodGet, "/scheme/harness?type=capabilities")
	if code != 200 || ct != "text/html" || body != noValidListener {
		t.Fatalf("before init: %d %s %s", code, ct, body)
	}
	if app.Initialized() || app.HTTPReady() {
		t.Fatal("initialized too early")
	}
	r.eventually("init", 2*time.Second, app.Initialized)
	app.Mu.Lock()
	initAt := app.P.InitAt
	app.Mu.Unlock()
	if ready := app.HTTPReady(); ready && clk.Now().Sub(initAt) < 5*time.Second {
		t.Fatal("HTTP must start 5 s after init")
	}
	r.waitReady()
	if m := r.get("harness", "type", "capabilities"); m["success"] != true {
		t.Fatal(m)
	}
}

func TestHTTPFallbacks(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.app.RegisterResolver("stress", func(ctx context.Context, req request) ([]byte, bool) { panic("boom \"quoted\"") })
	r.app.RegisterResolver("scan", func(ctx context.Context, req request) ([]byte, bool) { return nil, false })
	for _, tc := range []struct {
		method, target, ct, body string
	}{
		{"GET", "/scheme/nope?type=x", "text/html", noValidListener},
		{"GET", "/other/harness?type=capabilities", "text/html", noValidListener},
		{"GET", "/scheme/harness/extra?type=capabilities", "text/html", noValidListener},
		{"GET", "/scheme/?type=capabilities", "text/html", noValidListener},
		{"GET", "/scheme/status", "text/html", noValidListener},
		{"GET", "/scheme/status?type=other", "text/html", noValidListener},
		{"GET", "/scheme/scan?action=status", "text/html", noValidListener},
		{"POST", "/scheme/harness?type=capabilities", "application/json", noValidListener},
		{"GET", "/scheme/stress?action=status", "application/json", `{"success": false, "error": "Process failed, throw exception: boom "quoted""}`},
		{"GET", "/scheme/status?type=status", "application/json", `{"status":"none"}`},
	} {
		ct, body, code := r.raw(tc.method, tc.target)
		if code != 200 || ct != tc.ct || body != tc.body {
			t.Errorf("%s %s: got %d %q %q", tc.method, tc.target, code, ct, body)
		}
	}
	// HEAD and PUT are treated as GET.
	if ct, _, _ := r.raw("PUT", "/scheme/harness?type=capabilities"); ct != "application/json" {
		t.Errorf("PUT: %s", ct)
	}
}

func TestQueryParsing(t *testing.T) {
	t.Parallel()
	// NanoHTTPD: last value wins, keys trimmed, values not, '+' is space.
	// A malformed escape keeps the raw text; bytes that are not UTF-8 read
	// as U+FFFD.
	got := parseHTTPQuery("a=1&a=2&%20b%20=+x+&&c&d=%E4%B8%AD&e=%zz+&f=%E4")
	want := map[string]string{"a": "2", "b": " x ", "c": "", "d": "中", "e": "%zz+", "f": "\uFFFD"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("http: %v", got)
	}
	// The Activity's reading (first value wins) is protocol.ParseMutationURI's.
}

// TestOverHTTPRejections is the over-HTTP rejection table
// (docs/device-protocol.md#resolvers) for the mutations of this package: the
// exact answer over HTTP, and the receipt side effect.
func TestOverHTTPRejections(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	for _, tc := range []struct {
		action string
		kv     []string
		want   map[string]any
	}{
		{"harness", []string{"type", "case-import", "requestId", "r1", "path", "/x"}, map[string]any{"success": false, "errorCode": "adb_required", "error": "Case import is only available through the ADB scheme transport"}},
		{"harness", []string{"type", "case-delete", "requestId", "r2", "caseName", "x", "confirmCaseName", "x"}, map[string]any{"success": false, "errorCode": "adb_required", "error": "Case deletion is only available through the ADB scheme transport"}},
		{"harness", []string{"type", "cancel", "runId", "x"}, map[string]any{"success": false, "errorCode": "adb_required", "error": "Cancel is only available through the ADB scheme transport"}},
		{"replay", []string{"replayMode", "normal"}, map[string]any{"error": "Replay is only available through the ADB scheme transport"}},
		{"replay", nil, map[string]any{"error": "Replay is only available through the ADB scheme transport"}},
		{"config", []string{"action", "set", "key", "KEY_REPLAY_AUTO_START", "value", "true"}, map[string]any{"success": false, "errorCode": "mutation_transport_required", "error": "Config changes require the ADB scheme transport"}},
		{"config", []string{"key", "KEY_REPLAY_AUTO_START", "value", "true"}, map[string]any{"success": false, "errorCode": "mutation_transport_required", "error": "Config changes require the ADB scheme transport"}},
	} {
		got := r.get(tc.action, tc.kv...)
		if !reflect.DeepEqual(stringify(got), stringify(tc.want)) {
			t.Errorf("%s %v: got %v", tc.action, tc.kv, got)
		}
	}
	for _, typ := range []string{"start", "act", "pause", "resume", "end", "cancel"} {
		wantErr(t, r.get("agent", "type", typ), "adb_required", "Agent mutations require the DUMP-protected ADB scheme transport")
	}
	ac := r.get("harness", "type", "adb-connect", "requestId", "abc")
	if ac["success"] != false || str(ac, "state") != "failed" || str(ac, "errorCode") != "adb_required" ||
		str(ac, "error") != "ADB connection is only available through the ADB scheme transport" ||
		str(ac, "requestId") != "abc" || ac["userActionRequired"] != false || ac["terminal"] != true {
		t.Errorf("adb-connect over http: %v", ac)
	}
	if _, has := r.get("harness", "type", "adb-connect")["requestId"]; has {
		t.Error("requestId must be absent when missing")
	}
	// Not stored.
	wantErr(t, r.get("harness", "type", "adb-connect-status", "requestId", "abc"), "adb_connect_receipt_not_found", "")
	// Import/delete rejections over HTTP land in the single receipt slots.
	imp := r.get("harness", "type", "case-import-status", "requestId", "r1")
	wantErr(t, imp, "adb_required", "Case import is only available through the ADB scheme transport")
	if str(imp, "requestId") != "r1" {
		t.Error(imp)
	}
	wantErr(t, r.get("harness", "type", "case-delete-status", "requestId", "r2"), "adb_required", "")
	// Nothing changed: auto-start still false.
	if sub(r.get("config", "action", "get", "key", "KEY_REPLAY_AUTO_START"), "config")["value"] != false {
		t.Error("config changed over HTTP")
	}
}

// stringify normalizes decoded JSON for comparison.
func stringify(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = strings.TrimSpace(string(core.Encode(v, true)))
	}
	return out
}

func TestPublicSchemeActivity(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	ctx := context.Background()
	pub := solopiPkg + "/" + protocol.SchemeActivity
	// A mutation is rejected and only logged, but import/delete write the slot.
	if err := r.app.HandleActivity(ctx, pub, "solopi://startaction/harness?type=case-import&requestId=pub1&path=/sdcard/x.json"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, r.get("harness", "type", "case-import-status", "requestId", "pub1"), "adb_required", "")
	if err := r.app.HandleActivity(ctx, pub, "solopi://startaction/config?key=KEY_REPLAY_AUTO_START&value=true"); err != nil {
		t.Fatal(err)
	}
	if sub(r.get("config", "action", "get", "key", "KEY_REPLAY_AUTO_START"), "config")["value"] != false {
		t.Error("public deep link changed config")
	}
	// Unknown action, unhandled status and wrong segment counts launch SoloPi.
	for _, uri := range []string{"solopi://startaction/nope", "solopi://startaction/status", "solopi://startaction/a/b", "solopi://startaction"} {
		r.phone.set(func(f *fakePhone) { f.fg = launcherPkg })
		if err := r.app.HandleActivity(ctx, pub, uri); err != nil {
			t.Fatal(err)
		}
		if _, _, _, fg := r.phone.snapshot(); fg != solopiPkg {
			t.Errorf("%s: SoloPi not launched (fg %s)", uri, fg)
		}
	}
	if err := r.app.HandleActivity(ctx, "com.other/"+protocol.AdbSchemeActivity, "solopi://startaction/harness"); err == nil {
		t.Error("foreign component accepted")
	}
	// The protected activity with the short class form works too.
	if err := r.app.HandleActivity(ctx, solopiPkg+"/.common.scheme.AdbSchemeActivity", "solopi://startaction/config?key=KEY_REPLAY_AUTO_START&value=TRUE"); err != nil {
		t.Fatal(err)
	}
	if sub(r.get("config", "action", "get", "key", "KEY_REPLAY_AUTO_START"), "config")["value"] != true {
		t.Error("legacy config set through the protected activity failed")
	}
}

func TestActivityWaitsForInit(t *testing.T) {
	t.Parallel()
	ph := newFakePhone()
	clk := clock.NewScaled(testScale)
	app := New(core.Config{}, ph, clk)
	app.SetAppInitialized(false)
	r := &rig{t: t, app: app, phone: ph, clk: clk}
	r.adb("config", "key", "KEY_REPLAY_AUTO_START", "value", "true")
	r.sleep(500 * time.Millisecond)
	app.Mu.Lock()
	v := app.BoolSetting(core.KeyReplayAutoStart)
	app.Mu.Unlock()
	if v {
		t.Fatal("processed before init")
	}
	app.SetAppInitialized(true)
	r.eventually("intent processed after init", time.Second, func() bool {
		app.Mu.Lock()
		defer app.Mu.Unlock()
		return app.BoolSetting(core.KeyReplayAutoStart)
	})
	r.waitReady()
}
