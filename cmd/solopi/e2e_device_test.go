package main

// End-to-end tests of the device, config and information commands: the
// built binary against a simulated farm, every real stdout validated
// against its schema (issue 6).

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// e2eRig is a farm with one device plus every output the binary printed
// against it, so a test can search all of them afterwards.
type e2eRig struct {
	t    *testing.T
	farm *sim.Farm
	dev  *sim.Device
	env  []string
	outs []cliRun
	args [][]string
}

func newE2ERig(t *testing.T, o sim.FarmOptions) *e2eRig {
	t.Helper()
	o.NoAdbd = true
	if o.TimeScale == 0 {
		o.TimeScale = 40
	}
	f, env := startFarm(t, o)
	return &e2eRig{t: t, farm: f, dev: f.Devices()[0], env: env}
}

// run runs the binary and keeps its output.
func (r *e2eRig) run(args ...string) cliRun {
	r.t.Helper()
	res := runBinary(r.t, r.env, args...)
	r.outs = append(r.outs, res)
	r.args = append(r.args, args)
	r.t.Logf("solopi %s → exit %d\n%s", strings.Join(args, " "), res.code, res.stdout)
	if len(res.stderr) > 0 {
		r.t.Logf("STDERR: %s", res.stderr)
	}
	return res
}

// expect runs the binary, requires the exit code, validates stdout against
// the command's schema (or the shared error schema for an error object)
// and decodes it.
func (r *e2eRig) expect(code int, args ...string) map[string]any {
	r.t.Helper()
	res := r.run(args...)
	if res.code != code {
		r.t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, code, res.stdout, res.stderr)
	}
	schemas.Validate(r.t, args[0], res.stdout)
	return decodeObject(r.t, res)
}

// requireNoOutputContains fails when any stdout or stderr seen so far
// contains one of the secrets.
func (r *e2eRig) requireNoOutputContains(secrets ...string) {
	r.t.Helper()
	for i, o := range r.outs {
		for _, s := range secrets {
			if bytes.Contains(o.stdout, []byte(s)) || bytes.Contains(o.stderr, []byte(s)) {
				r.t.Errorf("solopi %s printed the secret %q:\nstdout: %s\nstderr: %s", strings.Join(r.args[i], " "), s, o.stdout, o.stderr)
			}
		}
	}
}

// e2eLogcatCount counts the device's logcat lines containing every part.
func e2eLogcatCount(dev *sim.Device, parts ...string) int {
	n := 0
	for _, e := range dev.Phone.Logcat() {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e.Tag+": "+e.Msg, p)
		}
		if all {
			n++
		}
	}
	return n
}

// e2eStr reads a string field; e2eNum a number field; e2eBool a bool field.
func e2eStr(m map[string]any, k string) string { s, _ := m[k].(string); return s }
func e2eNum(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}
func e2eBool(m map[string]any, k string) bool { b, _ := m[k].(bool); return b }
func e2eObj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}
func e2eStrings(m map[string]any, k string) []string {
	var out []string
	l, _ := m[k].([]any)
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

func e2eAutoStartOn(_ int, o *sim.Options) {
	o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
}

// Doctor names exactly the one missing permission, for each of the five
// (background is a placeholder the device always reports granted), and
// passes when all are present.
func TestE2EDoctorEveryPermission(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	m := r.expect(0, "doctor")
	if !e2eBool(m, "success") || !e2eBool(m, "ready") || len(e2eStrings(m, "missingPermissions")) != 0 || len(e2eStrings(m, "failedChecks")) != 0 {
		t.Fatalf("doctor with everything granted: %v", m)
	}
	for _, perm := range []string{"adb", "float", "background", "powerSave", "accessibility"} {
		if err := r.dev.App.SetPermission(perm, false); err != nil {
			t.Fatal(err)
		}
		if perm == "background" {
			// The device reports background=true whatever is set.
			m := r.expect(0, "doctor")
			if got := e2eObj(e2eObj(m, "health"), "permissions")["background"]; got != true {
				t.Errorf("background placeholder reported %v", got)
			}
		} else {
			m := r.expect(2, "doctor")
			if got := e2eStrings(m, "missingPermissions"); !slices.Equal(got, []string{perm}) {
				t.Errorf("doctor without %s: missingPermissions %v", perm, got)
			}
			if got := e2eStrings(m, "failedChecks"); len(got) != 0 {
				t.Errorf("doctor without %s: failedChecks %v", perm, got)
			}
			if e2eBool(m, "ready") || e2eBool(m, "success") || e2eStr(m, "error") == "" || e2eStr(m, "userActionRequired") == "" {
				t.Errorf("doctor without %s: %v", perm, m)
			}
			checks, _ := m["checks"].([]any)
			for _, c := range checks {
				c := c.(map[string]any)
				if e2eStr(c, "name") == perm && (e2eBool(c, "ok") || e2eStr(c, "userActionRequired") == "") {
					t.Errorf("doctor without %s: check %v", perm, c)
				}
			}
			if got := e2eObj(e2eObj(m, "health"), "permissions")[perm]; got != false {
				t.Errorf("doctor without %s: health.permissions.%s = %v", perm, perm, got)
			}
		}
		if err := r.dev.App.SetPermission(perm, true); err != nil {
			t.Fatal(err)
		}
	}
	r.expect(0, "doctor")
}

func TestE2EAdbConnect(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	fast := []string{"--poll-interval", "0.05"}

	// Already connected: nothing is invoked.
	m := r.expect(0, append([]string{"adb-connect"}, fast...)...)
	if !e2eBool(m, "alreadyConnected") {
		t.Errorf("adb-connect on a ready device: %v", m)
	}

	// Something else is missing too: refused, and the device is not asked.
	r.dev.App.SetPermission("adb", false)
	r.dev.App.SetPermission("float", false)
	// Every harness mutation the activity handles leaves a logcat line.
	harnessMutations := func() int { return e2eLogcatCount(r.dev, "AdbSchemeActivity: scheme harness result") }
	before := harnessMutations()
	m = r.expect(2, append([]string{"adb-connect"}, fast...)...)
	if e2eStr(m, "errorCode") != "adb_connect_precondition_failed" {
		t.Errorf("adb-connect with float missing too: %v", m)
	}
	r.dev.Clock().Sleep(context.Background(), 8*time.Second) // device time: longer than a simulated connection
	if after := harnessMutations(); after != before {
		t.Errorf("a refused adb-connect reached the device (%d → %d log lines)", before, after)
	}
	if r.dev.App.Permission("adb") {
		t.Error("a refused adb-connect connected the internal ADB")
	}

	// Only adb missing: connecting → connected, then doctor is ready.
	r.dev.App.SetPermission("float", true)
	m = r.expect(0, append([]string{"adb-connect"}, fast...)...)
	if harnessMutations() != before+1 {
		t.Errorf("adb-connect sent %d harness mutations, want 1", harnessMutations()-before)
	}
	if e2eBool(m, "alreadyConnected") || !e2eBool(m, "success") {
		t.Errorf("adb-connect: %v", m)
	}
	if e2eStr(m, "state") != "connected" || !e2eBool(m, "connected") || !e2eBool(m, "terminal") || !e2eBool(e2eObj(m, "doctor"), "ready") {
		t.Errorf("adb-connect did not end connected with a ready doctor: %v", m)
	}
	if !r.dev.App.Permission("adb") {
		t.Error("adb-connect exit 0 but the device's adb permission is still false")
	}
	r.expect(0, "doctor")

	// connecting → failed: the user has to act on the phone.
	r.dev.App.SetPermission("adb", false)
	r.dev.App.SetAdbConnectOutcome(core.AdbConnectFail, 0)
	m = r.expect(2, append([]string{"adb-connect"}, fast...)...)
	if e2eStr(m, "errorCode") != "adb_connection_failed" {
		t.Errorf("failed adb-connect errorCode: %v", m)
	}
	if ua := e2eStr(m, "userActionRequired"); ua == "" || e2eStr(m, "state") != "failed" {
		t.Errorf("failed adb-connect names no user action: %v", m)
	}
	if rc := e2eObj(m, "receipt"); !e2eBool(rc, "userActionRequired") || e2eStr(rc, "requiredUserAction") == "" || e2eStr(rc, "state") != "failed" {
		t.Errorf("failed adb-connect receipt: %v", rc)
	}
	if r.dev.App.Permission("adb") {
		t.Error("a failed connection granted adb")
	}
	r.expect(2, "doctor")

	// An RSA prompt nobody answers: the connect budget ends (124), and the
	// device then refuses a second request as busy, a failure that asks
	// for no device action of its own.
	r.dev.App.SetAdbConnectOutcome(core.AdbConnectHang, 0)
	m = r.expect(124, "adb-connect", "--connect-timeout", "0.3", "--poll-interval", "0.05")
	if e2eStr(m, "errorCode") != "adb_connect_timeout" || e2eStr(e2eObj(m, "lastReceipt"), "state") != "connecting" {
		t.Errorf("hanging adb-connect: %v", m)
	}
	m = r.expect(2, append([]string{"adb-connect"}, fast...)...)
	if e2eStr(m, "errorCode") != "adb_connection_busy" || e2eBool(e2eObj(m, "receipt"), "userActionRequired") {
		t.Errorf("adb-connect while another request connects: %v", m)
	}
	if v, has := m["requiredUserAction"]; has {
		t.Errorf("busy adb-connect reports requiredUserAction %q without the device asking for an action", v)
	}
}

// The 8 keys the CLI must never write: a syntactically valid value and the
// reason it is refused.
var e2eReadOnlyConfigKeys = map[string]struct{ value, code string }{
	"KEY_PERFORMANCE_UPLOAD":   {"https://upload.example.test/perf", "ui_confirmation_required"},
	"KEY_RECORD_SCREEN_UPLOAD": {"https://upload.example.test/screen", "ui_confirmation_required"},
	"KEY_PATCH_URL":            {"https://patch.example.test/x.json", "ui_confirmation_required"},
	"KEY_ADB_SERVER":           {"localhost:5556", "ui_confirmation_required"},
	"KEY_GLOBAL_SETTINGS":      {`{"other":"value"}`, "sensitive_config_ui_required"},
	"KEY_AES_KEY":              {"another-key", "sensitive_config_ui_required"},
	"KEY_BASE_DIR":             {"/sdcard/elsewhere", "ui_migration_required"},
	"KEY_CONTROL_PORT":         {"23350", "new_session_required"},
}

const (
	e2eAESSecret    = "aes-Secret-7f3a9c"
	e2eGlobalSecret = "gs-Secret-41be"
)

func TestE2EConfigSetGetListAndSecrets(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{Configure: func(_ int, o *sim.Options) {
		o.App.Settings = map[string]string{
			"KEY_AES_KEY":            e2eAESSecret,
			"KEY_GLOBAL_SETTINGS":    `{"apiToken":"` + e2eGlobalSecret + `"}`,
			"KEY_PERFORMANCE_UPLOAD": "https://keep.example.test/perf",
		}
	}})
	fast := []string{"--poll-interval", "0.05"}

	list := r.expect(0, "config-list")
	configs, _ := list["configs"].([]any)
	if len(configs) != 25 {
		t.Fatalf("config-list: %d configs", len(configs))
	}
	for _, c := range configs {
		key := e2eStr(c.(map[string]any), "key")
		m := r.expect(0, "config-get", "--key", key)
		cfg := e2eObj(m, "config")
		if key == "KEY_AES_KEY" || key == "KEY_GLOBAL_SETTINGS" {
			if _, has := cfg["value"]; has || !e2eBool(cfg, "redacted") {
				t.Errorf("config-get %s is not redacted: %v", key, cfg)
			}
		} else if _, has := cfg["value"]; !has {
			t.Errorf("config-get %s has no value: %v", key, cfg)
		}
	}

	// One writable key of each type, confirmed by reading it back.
	for _, c := range []struct {
		key, value string
		want       any
		typ        string
	}{
		{"KEY_RECORD_COVER_MODE", "TRUE", true, "boolean"},
		{"KEY_MAX_SCROLL_FIND_COUNT", "7", 7.0, "int"},
		// Changing the language restarts every SoloPi service, its
		// HTTP server included: the read-back rides that out.
		{"KEY_USE_LANGUAGE", "2", 2.0, "int"},
		{"KEY_MAX_WAIT_TIME", "25000", 25000.0, "long"},
		{"KEY_OUTPUT_CHARSET", "UTF-8", "UTF-8", "string"},
	} {
		m := r.expect(0, append([]string{"config-set", "--key", c.key, "--value", c.value}, fast...)...)
		if !e2eBool(m, "confirmed") || e2eStr(m, "type") != c.typ || m["actualValue"] != c.want || m["expectedValue"] != c.want {
			t.Errorf("config-set %s=%s: %v", c.key, c.value, m)
		}
		got := e2eObj(r.expect(0, "config-get", "--key", c.key), "config")["value"]
		if got != c.want {
			t.Errorf("config-get %s after set: %v, want %v", c.key, got, c.want)
		}
	}

	// Out of range: refused locally (usage), the device keeps its value.
	m := r.expect(3, "config-set", "--key", "KEY_USE_LANGUAGE", "--value", "3")
	if e2eStr(m, "errorCode") != "invalid_config_value" {
		t.Errorf("out-of-range config-set: %v", m)
	}
	if got := e2eObj(r.expect(0, "config-get", "--key", "KEY_USE_LANGUAGE"), "config")["value"]; got != 2.0 {
		t.Errorf("KEY_USE_LANGUAGE after a refused set: %v", got)
	}

	// The 8 read-only keys: exit 2, and the device is never asked to set
	// (every config mutation the activity handles leaves a logcat line).
	sets := e2eLogcatCount(r.dev, "AdbSchemeActivity: scheme config result")
	for key, ro := range e2eReadOnlyConfigKeys {
		var before any
		sensitive := key == "KEY_AES_KEY" || key == "KEY_GLOBAL_SETTINGS"
		if !sensitive {
			before = e2eObj(r.expect(0, "config-get", "--key", key), "config")["value"]
		}
		m := r.expect(2, "config-set", "--key", key, "--value", ro.value)
		if e2eStr(m, "errorCode") != ro.code || e2eStr(m, "userActionRequired") == "" || e2eStr(m, "key") != key {
			t.Errorf("config-set %s: %v", key, m)
		}
		if !sensitive {
			if after := e2eObj(r.expect(0, "config-get", "--key", key), "config")["value"]; after != before {
				t.Errorf("config-set %s changed the device: %v → %v", key, before, after)
			}
		}
	}
	r.dev.Clock().Sleep(context.Background(), 4*time.Second) // device time: the activity handles intents asynchronously
	if n := e2eLogcatCount(r.dev, "AdbSchemeActivity: scheme config result"); n != sets {
		t.Errorf("refused config-set commands reached the device's config resolver (%d → %d)", sets, n)
	}
	if got := e2eObj(r.expect(0, "config-get", "--key", "KEY_PERFORMANCE_UPLOAD"), "config")["value"]; got != "https://keep.example.test/perf" {
		t.Errorf("KEY_PERFORMANCE_UPLOAD changed: %v", got)
	}

	// A device that answers but keeps the old value: unconfirmed, exit 2,
	// both values reported.
	r.dev.App.SetConfigWriteIgnored("KEY_MAX_WAIT_TIME", true)
	m = r.expect(2, "config-set", "--key", "KEY_MAX_WAIT_TIME", "--value", "30000", "--ack-timeout", "0.5", "--poll-interval", "0.05")
	if e2eStr(m, "errorCode") != "config_not_confirmed" || m["expectedValue"] != 30000.0 || m["actualValue"] != 25000.0 {
		t.Errorf("ignored config write: %v", m)
	}
	if got := e2eObj(r.expect(0, "config-get", "--key", "KEY_MAX_WAIT_TIME"), "config")["value"]; got != 25000.0 {
		t.Errorf("KEY_MAX_WAIT_TIME after an ignored write: %v", got)
	}

	// A few more commands for the secret search.
	r.expect(2, "doctor")
	r.expect(0, "capabilities")
	r.expect(0, "app-info")
	logFile := filepath.Join(t.TempDir(), "logcat.txt")
	r.expect(0, "logs", "--output", logFile)
	r.requireNoOutputContains(e2eAESSecret, e2eGlobalSecret)
	if b, err := os.ReadFile(logFile); err != nil || bytes.Contains(b, []byte(e2eAESSecret)) || bytes.Contains(b, []byte(e2eGlobalSecret)) {
		t.Errorf("the pulled logcat holds a secret (or cannot be read: %v)", err)
	}
}

func TestE2EDeviceInformation(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})

	m := r.expect(0, "capabilities")
	if e2eStr(m, "protocolVersion") != "2.0" || e2eStr(m, "agentProtocolVersion") != "1.0" || !slices.Contains(e2eStrings(m, "commands"), "plugin") {
		t.Errorf("capabilities: %v", m)
	}
	m = r.expect(0, "apps")
	apps, _ := m["apps"].([]any)
	var pkgs []string
	for _, a := range apps {
		pkgs = append(pkgs, e2eStr(a.(map[string]any), "packageName"))
	}
	if !slices.Contains(pkgs, "com.example.counter") || slices.Contains(pkgs, "com.alipay.hulu") || int(e2eNum(m, "count")) != len(apps) {
		t.Errorf("apps: %v", m)
	}
	m = r.expect(0, "app-info")
	if e2eStr(m, "versionName") != "1.0.2" || e2eNum(m, "versionCode") != 37 || e2eStr(e2eObj(m, "device"), "model") == "" {
		t.Errorf("app-info: %v", m)
	}
	m = r.expect(0, "app-status")
	if e2eStr(m, "status") != "none" {
		t.Errorf("app-status: %v", m)
	}
	m = r.expect(0, "inspect")
	if e2eObj(m, "page") == nil {
		t.Errorf("inspect: %v", m)
	}

	// screenshot: a real PNG; an existing file is replaced as solopi-ai
	// replaces it (atomically), a symlink never written through.
	shot := filepath.Join(t.TempDir(), "screen.png")
	m = r.expect(0, "screenshot", "--output", shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || float64(cfg.Width) != e2eNum(m, "width") || float64(cfg.Height) != e2eNum(m, "height") || int(e2eNum(m, "sizeBytes")) != len(b) {
		t.Errorf("screenshot %v: %v (decode %v)", m, cfg, err)
	}
	if err := os.WriteFile(shot, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	m = r.expect(0, "screenshot", "--output", shot)
	if !e2eBool(m, "outputReplaced") {
		t.Errorf("screenshot onto an existing file: %v", m)
	}
	if b, _ := os.ReadFile(shot); !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("screenshot did not replace the file with a PNG")
	}
	r.expect(0, "screenshot", "--output", shot, "--overwrite")
	link := filepath.Join(t.TempDir(), "link.png")
	if err := os.Symlink(shot, link); err != nil {
		t.Fatal(err)
	}
	if m = r.expect(3, "screenshot", "--output", link); e2eStr(m, "errorCode") != "invalid_output_path" {
		t.Errorf("screenshot through a symlink: %v", m)
	}

	// logs: threadtime lines.
	logFile := filepath.Join(t.TempDir(), "logcat.txt")
	m = r.expect(0, "logs", "--output", logFile, "--lines", "100")
	lb, err := os.ReadFile(logFile)
	if err != nil || len(lb) == 0 || int(e2eNum(m, "sizeBytes")) != len(lb) || e2eNum(m, "lines") < 1 || e2eNum(m, "lines") > 100 {
		t.Errorf("logs %v: %d bytes, %v", m, len(lb), err)
	}
	if m = r.expect(0, "logs", "--output", logFile); !e2eBool(m, "outputReplaced") {
		t.Errorf("logs onto an existing file: %v", m)
	}
	// A log larger than one 64 KiB shell packet arrives whole, every time
	// (the adb-server front used to reset such a transfer half-way).
	for i := range 500 {
		r.dev.Phone.Log('I', "E2EFlood", fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 200)))
	}
	for i := range 5 {
		big := filepath.Join(t.TempDir(), fmt.Sprintf("big-%d.txt", i))
		m = r.expect(0, "logs", "--output", big)
		b, err := os.ReadFile(big)
		if err != nil || len(b) < 100<<10 || int(e2eNum(m, "sizeBytes")) != len(b) ||
			!strings.HasSuffix(strings.TrimSpace(string(b)), "line 499 "+strings.Repeat("x", 200)) {
			t.Fatalf("logs of a large logcat: %d bytes (%v), %v", len(b), err, m)
		}
	}

	// startup-time, cold and warm: statistics consistent.
	for _, mode := range []string{"cold", "warm"} {
		m := r.expect(0, "startup-time", "--target-package", "com.example.counter", "--count", "5", "--interval", "0", "--mode", mode)
		if e2eStr(m, "mode") != mode || e2eNum(m, "validSampleCount") != 5 {
			t.Errorf("startup-time %s: %v", mode, m)
		}
		samples, _ := m["samples"].([]any)
		if len(samples) != 5 {
			t.Fatalf("startup-time %s: %d samples", mode, len(samples))
		}
		for _, s := range samples {
			if got := e2eStr(s.(map[string]any), "LaunchState"); !strings.EqualFold(got, mode) {
				t.Errorf("startup-time %s sample LaunchState %q", mode, got)
			}
		}
		stats := e2eObj(m, "statistics")
		for _, field := range []string{"ThisTime", "TotalTime", "WaitTime"} {
			st := e2eObj(stats, field)
			if st == nil || !e2eBool(st, "available") || e2eNum(st, "sampleCount") != 5 {
				t.Errorf("startup-time %s %s statistics: %v", mode, field, st)
				continue
			}
			lo, med, p90, hi, mean := e2eNum(st, "min"), e2eNum(st, "median"), e2eNum(st, "p90"), e2eNum(st, "max"), e2eNum(st, "mean")
			if !(lo <= med && med <= p90 && p90 <= hi && lo <= mean && mean <= hi && lo > 0) {
				t.Errorf("startup-time %s %s: min %v median %v p90 %v max %v mean %v", mode, field, lo, med, p90, hi, mean)
			}
			var vals []float64
			for _, s := range samples {
				vals = append(vals, e2eNum(s.(map[string]any), field))
			}
			if slices.Min(vals) != lo || slices.Max(vals) != hi {
				t.Errorf("startup-time %s %s: min/max %v/%v disagree with samples %v", mode, field, lo, hi, vals)
			}
		}
	}
}
