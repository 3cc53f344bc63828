package devicecmd

// The device, config and information commands against a simulated phone,
// every real stdout validated against its schema.

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

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// appSettings is an app configuration with initial settings.
func appSettings(s map[string]string) core.Config { return core.Config{Settings: s} }

// Doctor names exactly the one missing permission, for each of the five
// (background is a placeholder the device always reports granted), and
// passes when all are present.
func TestDoctorEveryPermission(t *testing.T) {
	t.Parallel()
	r := newRig(t, autoStartOn())
	m := r.Cmd(0, "doctor")
	if !cmdtest.Bool(m, "success") || !cmdtest.Bool(m, "ready") || len(cmdtest.Strs(m, "missingPermissions")) != 0 || len(cmdtest.Strs(m, "failedChecks")) != 0 {
		t.Fatalf("doctor with everything granted: %v", m)
	}
	for _, perm := range []string{"adb", "float", "background", "powerSave", "accessibility"} {
		if err := r.Dev.App.SetPermission(perm, false); err != nil {
			t.Fatal(err)
		}
		if perm == "background" {
			// The device reports background=true whatever is set.
			m := r.Cmd(0, "doctor")
			if got := cmdtest.Obj(cmdtest.Obj(m, "health"), "permissions")["background"]; got != true {
				t.Errorf("background placeholder reported %v", got)
			}
		} else {
			m := r.Cmd(2, "doctor")
			if got := cmdtest.Strs(m, "missingPermissions"); !slices.Equal(got, []string{perm}) {
				t.Errorf("doctor without %s: missingPermissions %v", perm, got)
			}
			if got := cmdtest.Strs(m, "failedChecks"); len(got) != 0 {
				t.Errorf("doctor without %s: failedChecks %v", perm, got)
			}
			if cmdtest.Bool(m, "ready") || cmdtest.Bool(m, "success") || cmdtest.Str(m, "error") == "" || cmdtest.Str(m, "userActionRequired") == "" {
				t.Errorf("doctor without %s: %v", perm, m)
			}
			checks, _ := m["checks"].([]any)
			for _, c := range checks {
				c := c.(map[string]any)
				if cmdtest.Str(c, "name") == perm && (cmdtest.Bool(c, "ok") || cmdtest.Str(c, "userActionRequired") == "") {
					t.Errorf("doctor without %s: check %v", perm, c)
				}
			}
			if got := cmdtest.Obj(cmdtest.Obj(m, "health"), "permissions")[perm]; got != false {
				t.Errorf("doctor without %s: health.permissions.%s = %v", perm, perm, got)
			}
		}
		if err := r.Dev.App.SetPermission(perm, true); err != nil {
			t.Fatal(err)
		}
	}
	r.Cmd(0, "doctor")
}

func TestAdbConnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, autoStartOn())
	fast := []string{"--poll-interval", "0.05"}

	// Already connected: nothing is invoked.
	m := r.Cmd(0, append([]string{"adb-connect"}, fast...)...)
	if !cmdtest.Bool(m, "alreadyConnected") {
		t.Errorf("adb-connect on a ready device: %v", m)
	}

	// Something else is missing too: refused, and the device is not asked.
	r.Dev.App.SetPermission("adb", false)
	r.Dev.App.SetPermission("float", false)
	// Every harness mutation the activity handles leaves a logcat line.
	harnessMutations := func() int { return cmdtest.LogcatCount(r.Dev, "AdbSchemeActivity: scheme harness result") }
	before := harnessMutations()
	m = r.Cmd(2, append([]string{"adb-connect"}, fast...)...)
	if cmdtest.Str(m, "errorCode") != "adb_connect_precondition_failed" {
		t.Errorf("adb-connect with float missing too: %v", m)
	}
	r.Dev.Clock().Sleep(context.Background(), 8*time.Second) // device time: longer than a simulated connection
	if after := harnessMutations(); after != before {
		t.Errorf("a refused adb-connect reached the device (%d → %d log lines)", before, after)
	}
	if r.Dev.App.Permission("adb") {
		t.Error("a refused adb-connect connected the internal ADB")
	}

	// Only adb missing: connecting → connected, then doctor is ready.
	r.Dev.App.SetPermission("float", true)
	m = r.Cmd(0, append([]string{"adb-connect"}, fast...)...)
	if harnessMutations() != before+1 {
		t.Errorf("adb-connect sent %d harness mutations, want 1", harnessMutations()-before)
	}
	if cmdtest.Bool(m, "alreadyConnected") || !cmdtest.Bool(m, "success") {
		t.Errorf("adb-connect: %v", m)
	}
	if cmdtest.Str(m, "state") != "connected" || !cmdtest.Bool(m, "connected") || !cmdtest.Bool(m, "terminal") || !cmdtest.Bool(cmdtest.Obj(m, "doctor"), "ready") {
		t.Errorf("adb-connect did not end connected with a ready doctor: %v", m)
	}
	if !r.Dev.App.Permission("adb") {
		t.Error("adb-connect exit 0 but the device's adb permission is still false")
	}
	r.Cmd(0, "doctor")

	// connecting → failed: the user has to act on the phone.
	r.Dev.App.SetPermission("adb", false)
	r.Dev.App.SetAdbConnectOutcome(core.AdbConnectFail, 0)
	m = r.Cmd(2, append([]string{"adb-connect"}, fast...)...)
	if cmdtest.Str(m, "errorCode") != "adb_connection_failed" {
		t.Errorf("failed adb-connect errorCode: %v", m)
	}
	if ua := cmdtest.Str(m, "userActionRequired"); ua == "" || cmdtest.Str(m, "state") != "failed" {
		t.Errorf("failed adb-connect names no user action: %v", m)
	}
	if rc := cmdtest.Obj(m, "receipt"); !cmdtest.Bool(rc, "userActionRequired") || cmdtest.Str(rc, "requiredUserAction") == "" || cmdtest.Str(rc, "state") != "failed" {
		t.Errorf("failed adb-connect receipt: %v", rc)
	}
	if r.Dev.App.Permission("adb") {
		t.Error("a failed connection granted adb")
	}
	r.Cmd(2, "doctor")

	// An RSA prompt nobody answers: the connect budget ends (124), and the
	// device then refuses a second request as busy, a failure that asks
	// for no device action of its own.
	r.Dev.App.SetAdbConnectOutcome(core.AdbConnectHang, 0)
	m = r.Cmd(124, "adb-connect", "--connect-timeout", "0.3", "--poll-interval", "0.05")
	if cmdtest.Str(m, "errorCode") != "adb_connect_timeout" || cmdtest.Str(cmdtest.Obj(m, "lastReceipt"), "state") != "connecting" {
		t.Errorf("hanging adb-connect: %v", m)
	}
	m = r.Cmd(2, append([]string{"adb-connect"}, fast...)...)
	if cmdtest.Str(m, "errorCode") != "adb_connection_busy" || cmdtest.Bool(cmdtest.Obj(m, "receipt"), "userActionRequired") {
		t.Errorf("adb-connect while another request connects: %v", m)
	}
	if v, has := m["requiredUserAction"]; has {
		t.Errorf("busy adb-connect reports requiredUserAction %q without the device asking for an action", v)
	}
}

// The 8 keys the CLI must never write: a syntactically valid value and the
// reason it is refused.
var readOnlyConfigKeys = map[string]struct{ value, code string }{
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
	aesSecret    = "aes-Secret-7f3a9c"
	globalSecret = "gs-Secret-41be"
)

func TestConfigSetGetListAndSecrets(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{App: appSettings(map[string]string{
		"KEY_AES_KEY":            aesSecret,
		"KEY_GLOBAL_SETTINGS":    `{"apiToken":"` + globalSecret + `"}`,
		"KEY_PERFORMANCE_UPLOAD": "https://keep.example.test/perf",
	})})
	fast := []string{"--poll-interval", "0.05"}

	list := r.Cmd(0, "config-list")
	configs, _ := list["configs"].([]any)
	if len(configs) != 25 {
		t.Fatalf("config-list: %d configs", len(configs))
	}
	for _, c := range configs {
		key := cmdtest.Str(c.(map[string]any), "key")
		m := r.Cmd(0, "config-get", "--key", key)
		cfg := cmdtest.Obj(m, "config")
		if key == "KEY_AES_KEY" || key == "KEY_GLOBAL_SETTINGS" {
			if _, has := cfg["value"]; has || !cmdtest.Bool(cfg, "redacted") {
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
		m := r.Cmd(0, append([]string{"config-set", "--key", c.key, "--value", c.value}, fast...)...)
		if !cmdtest.Bool(m, "confirmed") || cmdtest.Str(m, "type") != c.typ || m["actualValue"] != c.want || m["expectedValue"] != c.want {
			t.Errorf("config-set %s=%s: %v", c.key, c.value, m)
		}
		got := cmdtest.Obj(r.Cmd(0, "config-get", "--key", c.key), "config")["value"]
		if got != c.want {
			t.Errorf("config-get %s after set: %v, want %v", c.key, got, c.want)
		}
	}

	// Out of range: refused locally (usage), the device keeps its value.
	m := r.Cmd(3, "config-set", "--key", "KEY_USE_LANGUAGE", "--value", "3")
	if cmdtest.Str(m, "errorCode") != "invalid_config_value" {
		t.Errorf("out-of-range config-set: %v", m)
	}
	if got := cmdtest.Obj(r.Cmd(0, "config-get", "--key", "KEY_USE_LANGUAGE"), "config")["value"]; got != 2.0 {
		t.Errorf("KEY_USE_LANGUAGE after a refused set: %v", got)
	}

	// The 8 read-only keys: exit 2, and the device is never asked to set
	// (every config mutation the activity handles leaves a logcat line).
	sets := cmdtest.LogcatCount(r.Dev, "AdbSchemeActivity: scheme config result")
	for key, ro := range readOnlyConfigKeys {
		var before any
		sensitive := key == "KEY_AES_KEY" || key == "KEY_GLOBAL_SETTINGS"
		if !sensitive {
			before = cmdtest.Obj(r.Cmd(0, "config-get", "--key", key), "config")["value"]
		}
		m := r.Cmd(2, "config-set", "--key", key, "--value", ro.value)
		if cmdtest.Str(m, "errorCode") != ro.code || cmdtest.Str(m, "userActionRequired") == "" || cmdtest.Str(m, "key") != key {
			t.Errorf("config-set %s: %v", key, m)
		}
		// solopi-ai's refusals after its config get print the device's
		// config object: description, default, redacted, and the value
		// (none for a sensitive key, as the device sends it).
		if ro.code != "ui_confirmation_required" {
			cfg := cmdtest.Obj(m, "config")
			_, hasDefault := cfg["default"]
			_, hasValue := cfg["value"]
			if cmdtest.Str(cfg, "description") == "" || !hasDefault || hasValue == sensitive || cfg["key"] != key || cfg["redacted"] != sensitive {
				t.Errorf("config-set %s: config %v", key, cfg)
			}
		}
		if !sensitive {
			if after := cmdtest.Obj(r.Cmd(0, "config-get", "--key", key), "config")["value"]; after != before {
				t.Errorf("config-set %s changed the device: %v → %v", key, before, after)
			}
		}
	}
	r.Dev.Clock().Sleep(context.Background(), 4*time.Second) // device time: the activity handles intents asynchronously
	if n := cmdtest.LogcatCount(r.Dev, "AdbSchemeActivity: scheme config result"); n != sets {
		t.Errorf("refused config-set commands reached the device's config resolver (%d → %d)", sets, n)
	}
	if got := cmdtest.Obj(r.Cmd(0, "config-get", "--key", "KEY_PERFORMANCE_UPLOAD"), "config")["value"]; got != "https://keep.example.test/perf" {
		t.Errorf("KEY_PERFORMANCE_UPLOAD changed: %v", got)
	}

	// A device that answers but keeps the old value: unconfirmed, exit 2,
	// both values reported.
	r.Dev.App.SetConfigWriteIgnored("KEY_MAX_WAIT_TIME", true)
	m = r.Cmd(2, "config-set", "--key", "KEY_MAX_WAIT_TIME", "--value", "30000", "--ack-timeout", "0.5", "--poll-interval", "0.05")
	if cmdtest.Str(m, "errorCode") != "config_not_confirmed" || m["expectedValue"] != "30000" || m["expectedTypedValue"] != 30000.0 || m["actualValue"] != 25000.0 {
		t.Errorf("ignored config write: %v", m)
	}
	if got := cmdtest.Obj(r.Cmd(0, "config-get", "--key", "KEY_MAX_WAIT_TIME"), "config")["value"]; got != 25000.0 {
		t.Errorf("KEY_MAX_WAIT_TIME after an ignored write: %v", got)
	}

	// A few more commands for the secret search (auto-start off, which
	// run fixes itself, is the only gap: ready).
	r.Cmd(0, "doctor")
	r.Cmd(0, "capabilities")
	r.Cmd(0, "app-info")
	logFile := filepath.Join(t.TempDir(), "logcat.txt")
	r.Cmd(0, "logs", "--output", logFile)
	r.requireNoOutputContains(aesSecret, globalSecret)
	if b, err := os.ReadFile(logFile); err != nil || bytes.Contains(b, []byte(aesSecret)) || bytes.Contains(b, []byte(globalSecret)) {
		t.Errorf("the pulled logcat holds a secret (or cannot be read: %v)", err)
	}
}

// The information commands through the simulator's adb-server front (the
// transfer of a large logcat is the front's, the device block its
// devices -l line).
func TestDeviceInformation(t *testing.T) {
	t.Parallel()
	r := newAdbRig(t, sim.FarmOptions{})

	m := r.Cmd(0, "capabilities")
	if cmdtest.Str(m, "protocolVersion") != "2.0" || cmdtest.Str(m, "agentProtocolVersion") != "1.0" || !slices.Contains(cmdtest.Strs(m, "commands"), "plugin") {
		t.Errorf("capabilities: %v", m)
	}
	m = r.Cmd(0, "apps")
	apps, _ := m["apps"].([]any)
	var pkgs []string
	for _, a := range apps {
		pkgs = append(pkgs, cmdtest.Str(a.(map[string]any), "packageName"))
	}
	if !slices.Contains(pkgs, "com.example.counter") || slices.Contains(pkgs, "com.alipay.hulu") || int(cmdtest.Num(m, "count")) != len(apps) {
		t.Errorf("apps: %v", m)
	}
	m = r.Cmd(0, "app-info")
	if cmdtest.Str(m, "versionName") != "1.0.2" || cmdtest.Num(m, "versionCode") != 37 || cmdtest.Str(cmdtest.Obj(m, "device"), "model") == "" {
		t.Errorf("app-info: %v", m)
	}
	m = r.Cmd(0, "app-status")
	if cmdtest.Str(m, "status") != "none" {
		t.Errorf("app-status: %v", m)
	}
	m = r.Cmd(0, "inspect")
	if cmdtest.Obj(m, "page") == nil {
		t.Errorf("inspect: %v", m)
	}

	// screenshot: a real PNG; an existing file is replaced as solopi-ai
	// replaces it (atomically), a symlink never written through.
	shot := filepath.Join(t.TempDir(), "screen.png")
	m = r.Cmd(0, "screenshot", "--output", shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || float64(cfg.Width) != cmdtest.Num(m, "width") || float64(cfg.Height) != cmdtest.Num(m, "height") || int(cmdtest.Num(m, "sizeBytes")) != len(b) {
		t.Errorf("screenshot %v: %v (decode %v)", m, cfg, err)
	}
	if err := os.WriteFile(shot, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	m = r.Cmd(0, "screenshot", "--output", shot)
	if !cmdtest.Bool(m, "outputReplaced") {
		t.Errorf("screenshot onto an existing file: %v", m)
	}
	if b, _ := os.ReadFile(shot); !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("screenshot did not replace the file with a PNG")
	}
	r.Cmd(0, "screenshot", "--output", shot, "--overwrite")
	link := filepath.Join(t.TempDir(), "link.png")
	if err := os.Symlink(shot, link); err != nil {
		t.Fatal(err)
	}
	if m = r.Cmd(3, "screenshot", "--output", link); cmdtest.Str(m, "errorCode") != "invalid_output_path" {
		t.Errorf("screenshot through a symlink: %v", m)
	}

	// logs: threadtime lines.
	logFile := filepath.Join(t.TempDir(), "logcat.txt")
	m = r.Cmd(0, "logs", "--output", logFile, "--lines", "100")
	lb, err := os.ReadFile(logFile)
	if err != nil || len(lb) == 0 || int(cmdtest.Num(m, "sizeBytes")) != len(lb) || cmdtest.Num(m, "lines") < 1 || cmdtest.Num(m, "lines") > 100 {
		t.Errorf("logs %v: %d bytes, %v", m, len(lb), err)
	}
	if m = r.Cmd(0, "logs", "--output", logFile); !cmdtest.Bool(m, "outputReplaced") {
		t.Errorf("logs onto an existing file: %v", m)
	}
	// A log larger than one 64 KiB shell packet arrives whole, every time
	// (the adb-server front used to reset such a transfer half-way).
	for i := range 500 {
		r.Dev.Phone.Log('I', "E2EFlood", fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 200)))
	}
	for i := range 5 {
		big := filepath.Join(t.TempDir(), fmt.Sprintf("big-%d.txt", i))
		m = r.Cmd(0, "logs", "--output", big)
		b, err := os.ReadFile(big)
		if err != nil || len(b) < 100<<10 || int(cmdtest.Num(m, "sizeBytes")) != len(b) ||
			!strings.HasSuffix(strings.TrimSpace(string(b)), "line 499 "+strings.Repeat("x", 200)) {
			t.Fatalf("logs of a large logcat: %d bytes (%v), %v", len(b), err, m)
		}
	}

	// startup-time, cold and warm: statistics consistent.
	for _, mode := range []string{"cold", "warm"} {
		m := r.Cmd(0, "startup-time", "--target-package", "com.example.counter", "--count", "5", "--interval", "0", "--mode", mode)
		if cmdtest.Str(m, "mode") != mode || cmdtest.Num(m, "validSampleCount") != 5 {
			t.Errorf("startup-time %s: %v", mode, m)
		}
		samples, _ := m["samples"].([]any)
		if len(samples) != 5 {
			t.Fatalf("startup-time %s: %d samples", mode, len(samples))
		}
		for _, s := range samples {
			if got := cmdtest.Str(s.(map[string]any), "LaunchState"); !strings.EqualFold(got, mode) {
				t.Errorf("startup-time %s sample LaunchState %q", mode, got)
			}
		}
		stats := cmdtest.Obj(m, "statistics")
		for _, field := range []string{"ThisTime", "TotalTime", "WaitTime"} {
			st := cmdtest.Obj(stats, field)
			if st == nil || !cmdtest.Bool(st, "available") || cmdtest.Num(st, "sampleCount") != 5 {
				t.Errorf("startup-time %s %s statistics: %v", mode, field, st)
				continue
			}
			lo, med, p90, hi, mean := cmdtest.Num(st, "min"), cmdtest.Num(st, "median"), cmdtest.Num(st, "p90"), cmdtest.Num(st, "max"), cmdtest.Num(st, "mean")
			if !(lo <= med && med <= p90 && p90 <= hi && lo <= mean && mean <= hi && lo > 0) {
				t.Errorf("startup-time %s %s: min %v median %v p90 %v max %v mean %v", mode, field, lo, med, p90, hi, mean)
			}
			var vals []float64
			for _, s := range samples {
				vals = append(vals, cmdtest.Num(s.(map[string]any), field))
			}
			if slices.Min(vals) != lo || slices.Max(vals) != hi {
				t.Errorf("startup-time %s %s: min/max %v/%v disagree with samples %v", mode, field, lo, hi, vals)
			}
		}
	}
}
