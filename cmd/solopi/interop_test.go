//go:build interop

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/internal/realadb"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// volatile are fields whose values legitimately differ between two runs of
// the same scenario: identifiers, clocks and paths derived from them.
var volatile = map[string]bool{
	"requestId": true, "runId": true, "startedAt": true, "finishedAt": true, "durationMs": true,
	"startTime": true, "endTime": true, "gmtCreate": true, "gmtModify": true, "caseFingerprint": true,
	"createdAt": true, "modifiedAt": true, "logFile": true, "screenshotFiles": true, "path": true,
	"sha256": true, "sizeBytes": true, "dir": true, "result": true, "screenshot": true, "logcat": true,
	"manifest": true, "deviceFiles": true, "source": true, "device": true, "serial": true,
	// The step timeline's clock readings.
	"start": true, "end": true, "offsetMs": true, "replayStart": true,
}

var (
	digits = regexp.MustCompile(`[0-9]{10,}`)
	// History ids hash a folder name that carries the replay's end time.
	historyID = regexp.MustCompile(`^(replay|performance)-[0-9a-f]{64}$`)
)

// volatilePaths are fields that are volatile when they hold a path (the
// same key may hold an object elsewhere: case-get's case).
var volatilePaths = map[string]bool{"case": true, "report": true, "record": true, "steps": true}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if _, isPath := val.(string); volatile[k] || volatilePaths[k] && isPath {
				out[k] = "<volatile>"
				continue
			}
			out[k] = normalize(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case string:
		if historyID.MatchString(x) {
			return "<history-id>"
		}
		return digits.ReplaceAllString(x, "<n>")
	}
	return v
}

// scenario runs the same command sequence and returns the normalized JSON
// of each step.
func scenario(t *testing.T, exec func(args ...string) cliRun) []string {
	t.Helper()
	dir := t.TempDir()
	casePath := filepath.Join(dir, "case.json")
	os.WriteFile(casePath, demoCase, 0o600)
	steps := [][]string{
		{"capabilities"},
		{"config-list"},
		{"config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "true"},
		{"doctor"},
		{"case-import", "--file", casePath, "--replace"},
		{"cases"},
		{"case-get", "--case", demoCaseName},
		{"run", "--case", demoCaseName, "--artifacts", filepath.Join(dir, "art")},
		{"status"},
		{"replay-history-list"},
	}
	var out []string
	for _, args := range steps {
		r := exec(args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d %s %s", args, r.code, r.stdout, r.stderr)
		}
		schematest.Validate(t, args[0], r.stdout)
		var v any
		if err := json.Unmarshal(r.stdout, &v); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		b, _ := json.Marshal(normalize(v))
		out = append(out, strings.Join(args[:1], " ")+" "+string(b))
	}
	return out
}

// TestInteropSameJSONInProcessAndRealAdb: the same scenario through the
// in-process front and through Debian's real adb server to the fake adbd
// gives the same JSON (up to identifiers and clocks).
func TestInteropSameJSONInProcessAndRealAdb(t *testing.T) {
	newDev := func() *sim.Device {
		d := sim.New(sim.Options{Serial: "sim-interop", TimeScale: 20})
		t.Cleanup(func() { d.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := d.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		return d
	}
	inproc := newDev()
	a := scenario(t, func(args ...string) cliRun {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"solopi"}, args...), cmdutil.Env{Stdout: &stdout, Stderr: &stderr,
			Getenv:    func(string) string { return "" },
			Transport: func(context.Context) (device.Transport, error) { return inproc, nil }})
		return cliRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), code: code}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	farm, err := sim.StartFarm(ctx, sim.FarmOptions{TimeScale: 20, SerialPrefix: "sim-interop"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { farm.Close() })
	if err := farm.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	srv := realadb.Start(t)
	serial := srv.Connect(t, farm.Adbd(farm.Devices()[0].Serial()).Addr())
	env := []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", srv.Port), "ANDROID_SERIAL=" + serial, "HOME=" + srv.Home}
	b := scenario(t, func(args ...string) cliRun { return runBinary(t, env, args...) })

	if len(a) != len(b) {
		t.Fatalf("%d vs %d steps", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("step %d differs:\nin-process: %s\nreal adb:   %s", i, a[i], b[i])
		}
	}
}

// TestInteropDeviceSelectionThroughRealAdb: several devices without a
// serial, an unknown serial, and a chosen serial, through Debian's adb.
func TestInteropDeviceSelectionThroughRealAdb(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	farm, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: 2, TimeScale: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { farm.Close() })
	srv := realadb.Start(t)
	var serials []string
	for _, d := range farm.Devices() {
		serials = append(serials, srv.Connect(t, farm.Adbd(d.Serial()).Addr()))
	}
	sort.Strings(serials)
	env := []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", srv.Port), "ANDROID_SERIAL=", "HOME=" + srv.Home}
	r := runBinary(t, env, "doctor")
	if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"multiple_devices"`) {
		t.Fatalf("two devices without --serial: exit %d %s", r.code, r.stdout)
	}
	schematest.Validate(t, "doctor", r.stdout)
	// solopi-ai's devices[] are the online serials; the details beside.
	if m := decodeObject(t, r); fmt.Sprint(m["devices"]) != fmt.Sprint([]any{serials[0], serials[1]}) || len(m["deviceDetails"].([]any)) != 2 {
		t.Errorf("devices %v, deviceDetails %v", m["devices"], m["deviceDetails"])
	}
	r = runBinary(t, env, "--serial", "127.0.0.1:1", "doctor")
	if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"device_not_found"`) {
		t.Fatalf("unknown serial: exit %d %s", r.code, r.stdout)
	}
	r = runBinary(t, env, "--serial", serials[0], "capabilities")
	if r.code != 0 {
		t.Fatalf("capabilities on %s: exit %d %s", serials[0], r.code, r.stdout)
	}
	schematest.Validate(t, "capabilities", r.stdout)
}
