package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

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
		{"/nonexistent/adb", device.CodeAdbNotFound, outcome.ExitUsage},
		{"/bin/false", device.CodeAdbServerUnreachable, outcome.ExitTransport},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"solopi", "--adb", c.adb, "--adb-server-port", fmt.Sprint(port), "app-status"},
			cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != c.exit {
			t.Fatalf("--adb %s: exit %d stdout %s stderr %s", c.adb, code, out.String(), errb.String())
		}
		schemas.Validate(t, "app-status", out.Bytes())
		if !strings.Contains(out.String(), `"errorCode":"`+c.code+`"`) || !strings.Contains(out.String(), "userActionRequired") {
			t.Fatalf("--adb %s: stdout %s", c.adb, out.String())
		}
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
		code := run(ctx, full, cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
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
// The session commands' fake passes the transport conformance suite:
// everything but its scripted SoloPi is the simulated phone.
func TestSessCLIFakeConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: newSessCLIFake(t), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}

func TestStartupTimeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"startup-time", "--target-package", "com.x", "--interval", "-1"},
		{"startup-time", "--target-package", "com.x", "--iterations", "0"},
		{"startup-time", "--target-package", "com.x", "--mode", "lukewarm"},
		{"startup-time", "--target-package", "com.x", "--launch-timeout", "0"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"solopi", "--adb", "/nonexistent/adb", "--adb-server-port", "1"}, args...),
			cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != outcome.ExitUsage || !strings.Contains(out.String(), `"errorCode":"invalid_option"`) {
			t.Errorf("%v: exit %d %s %s", args, code, out.String(), errb.String())
		}
	}
}
