package replaycmd

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/adbd"
)

// farmCLI is the replay commands over the adb server of a farm of n
// simulated phones, with their own lock and history directories.
func farmCLI(t *testing.T, n int) (*cmdtest.CLI, *sim.Farm) {
	t.Helper()
	f := cmdtest.Farm(t, sim.FarmOptions{Devices: n})
	c := cmdtest.OverAdb(t, Commands, f)
	c.Env["XDG_RUNTIME_DIR"] = t.TempDir()
	c.Env["XDG_DATA_HOME"] = t.TempDir()
	return c, f
}

// caseDir writes the demo case under each name into one directory
// (name.json), in a subdirectory for every other one: --dir walks it.
func caseDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, n := range names {
		d := dir
		if i%2 == 1 {
			d = filepath.Join(dir, "more")
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, n+".json"), []byte(cmdtest.Renamed(n)(cmdtest.DemoCase(t))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Not a case file: ignored.
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("cases"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readJUnit(t *testing.T, path string) artifacts.XMLTestsuites {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// A directory of case files across four phones: every case imported and
// run once on some phone, one JUnit with a testsuite per phone whose test
// names are the case names, the batch object a superset of solopi-ai's;
// run again, the phones already hold the cases (bound, not imported) and
// the history orders the queue.
func TestSuiteDirectoryAcrossFourPhones(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 4)
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("case-%02d", i+1))
	}
	dir := caseDir(t, names...)
	root := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := c.Expect(0, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--artifacts", root, "--junit", junit}, fast...)...)
	if m["success"] != true || m["requestedRuns"] != float64(8) || m["completedRuns"] != float64(8) || len(m["devices"].([]any)) != 4 {
		t.Fatalf("suite: %v", m)
	}
	seen := map[string]bool{}
	for _, r := range m["results"].([]any) {
		r := r.(map[string]any)
		if r["verdict"] != "passed" || r["exitCode"] != float64(0) || len(r["attempts"].([]any)) != 1 || str(r, "device") == "" {
			t.Fatalf("result %v", r)
		}
		seen[str(r, "caseName")] = true
		ev := str(r["attempts"].([]any)[0].(map[string]any), "evidenceDir")
		if filepath.Base(ev) != "attempt-1" {
			t.Fatalf("evidence dir %s", ev)
		}
	}
	if len(seen) != 8 {
		t.Fatalf("cases run: %v", seen)
	}
	doc := readJUnit(t, junit)
	if len(doc.Suites) != 4 || doc.Tests != 8 || doc.Failures != 0 {
		t.Fatalf("junit: %d suites, %d tests, %d failures", len(doc.Suites), doc.Tests, doc.Failures)
	}
	serials := map[string]bool{}
	for _, d := range f.Devices() {
		serials[d.Serial()] = true
	}
	for _, s := range doc.Suites {
		if !serials[s.Name] {
			t.Fatalf("testsuite %q is not a phone", s.Name)
		}
		for _, tc := range s.Cases {
			if !seen[tc.Name] || tc.Time == "" || tc.Time == "0.000" {
				t.Fatalf("testcase %+v", tc)
			}
		}
	}
	batch := str(m, "artifactsRoot")
	for _, f := range []string{"suite.json", "batch.json", "report.html"} {
		b, err := os.ReadFile(filepath.Join(batch, f))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "suite.json":
			schematest.Validate(t, "suite-report", b)
		case "batch.json":
			schematest.Validate(t, "run-batch", b)
		}
	}
	// Again: the phones hold the same cases, nothing is imported; the
	// history now has a row per case.
	m = c.Expect(0, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all"}, fast...)...)
	if m["completedRuns"] != float64(8) || str(m, "history") == "" {
		t.Fatalf("second suite: %v", m)
	}
	h := c.Expect(0, "history", "history")
	if len(h["cases"].([]any)) != 8 {
		t.Fatalf("history: %v", h)
	}
	one := c.Expect(0, "history", "history", "--case", "case-03")
	cs := one["cases"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["runs"] != float64(2) || cs[0].(map[string]any)["passRate"] != float64(1) {
		t.Fatalf("history of case-03: %v", one)
	}
}

// fail-replays count 1 and one retry: the case is flaky with both
// attempts' evidence, exit 0; with --fail-on-flaky exit 2. The JUnit has
// Surefire's flakyFailure.
func TestSuiteFlakyCase(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 1)
	dev := f.Devices()[0]
	file := cmdtest.WriteFile(t, "login-ok.json", []byte(cmdtest.Renamed("login-ok")(cmdtest.DemoCase(t))))
	for _, tc := range []struct {
		flags []string
		exit  int
	}{{nil, 0}, {[]string{"--fail-on-flaky"}, 2}} {
		if err := dev.App.FailReplays("login-ok", 1); err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		junit := filepath.Join(t.TempDir(), "junit.xml")
		args := append([]string{"run-batch", "--file", file, "--retries", "1", "--artifacts", root, "--junit", junit}, tc.flags...)
		m := c.Expect(tc.exit, "run-batch", append(args, fast...)...)
		r := m["results"].([]any)[0].(map[string]any)
		at := r["attempts"].([]any)
		if r["verdict"] != "flaky" || len(at) != 2 || at[0].(map[string]any)["verdict"] != "failed" || at[1].(map[string]any)["verdict"] != "passed" {
			t.Fatalf("flaky case: %v", r)
		}
		counts := m["counts"].(map[string]any)
		if counts["flaky"] != float64(1) || counts["passed"] != float64(0) {
			t.Fatalf("counts %v", counts)
		}
		for i, a := range at {
			ev := str(a.(map[string]any), "evidenceDir")
			if filepath.Base(ev) != fmt.Sprintf("attempt-%d", i+1) {
				t.Fatalf("evidence %s", ev)
			}
			if _, err := os.Stat(filepath.Join(ev, "result.json")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(str(at[0].(map[string]any), "evidenceDir"), "screen.png")); err != nil {
			t.Fatalf("the first failure's screenshot: %v", err)
		}
		doc := readJUnit(t, junit)
		tcase := doc.Suites[0].Cases[0]
		if tcase.Name != "login-ok" || tcase.Failure != nil || len(tcase.FlakyFailures) != 1 {
			t.Fatalf("junit testcase %+v", tcase)
		}
		if tc.exit == 2 && m["errorCode"] != "batch_flaky" {
			t.Fatalf("fail on flaky: %v", m)
		}
	}
}

// run --file: imported the first time, bound the second; a different case
// under the same name is refused before anything runs, unless --replace.
func TestRunCaseFile(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	file := cmdtest.WriteFile(t, "smoke.json", []byte(cmdtest.Renamed("file smoke")(cmdtest.DemoCase(t))))
	m := r.Cmd(0, append([]string{"run", "--file", file}, fast...)...)
	if cf := m["caseFile"].(map[string]any); cf["action"] != "imported" || m["caseName"] != "file smoke" {
		t.Fatalf("first run: %v", m)
	}
	m = r.Cmd(0, append([]string{"run", "--file", file}, fast...)...)
	if cf := m["caseFile"].(map[string]any); cf["action"] != "bound" {
		t.Fatalf("second run: %v", m)
	}
	other := cmdtest.WriteFile(t, "smoke.json", []byte(cmdtest.Renamed("file smoke")(strings.Replace(cmdtest.DemoCase(t), `"assertInputContent": "3"`, `"assertInputContent": "4"`, 1))))
	m = r.Cmd(2, append([]string{"run", "--file", other}, fast...)...)
	if m["errorCode"] != "case_name_conflict" {
		t.Fatalf("conflict: %v", m)
	}
	m = r.Cmd(2, append([]string{"run", "--file", other, "--replace"}, fast...)...)
	if cf := m["caseFile"].(map[string]any); cf["action"] != "replaced" || m["errorCode"] != "replay_failed" {
		t.Fatalf("replaced: %v", m)
	}
	// A suite refuses a name conflict before anything runs, too.
	m = r.Cmd(2, append([]string{"run-batch", "--file", file, "--no-history"}, fast...)...)
	if m["errorCode"] != "case_name_conflict" {
		t.Fatalf("suite conflict: %v", m)
	}
}

// slowCaseFile writes the demo case under name with a SLEEP of ms device
// time first.
func slowCaseFile(t *testing.T, dir, name string, ms int) string {
	t.Helper()
	slow, err := os.ReadFile(cmdtest.SlowCase(t, ms))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".json")
	if err := os.WriteFile(p, []byte(cmdtest.Renamed(name)(string(slow))), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func replayingOn(d *sim.Device) bool { return strings.HasPrefix(d.App.LeaseHolder(), "harness:") }

// A phone that goes offline mid-suite is retired; its case goes back to
// the queue as an infrastructure failure and passes on another phone: no
// case is lost, the suite passes.
func TestSuitePhoneDroppedMidSuiteLosesNoCase(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 3)
	dir := t.TempDir()
	for i := range 6 {
		slowCaseFile(t, dir, fmt.Sprintf("drop-%02d", i+1), 20000)
	}
	victim := f.Devices()[1]
	go func() {
		testwait.Until(t, 60*time.Second, "a replay on "+victim.Serial(), func() bool { return replayingOn(victim) })
		if err := f.Server().SetState(victim.Serial(), adbd.StateOffline); err != nil {
			t.Error(err)
		}
	}()
	m := c.Expect(0, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--no-history", "--unreachable-timeout", "1"}, fast...)...)
	counts := m["counts"].(map[string]any)
	if counts["passed"] != float64(6) || counts["error"] != float64(0) {
		t.Fatalf("counts %v", counts)
	}
	moved := 0
	for _, r := range m["results"].([]any) {
		at := r.(map[string]any)["attempts"].([]any)
		if len(at) > 1 {
			first := at[0].(map[string]any)
			if first["verdict"] != "error" || first["device"] != victim.Serial() {
				t.Fatalf("moved case %v", r)
			}
			moved++
		}
	}
	var retired map[string]any
	for _, d := range m["devices"].([]any) {
		if d := d.(map[string]any); d["serial"] == victim.Serial() {
			retired, _ = d["retired"].(map[string]any)
		}
	}
	if moved != 1 || retired == nil || retired["errorCode"] != "phone_dropped" {
		t.Fatalf("moved %d, retired %v: %v", moved, retired, m["devices"])
	}
}

// Ctrl-C cancels exactly the running replays on every phone and keeps the
// finished results: exit 130, the finished cases passed, the rest not
// passed, no phone left replaying.
func TestSuiteInterruptKeepsFinishedResults(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 2)
	dir := t.TempDir()
	// Two quick cases, then long ones: the interrupt comes once both
	// phones run a long one.
	slowCaseFile(t, dir, "a-quick", 100)
	slowCaseFile(t, dir, "b-quick", 100)
	for i := range 4 {
		slowCaseFile(t, dir, fmt.Sprintf("c-long-%d", i), 3600000)
	}
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		testwait.Until(t, 60*time.Second, "both phones replaying a long case", func() bool {
			ds, _ := filepath.Glob(filepath.Join(root, "*", "?-quick", "attempt-1", artifacts.ManifestName))
			return len(ds) == 2 && replayingOn(f.Devices()[0]) && replayingOn(f.Devices()[1])
		})
		cancel()
	}()
	m := c.ExpectCtx(ctx, 130, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--no-history", "--artifacts", root}, fast...)...)
	if m["errorCode"] != "batch_interrupted" {
		t.Fatalf("interrupt: %v", m)
	}
	passed := map[string]bool{}
	for _, r := range m["results"].([]any) {
		r := r.(map[string]any)
		if r["verdict"] == "passed" {
			passed[str(r, "caseName")] = true
		}
	}
	if !passed["a-quick"] || !passed["b-quick"] || len(passed) != 2 {
		t.Fatalf("passed %v: %v", passed, m["results"])
	}
	if n := len(m["skipped"].([]any)) + len(m["results"].([]any)); n != 6 {
		t.Fatalf("%d cases accounted for", n)
	}
	for _, d := range f.Devices() {
		if replayingOn(d) {
			t.Fatalf("%s still replays after the interrupt", d.Serial())
		}
	}
}

// A phone belongs to one command at a time: a second one asking for it
// fails at once with device_busy naming the holder, or waits with
// --device-wait; a suite leaves the busy phone out and runs on the others.
func TestDeviceLockAcrossCommands(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 2)
	dir := t.TempDir()
	long := slowCaseFile(t, dir, "long", 3600000)
	quick := slowCaseFile(t, t.TempDir(), "quick", 100)
	first := f.Devices()[0]
	c.Expect(0, "case-import", "--serial", first.Serial(), "case-import", "--file", long)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan map[string]any, 1)
	go func() {
		done <- c.ExpectCtx(ctx, 130, "run", append([]string{"--serial", first.Serial(), "run", "--case", "long"}, fast...)...)
	}()
	testwait.Until(t, 60*time.Second, "the long run", func() bool { return replayingOn(first) })
	m := c.Expect(2, "error", "--serial", first.Serial(), "status")
	holder, _ := m["holder"].(map[string]any)
	if m["errorCode"] != "device_busy" || holder == nil || holder["pid"] != float64(os.Getpid()) || str(holder, "command") == "" {
		t.Fatalf("busy: %v", m)
	}
	// The suite leaves the busy phone out and runs on the other one.
	s := c.Expect(0, "run-batch", append([]string{"run-batch", "--file", quick, "--devices", "all", "--no-history"}, fast...)...)
	var left map[string]any
	for _, d := range s["devices"].([]any) {
		if d := d.(map[string]any); d["serial"] == first.Serial() {
			left, _ = d["leftOut"].(map[string]any)
		}
	}
	if left == nil || left["errorCode"] != "device_busy" || s["results"].([]any)[0].(map[string]any)["device"] != f.Devices()[1].Serial() {
		t.Fatalf("suite beside a busy phone: %v", s)
	}
	// Waiting: the phone is taken once the holder lets go.
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	c.Expect(0, "status", "--serial", first.Serial(), "--device-wait", "60", "status")
	<-done
}

// `solopi history` never creates a history: a missing one is
// history_not_found; bad options are usage errors; it touches no device.
func TestHistoryCommandRefusals(t *testing.T) {
	t.Parallel()
	c := cmdtest.New(t, Commands, nil)
	c.NoDevice = true
	missing := filepath.Join(t.TempDir(), "typo.sqlite")
	if m := c.Expect(3, "error", "history", "--history", missing); m["errorCode"] != "history_not_found" {
		t.Fatalf("missing: %v", m)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the history was created: %v", err)
	}
	if m := c.Expect(3, "error", "history", "--last", "0"); m["errorCode"] != "invalid_option" {
		t.Fatalf("--last 0: %v", m)
	}
	// A suite's bad input is refused before any phone is touched.
	for _, args := range [][]string{
		{"run-batch", "--dir", filepath.Join(t.TempDir(), "none")},
		{"run-batch", "--dir", t.TempDir()},
		{"run-batch", "--case", "a", "--devices", "s1,,s2"},
		{"run-batch", "--case", "a", "--case", "a", "--devices", "s1"},
		{"run-batch", "--case", "a", "--retries", "-1", "--devices", "s1"},
		{"run", "--no-wait", "--case", "a", "--devices", "s1"},
	} {
		if r := c.Run(args...); r.Code != 3 {
			t.Errorf("%v: exit %d %s", args, r.Code, r.Stdout)
		}
	}
	// No case at all is the parser's usage error: nothing on stdout.
	if r := c.Run("run"); r.Code != 3 || len(r.Stdout) != 0 || !strings.Contains(string(r.Stderr), "--case") {
		t.Errorf("run without a case: exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

// --shard-all runs every case on every phone (each result bound to its
// phone); a case no phone holds is an error of the suite, exit 4, not a
// test failure.
func TestSuiteShardAllAndMissingCase(t *testing.T) {
	t.Parallel()
	c, f := farmCLI(t, 2)
	dir := caseDir(t, "matrix-a", "matrix-b")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := c.Expect(0, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--shard-all", "--no-history", "--junit", junit}, fast...)...)
	on := map[string]int{}
	for _, r := range m["results"].([]any) {
		r := r.(map[string]any)
		if r["verdict"] != "passed" {
			t.Fatalf("result %v", r)
		}
		on[str(r, "device")]++
	}
	if len(on) != 2 || on[f.Devices()[0].Serial()] != 2 || on[f.Devices()[1].Serial()] != 2 {
		t.Fatalf("cases per phone %v", on)
	}
	if doc := readJUnit(t, junit); len(doc.Suites) != 2 || doc.Suites[0].Tests != 2 || doc.Suites[1].Tests != 2 {
		t.Fatalf("junit %+v", doc.Suites)
	}
	m = c.Expect(4, "run-batch", append([]string{"run-batch", "--case", "nobody-has-it", "--devices", "all", "--no-history"}, fast...)...)
	r := m["results"].([]any)[0].(map[string]any)
	if m["errorCode"] != "batch_infrastructure_failed" || r["verdict"] != "error" || r["errorCode"] != "case_not_found" {
		t.Fatalf("missing case: %v", m)
	}
}
