package soloapp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

func TestConfigList(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	l := r.get("config", "action", "list")
	configs := l["configs"].([]any)
	if num(l, "count") != 25 || len(configs) != 25 {
		t.Fatalf("count: %v", l["count"])
	}
	wantKeys := []string{"KEY_PERFORMANCE_UPLOAD", "KEY_RECORD_SCREEN_UPLOAD", "KEY_PATCH_URL", "KEY_OUTPUT_CHARSET",
		"KEY_USE_LANGUAGE", "KEY_ALLOW_REPLAY_DIFFERENT_APP", "KEY_RESTART_APP_ON_PLAY", "KEY_DISPLAY_SYSTEM_APP",
		"KEY_REPLAY_AUTO_START", "KEY_RECORD_COVER_MODE", "KEY_SKIP_ACCESSIBILITY", "KEY_MAX_WAIT_TIME",
		"KEY_MAX_SCROLL_FIND_COUNT", "KEY_AUTO_CLEAR_FILES_DAYS", "KEY_SCREENSHOT_RESOLUTION", "KEY_HIGHLIGHT_REPLAY_NODE",
		"KEY_CHECK_UPDATE", "KEY_ADB_SERVER", "KEY_HIDE_LOG", "KEY_SCREEN_FACTOR_ROTATION", "KEY_SCREEN_ROTATION",
		"KEY_GLOBAL_SETTINGS", "KEY_AES_KEY", "KEY_BASE_DIR", "KEY_CONTROL_PORT"}
	writable, sensitive := 0, 0
	for i, c := range configs {
		m := c.(map[string]any)
		if str(m, "key") != wantKeys[i] {
			t.Errorf("#%d: %s", i, str(m, "key"))
		}
		if _, has := m["value"]; has {
			t.Errorf("list has value: %v", m)
		}
		if _, has := m["redacted"]; has {
			t.Errorf("list has redacted: %v", m)
		}
		if m["writable"] == true {
			writable++
		}
		if m["sensitive"] == true {
			sensitive++
		}
	}
	if writable != 17 || sensitive != 2 {
		t.Errorf("writable %d sensitive %d", writable, sensitive)
	}
	// Spec key order.
	var order []string
	for _, e := range r.app.SpecObj(core.ConfigSpecs()[11], true) {
		order = append(order, e.K)
	}
	if strings.Join(order, ",") != "key,type,description,default,writable,sensitive,min,max,redacted,value" {
		t.Errorf("spec order: %v", order)
	}
}

func TestConfigGetSet(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	type row struct {
		key, value string
		code, msg  string
		want       any // expected value after a successful set
	}
	for _, tc := range []row{
		{"KEY_REPLAY_AUTO_START", "TRUE", "", "", true},
		{"KEY_REPLAY_AUTO_START", "yes", "invalid_config_value", "Boolean config requires true or false", nil},
		{"KEY_MAX_WAIT_TIME", "600000", "", "", "600000"},
		{"KEY_MAX_WAIT_TIME", "600001", "invalid_config_value", "Config value is outside the supported range", nil},
		{"KEY_MAX_WAIT_TIME", "0", "invalid_config_value", "Config value is outside the supported range", nil},
		{"KEY_MAX_WAIT_TIME", "1e3", "invalid_config_value", "Numeric config requires an integer", nil},
		{"KEY_MAX_WAIT_TIME", " 5", "invalid_config_value", "Numeric config requires an integer", nil},
		{"KEY_AUTO_CLEAR_FILES_DAYS", "-1", "", "", "-1"},
		{"KEY_AUTO_CLEAR_FILES_DAYS", "+7", "", "", "7"},
		{"KEY_USE_LANGUAGE", "3", "invalid_config_value", "Config value is outside the supported range", nil},
		{"KEY_OUTPUT_CHARSET", "utf-8", "", "", "utf-8"},
		{"KEY_OUTPUT_CHARSET", "big5", "", "", "big5"},
		{"KEY_OUTPUT_CHARSET", "EBCDIC-XX", "invalid_config_value", "Unsupported output charset", nil},
		{"KEY_OUTPUT_CHARSET", "UTF\n8", "invalid_config_value", "String config is too long or contains control characters", nil},
		{"KEY_OUTPUT_CHARSET", strings.Repeat("x", 4097), "invalid_config_value", "String config is too long or contains control characters", nil},
		{"KEY_PERFORMANCE_UPLOAD", "http://x", "ui_migration_required", "This config changes stored data and must be updated in the SoloPi UI: KEY_PERFORMANCE_UPLOAD", nil},
		{"KEY_CONTROL_PORT", "5555", "ui_migration_required", "This config changes stored data and must be updated in the SoloPi UI: KEY_CONTROL_PORT", nil},
		{"KEY_AES_KEY", "k", "sensitive_config_ui_required", "This sensitive config is available only in the SoloPi UI: KEY_AES_KEY", nil},
		{"KEY_GLOBAL_SETTINGS", "{}", "sensitive_config_ui_required", "This sensitive config is available only in the SoloPi UI: KEY_GLOBAL_SETTINGS", nil},
		{"KEY_NOPE", "1", "unsupported_config", "Unsupported config key: KEY_NOPE", nil},
	} {
		got := r.mutate("config", "action", "set", "key", tc.key, "value", tc.value)
		if tc.code != "" {
			wantErr(t, got, tc.code, tc.msg)
			continue
		}
		if got["success"] != true || fmt.Sprint(sub(got, "config")["value"]) != fmt.Sprint(tc.want) {
			t.Errorf("%s=%q: %v", tc.key, tc.value, got)
		}
		if v := sub(r.get("config", "action", "get", "key", tc.key), "config")["value"]; fmt.Sprint(v) != fmt.Sprint(tc.want) {
			t.Errorf("%s read back %v", tc.key, v)
		}
	}
	wantErr(t, r.mutate("config", "action", "set", "key", "KEY_HIDE_LOG"), "missing_value", "Config value is required")
	wantErr(t, r.mutate("config", "action", "set", "value", "1"), "unsupported_config", "Unsupported config key: null")
	wantErr(t, r.get("config", "action", "get"), "unsupported_config", "Unsupported config key: null")
	wantErr(t, r.get("config"), "unsupported_action", "Unsupported config action")
	wantErr(t, r.get("config", "key", "KEY_HIDE_LOG"), "unsupported_action", "Unsupported config action")
	wantErr(t, r.get("config", "action", "drop"), "unsupported_action", "Unsupported config action")

	// Side effect: rotation index writes the axis swap.
	for idx, swap := range map[string]bool{"1": true, "2": false, "3": true, "0": false} {
		r.adb("config", "action", "set", "key", "KEY_SCREEN_FACTOR_ROTATION", "value", idx)
		if v := sub(r.get("config", "action", "get", "key", "KEY_SCREEN_ROTATION"), "config")["value"]; v != swap {
			t.Errorf("rotation %s: swap %v", idx, v)
		}
	}
	// Redaction.
	for _, k := range []string{"KEY_AES_KEY", "KEY_GLOBAL_SETTINGS"} {
		c := sub(r.get("config", "action", "get", "key", k), "config")
		if _, has := c["value"]; has || c["redacted"] != true {
			t.Errorf("%s not redacted: %v", k, c)
		}
	}
	c := sub(r.get("config", "action", "get", "key", "KEY_PATCH_URL"), "config")
	if c["redacted"] != false || str(c, "value") != "https://raw.githubusercontent.com/alipay/SoloPi/master/arm64-v8a.json" {
		t.Errorf("patch url: %v", c)
	}
	// Ignored writes keep the old value while answering success.
	r.app.SetConfigWriteIgnored("KEY_CHECK_UPDATE", true)
	r.adb("config", "action", "set", "key", "KEY_CHECK_UPDATE", "value", "false")
	if v := sub(r.get("config", "action", "get", "key", "KEY_CHECK_UPDATE"), "config")["value"]; v != true {
		t.Errorf("ignored write applied: %v", v)
	}
	// Settings survive a restart.
	r.app.Restart()
	r.waitReady()
	if v := sub(r.get("config", "action", "get", "key", "KEY_REPLAY_AUTO_START"), "config")["value"]; v != true {
		t.Errorf("settings lost on restart: %v", v)
	}
}

func TestStatusResolver(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	if got := r.get("status", "type", "status"); len(got) != 1 || str(got, "status") != "none" {
		t.Errorf("status: %v", got)
	}
	r.app.MarkRecordingStarted()
	if got := r.get("status", "type", "status"); str(got, "status") != "record" {
		t.Errorf("status: %v", got)
	}
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
	page := r.get("status", "type", "page")
	if _, has := page["success"]; has {
		t.Errorf("page has success: %v", page)
	}
	root := sub(page, "page")
	if str(root, "packageName") != counterPkg || str(root, "type") != "AccessibilityNodeTree" || num(root, "depth") != 1 {
		t.Errorf("page root: %v", root)
	}
	if _, has := root["nodeId"]; has {
		t.Error("status page must not carry nodeIds")
	}
	// SoloPi's own window is a valid page root here.
	r.phone.set(func(f *fakePhone) { f.fg = solopiPkg })
	if root := sub(r.get("status", "type", "page"), "page"); str(root, "packageName") != solopiPkg {
		t.Errorf("SoloPi page: %v", root)
	}
	// Multi-window root.
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg; f.imeVisible = true })
	root = sub(r.get("status", "type", "page"), "page")
	if str(root, "type") != "FakeNodeTree" || len(root) != 2 || len(root["children"].([]any)) != 2 {
		t.Errorf("fake root: %v", root)
	}
	if err := r.app.SetPermission(core.PermAccessibility, false); err != nil {
		t.Fatal(err)
	}
	wantErr(t, r.get("status", "type", "page"), "page_permission_required", "ADB and accessibility permissions are required")
	r.app.Restart()
	r.waitReady()
	if got := r.get("status", "type", "status"); str(got, "status") != "none" {
		t.Errorf("status after restart: %v", got)
	}
}
