package devicecmd

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// No adb server on the port and no adb to start one: exit 3, as
// solopi-ai; with an adb that fails to start it, exit 4.
func TestTransportServerUnreachable(t *testing.T) {
	t.Parallel()
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
		{"/nonexistent/adb", fault.CodeAdbNotFound, outcome.ExitUsage},
		{"/bin/false", fault.CodeAdbServerUnreachable, outcome.ExitTransport},
	} {
		cli := cmdtest.New(t, Commands, nil)
		cli.Globals = []string{"--adb", c.adb, "--adb-server-port", fmt.Sprint(port)}
		m := cli.Expect(c.exit, "app-status", "app-status")
		if m["errorCode"] != c.code || m["userActionRequired"] == nil {
			t.Fatalf("--adb %s: %v", c.adb, m)
		}
	}
}

// The whole path through the simulator's adb-server front with two
// devices: without --serial the selection is refused with the list, with
// it every device command runs.
func TestDeviceSelectionThroughTheAdbServer(t *testing.T) {
	t.Parallel()
	farm := cmdtest.Farm(t, sim.FarmOptions{Devices: 2, Configure: func(i int, o *sim.Options) {
		o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
	}})
	cli := cmdtest.OverAdb(t, Commands, farm)
	serial := farm.Devices()[0].Serial()
	dir := t.TempDir()

	m := cli.Expect(outcome.ExitUsage, "doctor", "doctor")
	if m["errorCode"] != fault.CodeMultipleDevices || !strings.Contains(fmt.Sprint(m["devices"]), serial) {
		t.Fatalf("without --serial: %v", m)
	}
	for _, args := range [][]string{
		{"doctor"}, {"adb-connect"}, {"capabilities"}, {"apps"}, {"app-info"}, {"app-status"}, {"inspect"}, {"config-list"},
		{"config-get", "--key", "KEY_AES_KEY"},
		{"config-set", "--key", "KEY_SCREENSHOT_RESOLUTION", "--value", "1080"},
		{"screenshot", "--output", filepath.Join(dir, "s.png")},
		{"logs", "--output", filepath.Join(dir, "l.txt"), "--lines", "20"},
		{"startup-time", "--target-package", "com.example.counter", "--count", "2", "--interval", "0"},
	} {
		m := cli.Expect(0, args[0], append([]string{"--serial", serial}, args...)...)
		if args[0] == "doctor" {
			// A device reached through an adb server is described by its
			// devices -l line.
			if d := cmdtest.Obj(m, "device"); d["serial"] != serial || d["state"] != "device" || d["model"] == nil || d["transportId"] == nil {
				t.Errorf("doctor's device %v", d)
			}
		}
	}
	if m := cli.Expect(outcome.ExitUsage, "doctor", "--serial", "sim-9999", "doctor"); m["errorCode"] != fault.CodeDeviceNotFound {
		t.Errorf("unknown serial: %v", m)
	}
}

// Refusals exit before any adb server is contacted: no device is needed.
func TestRefusedBeforeTheDevice(t *testing.T) {
	t.Parallel()
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
		{[]string{"startup-time", "--target-package", "com.x", "--iterations", "0"}, "invalid_option", outcome.ExitUsage},
		{[]string{"logs", "--output", "x.txt", "--lines", "0"}, "invalid_option", outcome.ExitUsage},
	}
	for _, c := range cases {
		// An adb server port nothing listens on and no adb binary: any
		// device contact would end in adb_not_found instead.
		cli := cmdtest.New(t, Commands, nil)
		cli.Globals = []string{"--adb", "/nonexistent/adb", "--adb-server-port", "1"}
		r := cli.Run(c.args...)
		m := r.Object(t)
		if r.Code != c.exit || m["errorCode"] != c.code {
			t.Errorf("%v: exit %d %s", c.args, r.Code, r.Stdout)
			continue
		}
		schematest.Validate(t, c.args[0], r.Stdout)
		if c.args[0] == "config-set" && c.exit == outcome.ExitFailure && c.code != "unsupported_config" {
			// solopi-ai's refusals carry the setting's config object.
			if cfg := cmdtest.Obj(m, "config"); cfg["key"] != c.args[2] || cfg["writable"] != false {
				t.Errorf("%v: config object %v", c.args, m["config"])
			}
		}
		if strings.Contains(string(r.Stdout), "topsecret") {
			t.Errorf("%v echoes the value: %s", c.args, r.Stdout)
		}
	}
	// Values the parser checks (seconds, choices) are its text on stderr,
	// nothing on stdout.
	for _, args := range [][]string{
		{"config-set", "--key", "KEY_MAX_WAIT_TIME", "--value", "1", "--ack-timeout", "0"},
		{"startup-time", "--target-package", "com.x", "--interval", "-1"},
		{"startup-time", "--target-package", "com.x", "--interval", "3601"},
		{"startup-time", "--target-package", "com.x", "--mode", "lukewarm"},
		{"startup-time", "--target-package", "com.x", "--launch-timeout", "0"},
		{"adb-connect", "--connect-timeout", "-1"},
	} {
		cli := cmdtest.New(t, Commands, nil)
		cli.Globals = []string{"--adb", "/nonexistent/adb", "--adb-server-port", "1"}
		if r := cli.Run(args...); r.Code != outcome.ExitUsage || len(r.Stdout) != 0 || len(r.Stderr) == 0 {
			t.Errorf("%v: exit %d %s", args, r.Code, r.Stdout)
		}
	}
}

// The global session options reach the device: another control port is
// one nothing answers on, another package is one that is not installed.
func TestGlobalSessionOptions(t *testing.T) {
	t.Parallel()
	r := newRig(t, autoStartOn())
	r.Globals = []string{"--startup-timeout", "0.5", "--request-timeout", "0.5"}
	m := r.Expect(outcome.ExitTransport, "doctor", "--device-port", "24000", "doctor")
	if m["errorCode"] != fault.CodeControlServiceNotReady || cmdtest.Obj(m, "lastErrorDetail")["errorCode"] != fault.CodeControlServiceUnreachable || cmdtest.Str(m, "lastError") == "" {
		t.Errorf("another control port: %v", m)
	}
	m = r.Expect(outcome.ExitFailure, "doctor", "--package", "com.example.solopi", "doctor")
	if m["installed"] != false || m["errorCode"] != fault.CodeSolopiNotInstalled {
		t.Errorf("another package: %v", m)
	}
	if m := r.Expect(0, "doctor", "--device-port", fmt.Sprint(protocol.DefaultDevicePort), "doctor"); m["ready"] != true {
		t.Errorf("the default port: %v", m)
	}
}

// SoloPi not installed: doctor reports it (exit 2) and never launches it;
// adb-connect refuses with solopi-ai's fields (a setup problem: exit 3).
func TestDoctorNotInstalled(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	if err := r.Dev.Phone.UninstallApp(protocol.DefaultPackage); err != nil {
		t.Fatal(err)
	}
	m := r.Cmd(outcome.ExitFailure, "doctor")
	if m["installed"] != false || m["errorCode"] != fault.CodeSolopiNotInstalled {
		t.Fatalf("doctor: %v", m)
	}
	if err := schematest.NewSet().ValidateBytes("doctor", r.Run("doctor").Stdout); err != nil {
		t.Fatal(err)
	}
	if _, running := r.Dev.Phone.ProcessRunning(protocol.DefaultPackage); running {
		t.Error("SoloPi runs although it is not installed")
	}
	m = r.Cmd(outcome.ExitUsage, "adb-connect")
	if m["errorCode"] != fault.CodeSolopiNotInstalled || m["connected"] != false || m["requiredUserAction"] == nil {
		t.Errorf("adb-connect: %v", m)
	}
}

// An iteration that cannot be measured fails the whole startup-time
// without partial statistics.
func TestStartupTimeUnusableIteration(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	if err := r.Dev.Phone.StallCommand("am", 0); err != nil {
		t.Fatal(err)
	}
	defer r.Dev.Phone.ReleaseCommand("am")
	m := r.Cmd(124, "startup-time", "--target-package", "com.example.counter", "--count", "3", "--launch-timeout", "0.2")
	if m["errorCode"] != "launch_timeout" || m["iteration"] != 1.0 || fmt.Sprint(m["completedSamples"]) != "[]" {
		t.Fatalf("stalled am: %v", m)
	}
}
