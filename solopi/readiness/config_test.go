package readiness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
)

func fastConfigSet() ConfigSetOptions {
	// The tests that use it end when the device confirms; the budget is
	// for a loaded machine.
	return ConfigSetOptions{AckTimeout: 2 * time.Second, PollInterval: 10 * time.Millisecond}
}

func TestConfigTableShape(t *testing.T) {
	t.Parallel()
	keys := configKeys()
	writable, readOnly := 0, 0
	for _, k := range keys {
		if k.Writable {
			writable++
			if k.Refusal != "" {
				t.Errorf("%s writable with refusal", k.Key)
			}
		} else {
			readOnly++
			if refusalMessages[k.Refusal] == "" || refusalActions[k.Refusal] == "" {
				t.Errorf("%s has no refusal text", k.Key)
			}
		}
	}
	if len(keys) != 25 || writable != 17 || readOnly != 8 {
		t.Fatalf("%d keys, %d writable, %d read-only", len(keys), writable, readOnly)
	}
}

// a valid value per writable key, different from the device's defaults.
var validSets = map[string]struct{ in, want string }{
	"KEY_OUTPUT_CHARSET":             {"UTF-8", `"UTF-8"`},
	"KEY_USE_LANGUAGE":               {"2", "2"},
	"KEY_ALLOW_REPLAY_DIFFERENT_APP": {"TRUE", "true"},
	"KEY_RESTART_APP_ON_PLAY":        {"True", "true"},
	"KEY_DISPLAY_SYSTEM_APP":         {"true", "true"},
	"KEY_REPLAY_AUTO_START":          {"true", "true"},
	"KEY_RECORD_COVER_MODE":          {"true", "true"},
	"KEY_SKIP_ACCESSIBILITY":         {"true", "true"},
	"KEY_MAX_WAIT_TIME":              {"+600000", "600000"},
	"KEY_MAX_SCROLL_FIND_COUNT":      {"100", "100"},
	"KEY_AUTO_CLEAR_FILES_DAYS":      {"3650", "3650"},
	"KEY_SCREENSHOT_RESOLUTION":      {"1080", "1080"},
	"KEY_HIGHLIGHT_REPLAY_NODE":      {"true", "true"},
	"KEY_CHECK_UPDATE":               {"true", "true"},
	"KEY_HIDE_LOG":                   {"true", "true"},
	"KEY_SCREEN_FACTOR_ROTATION":     {"3", "3"},
	"KEY_SCREEN_ROTATION":            {"true", "true"},
}

func TestConfigSetEveryWritableKey(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	for _, k := range configKeys() {
		if !k.Writable {
			continue
		}
		v, ok := validSets[k.Key]
		if !ok {
			t.Fatalf("no test value for %s", k.Key)
		}
		t.Run(k.Key, func(t *testing.T) {
			t.Parallel()
			res, err := ConfigSet(context.Background(), s, k.Key, v.in, fastConfigSet())
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(res.ActualValue)
			if !res.Confirmed || !res.Success || string(got) != v.want || printed(t, res.Config)["key"] != k.Key {
				t.Fatalf("%+v (actual %s)", res, got)
			}
			if sent := len(dev.MutationsWith("solopi://startaction/config?action=set&key=" + k.Key + "&value=")); sent != 1 {
				t.Fatalf("%d mutations for %s: %v", sent, k.Key, dev.Mutations())
			}
		})
	}
}

func TestConfigSetRejectsBadValuesLocally(t *testing.T) {
	t.Parallel()
	bad := []struct{ key, value string }{
		{"KEY_USE_LANGUAGE", "3"}, {"KEY_USE_LANGUAGE", "-1"}, {"KEY_AUTO_CLEAR_FILES_DAYS", "-2"},
		{"KEY_MAX_WAIT_TIME", "0"}, {"KEY_MAX_WAIT_TIME", "600001"}, {"KEY_SCREENSHOT_RESOLUTION", "4321"},
		{"KEY_SCREEN_FACTOR_ROTATION", "4"}, {"KEY_MAX_SCROLL_FIND_COUNT", "1.5"}, {"KEY_MAX_SCROLL_FIND_COUNT", " 5"},
		{"KEY_MAX_SCROLL_FIND_COUNT", "0x10"}, {"KEY_MAX_SCROLL_FIND_COUNT", ""}, {"KEY_MAX_SCROLL_FIND_COUNT", "99999999999999999999"},
		{"KEY_HIDE_LOG", "yes"}, {"KEY_HIDE_LOG", "1"}, {"KEY_HIDE_LOG", ""},
		{"KEY_OUTPUT_CHARSET", "NOT-A-CHARSET"}, {"KEY_OUTPUT_CHARSET", "UTF-8\n"}, {"KEY_OUTPUT_CHARSET", strings.Repeat("a", 4097)},
	}
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	for _, b := range bad {
		touched := touches(t, dev)
		_, err := ConfigSet(context.Background(), s, b.key, b.value, fastConfigSet())
		wantCode(t, err, protocol.ErrInvalidConfigValue, fault.Invalid)
		if touched() != 0 {
			t.Errorf("%s=%q touched the device", b.key, b.value)
		}
	}
	_, _, err := CheckConfigSet("KEY_NOPE", "1")
	wantCode(t, err, fault.CodeUnsupportedConfig, fault.Failed)
}

func TestConfigSetReadOnlyKeysRefusedWithoutDevice(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"KEY_PERFORMANCE_UPLOAD":   fault.CodeUIConfirmationRequired,
		"KEY_RECORD_SCREEN_UPLOAD": fault.CodeUIConfirmationRequired,
		"KEY_PATCH_URL":            fault.CodeUIConfirmationRequired,
		"KEY_ADB_SERVER":           fault.CodeUIConfirmationRequired,
		"KEY_AES_KEY":              "sensitive_config_ui_required",
		"KEY_GLOBAL_SETTINGS":      "sensitive_config_ui_required",
		"KEY_CONTROL_PORT":         fault.CodeNewSessionRequired,
		"KEY_BASE_DIR":             "ui_migration_required",
	}
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	for key, code := range want {
		touched := touches(t, dev)
		_, err := ConfigSet(context.Background(), s, key, "x", fastConfigSet())
		e := wantCode(t, err, code, fault.Failed)
		if e.UserAction == "" || e.Details["key"] != key {
			t.Errorf("%s: %v", key, e)
		}
		if touched() != 0 {
			t.Errorf("%s touched the device", key)
		}
	}
}

func TestConfigSetUnconfirmedWhenDeviceKeepsOldValue(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	dev.App.SetConfigWriteIgnored("KEY_SCREENSHOT_RESOLUTION", true)
	s := openTestSession(t, dev)
	before, err := ConfigGet(context.Background(), s, "KEY_SCREENSHOT_RESOLUTION")
	if err != nil {
		t.Fatal(err)
	}
	old := printed(t, before.Config)["value"]
	// The device never confirms: the whole budget passes, so it is short.
	_, err = ConfigSet(context.Background(), s, "KEY_SCREENSHOT_RESOLUTION", "1080",
		ConfigSetOptions{AckTimeout: 400 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	e := wantCode(t, err, fault.CodeConfigNotConfirmed, fault.Failed)
	if e.Details["expectedValue"] != "1080" || e.Details["expectedTypedValue"] != int64(1080) || e.Details["actualValue"] != old || old == json.Number("1080") {
		t.Fatalf("expected %#v actual %#v", e.Details["expectedValue"], e.Details["actualValue"])
	}
}

func TestConfigSetSpecMismatch(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	// Another build allows more languages than the host knows of.
	answerFault(t, dev, sim.AnswerFault{Action: "config", Query: map[string]string{"action": "get", "key": "KEY_USE_LANGUAGE"},
		Set: map[string]any{"config/max": 5}})
	s := openTestSession(t, dev)
	_, err := ConfigSet(context.Background(), s, "KEY_USE_LANGUAGE", "1", fastConfigSet())
	wantCode(t, err, fault.CodeConfigSpecMismatch, fault.Transport)
	if len(dev.Mutations()) != 0 {
		t.Error("mutated after a spec mismatch")
	}
}

// secrets are the sensitive values the device holds; no output may carry
// them.
var secrets = []string{secretAESKey, "hunter2-global"}

// printed is v as a command prints it, decoded (numbers as json.Number).
func printed(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

func assertNoSecrets(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := v.(*fault.Error); ok {
		b, _ = json.Marshal(e.Fields())
		b = append(b, e.Error()...)
	}
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Errorf("%s leaks a sensitive value: %s", what, b)
		}
	}
}

func TestConfigSensitiveValuesNeverPrinted(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	list, err := ConfigList(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if list.Count != 25 || len(list.Configs) != 25 {
		t.Errorf("count %v of %d", list.Count, len(list.Configs))
	}
	assertNoSecrets(t, "config-list", list)
	for _, key := range []string{"KEY_AES_KEY", "KEY_GLOBAL_SETTINGS"} {
		got, err := ConfigGet(context.Background(), s, key)
		if err != nil {
			t.Fatal(err)
		}
		c := printed(t, got.Config)
		if _, has := c["value"]; has || c["redacted"] != true {
			t.Fatalf("%s: %v", key, c)
		}
		assertNoSecrets(t, "config-get "+key, got)
	}
	// The refusals of config-set never echo the value either.
	for _, key := range []string{"KEY_AES_KEY", "KEY_GLOBAL_SETTINGS"} {
		_, err := ConfigSet(context.Background(), s, key, secrets[0], fastConfigSet())
		assertNoSecrets(t, "config-set "+key, err)
	}

	// A build that leaks them is a protocol error, and still nothing is shown.
	leaked := map[string]string{"KEY_AES_KEY": secretAESKey, "KEY_GLOBAL_SETTINGS": secretGlobal}
	for i, c := range list.Configs {
		key := printed(t, c)["key"].(string)
		if v, ok := leaked[key]; ok {
			answerFault(t, dev, sim.AnswerFault{Action: "config", Query: map[string]string{"action": "get", "key": key},
				Set: map[string]any{"config/value": v, "config/redacted": false}})
			answerFault(t, dev, sim.AnswerFault{Action: "config", Query: map[string]string{"action": "list"},
				Set: map[string]any{fmt.Sprintf("configs/%d/value", i): v}})
		}
	}
	for _, key := range []string{"KEY_AES_KEY", "KEY_GLOBAL_SETTINGS"} {
		_, err := ConfigGet(context.Background(), s, key)
		e := wantCode(t, err, fault.CodeSensitiveValueExposed, fault.Transport)
		assertNoSecrets(t, "config-get leak "+key, e)
	}
	_, err = ConfigList(context.Background(), s)
	e := wantCode(t, err, fault.CodeSensitiveValueExposed, fault.Transport)
	assertNoSecrets(t, "config-list leak", e)
}

func TestConfigGetPlain(t *testing.T) {
	t.Parallel()
	s := openTestSession(t, answering(t, newSimDevice(t)))
	got, err := ConfigGet(context.Background(), s, "KEY_USE_LANGUAGE")
	if err != nil {
		t.Fatal(err)
	}
	c := printed(t, got.Config)
	if c["value"] != json.Number("0") || c["redacted"] != false {
		t.Fatalf("%v", c)
	}
	_, err = ConfigGet(context.Background(), s, "KEY_NOPE")
	wantCode(t, err, fault.CodeUnsupportedConfig, fault.Failed)
}

func TestNormalizeConfigValue(t *testing.T) {
	t.Parallel()
	k, _ := lookupConfigKey("KEY_GLOBAL_SETTINGS")
	if v, err := normalizeConfigValue(k, `{ "a" : 1 }`); err != nil || v != `{"a":1}` {
		t.Errorf("json: %q %v", v, err)
	}
	if _, err := normalizeConfigValue(k, `[1]`); err == nil {
		t.Error("json array accepted")
	}
	if !configValueEqual(k, `{"a":1}`, `{"a":1}`) || configValueEqual(k, `{"a":2}`, `{"a":1}`) {
		t.Error("json comparison")
	}
	b, _ := lookupConfigKey("KEY_HIDE_LOG")
	if configValueEqual(b, "true", true) {
		t.Error("a string is not a boolean")
	}
}
