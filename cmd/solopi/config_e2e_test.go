package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas"
)

// Refusals run through the real CLI in-process: they exit before any adb
// server is contacted, so no device is needed at all.
func TestConfigSetRefusedWithoutDevice(t *testing.T) {
	cases := []struct {
		args []string
		code string
		exit int
	}{
		{[]string{"config-set", "--key", "KEY_AES_KEY", "--value", "topsecret-new"}, "sensitive_config_ui_required", outcome.ExitFailure},
		{[]string{"config-set", "--key", "KEY_ADB_SERVER", "--value", "10.0.0.1:5555"}, "ui_confirmation_required", outcome.ExitFailure},
		{[]string{"config-set", "--key", "KEY_CONTROL_PORT", "--value", "23343"}, "new_session_required", outcome.ExitFailure},
		{[]string{"config-set", "--key", "KEY_BASE_DIR", "--value", "/sdcard/x"}, "ui_migration_required", outcome.ExitFailure},
		{[]string{"config-set", "--key", "KEY_USE_LANGUAGE", "--value", "7"}, "invalid_config_value", outcome.ExitUsage},
		{[]string{"config-set", "--key", "KEY_NOPE", "--value", "1"}, "unsupported_config", outcome.ExitFailure},
		{[]string{"config-get", "--key", "KEY_NOPE"}, "unsupported_config", outcome.ExitFailure},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		// An adb server port nothing listens on and no adb binary: any device
		// contact would end in adb_server_unreachable instead.
		args := append([]string{"solopi", "--adb", "/nonexistent/adb", "--adb-server-port", "1"}, c.args...)
		code := run(context.Background(), args, cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != c.exit || !strings.Contains(out.String(), `"errorCode":"`+c.code+`"`) {
			t.Errorf("%v: exit %d stdout %s stderr %s", c.args, code, out.String(), errb.String())
		}
		if c.exit == outcome.ExitFailure && c.code != "unsupported_config" {
			// solopi-ai's refusals carry the setting's config object.
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("%v: %s", c.args, out.String())
			}
			if cfg, _ := m["config"].(map[string]any); cfg["key"] != c.args[2] || cfg["writable"] != false {
				t.Errorf("%v: config object %v", c.args, m["config"])
			}
		}
		if strings.Contains(out.String(), "topsecret") {
			t.Errorf("%v echoes the value: %s", c.args, out.String())
		}
		schemas.Validate(t, c.args[0], out.Bytes())
	}
}
