package sessioncmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
)

// Bad options are refused before the device is selected.
func TestSessionCommandsRefuseLocallyBeforeTheDevice(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.mp4")
	os.WriteFile(existing, []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "plugin.txt"), []byte("x"), 0o644)
	for _, args := range [][]string{
		{"stress-start", "--cpu-count", "2"},
		{"stress-start", "--memory", "0"},
		{"stress-start", "--memory", "4096"},
		{"screen-record-start", "--resolution", "721x480"},
		{"screen-record-stop", "--session-id", "s", "--output", existing},
		{"screen-record-stop", "--session-id", ""},
		{"perf-stop", "--session-id", "s", "--output", dir},
		{"perf-display-status", "--session-id", "-bad"},
		{"perf-display-stop", "--session-id", "-bad"},
		{"video-analysis-start", "--video-path", "/sdcard/Download/x.mp4", "--action-offset-ms", "1", "--difference-threshold", "0.1"},
		{"video-analysis-start", "--video-path", "/sdcard/solopi/ScreenCaptures/x.mp4", "--action-offset-ms", "1", "--difference-threshold", "2"},
		{"video-analysis-start", "--video-path", "/sdcard/solopi/ScreenCaptures/x.mp4", "--action-offset-ms", "1", "--difference-threshold", "0.5", "--wait", "--no-wait"},
		{"video-analysis-status", "--request-id", "../x"},
		{"plugin-install", "--file", filepath.Join(dir, "plugin.txt")},
		{"plugin-remove", "--id", "plugin-1"},
		{"perf-history-get", "--id", "replay-" + strings.Repeat("a", 64)},
		{"perf-history-delete", "--id", "x"},
		{"perf-history-list", "--limit", "0"},
		{"record-status", "--session-id", "a b"},
		{"record-stop", "--session-id", ""},
		{"record-start", "--name", " ", "--target-package", "com.x.y"},
		{"record-start", "--name", "n", "--target-package", " "},
	} {
		r.Cmd(3, args...)
	}
	// What the parser decides (a required flag or group, a seconds value)
	// is its text on stderr, nothing on stdout.
	for _, args := range [][]string{
		{"record-stop"},
		{"stress-start", "--memory", "16", "--ack-timeout", "0"},
		{"perf-start", "--items", "CPU"},
		{"perf-start", "--global", "--target-package", "com.x.y", "--items", "CPU"},
		{"scan-cancel", "--session-id", "s", "--cancel-timeout", "-1"},
	} {
		if res := r.Run(args...); res.Code != 3 || len(res.Stdout) != 0 || len(res.Stderr) == 0 {
			t.Errorf("%v: exit %d %s", args, res.Code, res.Stdout)
		}
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("refused commands selected the device %d times", n)
	}
}

// A start that times out, or is interrupted, stops the session it started
// and says so (cleanup): the device is left idle.
func TestStartTimeoutAndInterruptCleanUp(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	// The permission dialog holds every start in "starting".
	r.Dev.App.SetPermissionDialogDelay(time.Hour)
	m := r.Cmd(124, "record-start", "--name", "c", "--target-package", "com.example.counter", "--ack-timeout", "0.3", "--poll-interval", "0.02")
	cl := cmdtest.Obj(m, "cleanup")
	if m["phase"] != "record-start" || cl["success"] != true || cl["cancelledBeforeStart"] != true {
		t.Fatalf("record-start timeout: %v", m)
	}
	if st := r.Cmd(0, "record-status", "--session-id", cmdtest.Str(m, "sessionId")); st["state"] != "stopped" {
		t.Fatalf("the recording after the timeout: %v", st)
	}

	m = r.Cmd(124, "stress-start", "--cpu-count", "2", "--cpu-percent", "30", "--memory", "64", "--ack-timeout", "0.3", "--poll-interval", "0.02")
	if cmdtest.Obj(m, "cleanup")["terminalState"] != "stopped" {
		t.Fatalf("stress-start timeout: %v", m)
	}
	if st := r.Cmd(0, "stress-status", "--session-id", cmdtest.Str(m, "sessionId")); st["state"] != "stopped" || st["active"] != false {
		t.Fatalf("the load after the timeout: %v", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		testwait.Until(t, 10*time.Second, "the recording to start", func() bool {
			return strings.Contains(r.Run("record-status").Object(t)["state"].(string), "starting")
		})
		cancel()
	}()
	m = r.ExpectCtx(ctx, 130, "record-start", "record-start", "--name", "c", "--target-package", "com.example.counter", "--poll-interval", "0.02")
	if cmdtest.Obj(m, "cleanup")["success"] != true || m["sessionId"] == nil {
		t.Fatalf("record-start interrupt: %v", m)
	}
}

// perf-analyze is local: nothing is selected; --output is an evidence
// directory of its own (the chart, the analysis, the report).
func TestPerfAnalyzeIsLocal(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	in := t.TempDir()
	os.WriteFile(filepath.Join(in, "CPU_CPU_1_2.csv"), []byte("RecordTime,CPU(%),extra,SimpleTime\n1000,5,,0\n2000,15,,1\n"), 0o644)
	charts := filepath.Join(t.TempDir(), "charts")
	m := r.Cmd(0, "perf-analyze", "--input", in, "--output", charts)
	var names []string
	files, _ := os.ReadDir(charts)
	for _, f := range files {
		names = append(names, f.Name())
	}
	if len(names) != 3 || !slices.Contains(names, "analysis.json") || !slices.Contains(names, "report.html") {
		t.Fatalf("charts: %v", names)
	}
	if m["report"] != filepath.Join(charts, "report.html") {
		t.Fatalf("report %v (%v)", m["report"], m["reportError"])
	}
	r.Cmd(3, "perf-analyze", "--input", in, "--output", charts)
	if m := r.Cmd(3, "perf-analyze", "--input", t.TempDir()); m["errorCode"] != "no_csv_files" {
		t.Fatalf("no CSV: %v", m)
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("perf-analyze selected the device %d times", n)
	}
}

func TestEverySessionCommandHasASchema(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, n := range schemas.Names() {
		have[n] = true
	}
	cmds := Commands(cmdutil.Env{})
	for _, c := range cmds {
		if !have[c.Name] {
			t.Errorf("command %s has no schemas/%s.schema.json", c.Name, c.Name)
		}
	}
	if len(cmds) != 29 {
		t.Errorf("%d session commands, want 29", len(cmds))
	}
}
