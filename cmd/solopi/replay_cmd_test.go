package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// replayCLICall is one in-process invocation of the CLI against a replay fake.
type replayCLICall struct {
	out    []byte
	obj    map[string]any
	code   int
	opened int32
}

// runReplayCLI runs `solopi args...` with the replay commands wired to f through
// a real session bootstrap (pm path, capabilities) over the fake transport.
func runReplayCLI(t *testing.T, ctx context.Context, f *devicefake.Replay, args ...string) *replayCLICall {
	t.Helper()
	call := &replayCLICall{}
	open := func(ctx context.Context) (device.Transport, error) {
		atomic.AddInt32(&call.opened, 1)
		return f, nil
	}
	var stdout, stderr bytes.Buffer
	argv := append([]string{"solopi", "--request-timeout", "2", "--startup-timeout", "1"}, args...)
	call.code = run(ctx, argv, cmdutil.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Transport: open})
	call.out = stdout.Bytes()
	if err := json.Unmarshal(call.out, &call.obj); err != nil {
		t.Fatalf("%v: stdout is not one JSON object (exit %d): %q stderr %s", args, call.code, call.out, stderr.Bytes())
	}
	return call
}

// validate checks the output against the command's schema (handled errors
// against "error" by the helper) and, for objects that carry an errorCode,
// against the command's own schema too when asked.
func (c *replayCLICall) validate(t *testing.T, schema string, alsoCommandSchema bool) {
	t.Helper()
	schemas.Validate(t, schema, c.out)
	if alsoCommandSchema {
		if err := schemas.NewSet().ValidateBytes(schema, c.out); err != nil {
			t.Fatalf("%v\n%s", err, c.out)
		}
	}
}

func replayFastFlags() []string {
	return []string{"--ack-timeout", "2", "--run-timeout", "3", "--poll-interval", "0.05"}
}

func TestCLIRunPassWritesArtifactsJUnitAndSchemas(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("smoke", devicefake.TwoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	c := runReplayCLI(t, context.Background(), f, append([]string{"run", "--case", "smoke", "--artifacts", dir, "--junit", junit}, replayFastFlags()...)...)
	if c.code != 0 || c.obj["success"] != true || c.obj["state"] != "passed" {
		t.Fatalf("exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run", true)
	man, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.NewSet().ValidateBytes("artifacts-manifest", man); err != nil {
		t.Fatal(err)
	}
	result, _ := os.ReadFile(filepath.Join(dir, replay.ArtifactResult))
	if err := schemas.NewSet().ValidateBytes("replay-status", result); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Tests != 1 || doc.Failures != 0 || doc.Suites[0].Cases[0].Classname != "solopi.smoke" {
		t.Fatalf("junit %s: %v", raw, err)
	}
	if c.obj["junit"] != junit {
		t.Fatalf("junit path %v", c.obj["junit"])
	}
	if !f.AutoStart {
		t.Fatal("auto-start was turned off again (solopi-ai leaves it on)")
	}
}

func TestCLIRunFailExit2WithExceptionStep(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("login", devicefake.TwoSteps)
	f.Plan["login"] = devicefake.PlanFail
	junit := filepath.Join(t.TempDir(), "junit.xml")
	c := runReplayCLI(t, context.Background(), f, append([]string{"run", "--case", "login", "--junit", junit}, replayFastFlags()...)...)
	if c.code != 2 || c.obj["errorCode"] != "replay_failed" {
		t.Fatalf("exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run", true)
	res := c.obj["results"].([]any)[0].(map[string]any)
	if res["exceptionStepId"] != "ai-step-002" {
		t.Fatalf("results %v", res)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Failures != 1 || !strings.Contains(doc.Suites[0].Cases[0].Failure.Text, "ai-step-002") {
		t.Fatalf("junit %s: %v", raw, err)
	}
}

func TestCLIRunRefusesArtifactsDirBeforeOpeningDevice(t *testing.T) {
	f := devicefake.NewReplay(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "result.json"), []byte("{}"), 0o644)
	c := runReplayCLI(t, context.Background(), f, "run", "--case", "smoke", "--artifacts", dir)
	if c.code != 3 || c.obj["errorCode"] != artifacts.CodeDirNotEmpty || c.opened != 0 {
		t.Fatalf("exit %d opened %d: %s", c.code, c.opened, c.out)
	}
	c.validate(t, "run", false)
	junit := filepath.Join(t.TempDir(), "j.xml")
	os.WriteFile(junit, nil, 0o644)
	c = runReplayCLI(t, context.Background(), f, "run", "--case", "smoke", "--junit", junit)
	if c.code != 3 || c.obj["errorCode"] != artifacts.CodeOutputExists || c.opened != 0 {
		t.Fatalf("junit exists: exit %d: %s", c.code, c.out)
	}
	c = runReplayCLI(t, context.Background(), f, "run", "--case", "smoke", "--restart-app", "--no-restart-app")
	if c.code != 3 || c.opened != 0 {
		t.Fatalf("conflicting flags: exit %d: %s", c.code, c.out)
	}
}

func TestCLIRunTimeoutAndInterrupt(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("slow", devicefake.TwoSteps)
	f.Plan["slow"] = devicefake.PlanHang
	dir := filepath.Join(t.TempDir(), "t")
	c := runReplayCLI(t, context.Background(), f, "run", "--case", "slow", "--artifacts", dir, "--run-timeout", "0.4", "--poll-interval", "0.05")
	if c.code != 124 || c.obj["errorCode"] != replay.CodeRunTimeout || c.obj["runId"] == nil {
		t.Fatalf("timeout exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run", true)
	if f.CountMutations("type=cancel&runId="+c.obj["runId"].(string)) != 1 {
		t.Fatal("timed-out run not cancelled")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.OnStatus = func(f *devicefake.Replay) {
		if f.Status["state"] == "running" && f.Polls == 2 {
			cancel()
		}
	}
	dir2 := filepath.Join(t.TempDir(), "i")
	c = runReplayCLI(t, ctx, f, "run", "--case", "slow", "--artifacts", dir2, "--poll-interval", "0.05")
	if c.code != 130 || c.obj["runId"] == nil || c.obj["requestId"] == nil {
		t.Fatalf("interrupt exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run", true)
	cx := c.obj["cancel"].(map[string]any)
	if cx["sent"] != true || cx["finalState"] != "cancelled" {
		t.Fatalf("cancel %v", cx)
	}
	if _, err := os.Stat(filepath.Join(dir2, replay.ArtifactScreenshot)); err != nil {
		t.Fatalf("interrupt evidence: %v", err)
	}
}

func TestCLIRunBatchCasesFileJUnitAndPartialOnInterrupt(t *testing.T) {
	f := devicefake.NewReplay(t)
	var lines []string
	for i, plan := range []string{devicefake.PlanPass, devicefake.PlanFail, devicefake.PlanPass, devicefake.PlanHang, devicefake.PlanPass} {
		n := string(rune('a'+i)) + " case"
		f.AddCase(n, devicefake.TwoSteps)
		f.Plan[n] = plan
		lines = append(lines, n)
	}
	cf := filepath.Join(t.TempDir(), "cases.txt")
	os.WriteFile(cf, []byte("# regression\n"+strings.Join(lines, "\n")+"\n\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.OnStatus = func(f *devicefake.Replay) {
		if f.Status["caseName"] == "d case" && f.Status["state"] == "running" && f.Polls == 2 {
			cancel()
		}
	}
	root := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	c := runReplayCLI(t, ctx, f, append([]string{"run-batch", "--cases-file", cf, "--continue-on-failure", "--artifacts", root, "--junit", junit}, replayFastFlags()...)...)
	if c.code != 130 || c.obj["errorCode"] != replay.CodeBatchInterrupted || c.obj["completedRuns"] != float64(4) {
		t.Fatalf("exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run-batch", true)
	// results lists the four runs that ran; the fifth is skipped.
	res := c.obj["results"].([]any)
	skipped := c.obj["skipped"].([]any)
	if len(res) != 4 || len(skipped) != 1 || skipped[0].(map[string]any)["caseName"] != "e case" || c.obj["failedRuns"] != float64(2) {
		t.Fatalf("results %v skipped %v", res, skipped)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Tests != 5 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Fatalf("junit counts %+v", s)
	}
	if _, err := os.Stat(filepath.Join(c.obj["artifactsRoot"].(string), "004-d-case", artifacts.ManifestName)); err != nil {
		t.Fatalf("interrupted sub-run evidence: %v", err)
	}
}

func TestCLIRunRepeat(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("payment smoke", devicefake.TwoSteps)
	root := t.TempDir()
	c := runReplayCLI(t, context.Background(), f, append([]string{"run-repeat", "--case", "payment smoke", "--times", "3", "--artifacts", root}, replayFastFlags()...)...)
	if c.code != 0 || c.obj["success"] != true || c.obj["completedRuns"] != float64(3) {
		t.Fatalf("exit %d: %s", c.code, c.out)
	}
	c.validate(t, "run-repeat", true)
	for _, sub := range []string{"001-payment-smoke", "002-payment-smoke", "003-payment-smoke"} {
		if _, err := os.Stat(filepath.Join(c.obj["artifactsRoot"].(string), sub, replay.ArtifactResult)); err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
	}
	c = runReplayCLI(t, context.Background(), f, "run-repeat", "--case", "x", "--times", "0")
	if c.code != 3 || c.opened != 0 {
		t.Fatalf("times 0: %d %s", c.code, c.out)
	}
}

func TestCLIStatusResultCancel(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("a", devicefake.TwoSteps)
	c := runReplayCLI(t, context.Background(), f, "status")
	if c.code != 0 || c.obj["state"] != "idle" {
		t.Fatalf("status %d %s", c.code, c.out)
	}
	c.validate(t, "status", true)
	run := runReplayCLI(t, context.Background(), f, append([]string{"run", "--case", "a"}, replayFastFlags()...)...)
	runID := run.obj["runId"].(string)
	c = runReplayCLI(t, context.Background(), f, "result", "--run-id", runID)
	if c.code != 0 || c.obj["success"] != true {
		t.Fatalf("result %d %s", c.code, c.out)
	}
	c.validate(t, "result", true)
	c = runReplayCLI(t, context.Background(), f, "result", "--run-id", "other")
	if c.code != 2 || c.obj["errorCode"] != replay.CodeRunIDMismatch || c.obj["latestRun"] == nil {
		t.Fatalf("result mismatch %d %s", c.code, c.out)
	}
	c.validate(t, "result", false)
	// cancel of a run that is no longer active: exit 2, no mutation.
	c = runReplayCLI(t, context.Background(), f, "cancel", "--run-id", runID)
	if c.code != 2 || c.obj["errorCode"] != replay.CodeRunNotActive || f.CountMutations("type=cancel") != 0 {
		t.Fatalf("cancel inactive %d %s", c.code, c.out)
	}
	f.Plan["a"] = devicefake.PlanHang
	nw := runReplayCLI(t, context.Background(), f, append([]string{"run", "--case", "a", "--no-wait"}, replayFastFlags()...)...)
	if nw.code != 0 || nw.obj["state"] != "running" {
		t.Fatalf("no-wait %d %s", nw.code, nw.out)
	}
	nw.validate(t, "run", true)
	c = runReplayCLI(t, context.Background(), f, "cancel", "--run-id", nw.obj["runId"].(string), "--poll-interval", "0.05")
	if c.code != 0 || c.obj["state"] != "cancelled" {
		t.Fatalf("cancel %d %s", c.code, c.out)
	}
	c.validate(t, "cancel", true)
}

const authoringCase = `{
  "caseName": "counter",
  "targetAppPackage": "com.example.counter",
  "operationLog": {"steps": [
    {"operationMethod": {"actionEnum": "SLEEP", "operationParam": {"text": "500"}}},
    {"operationMethod": {"actionEnum": "CLICK", "operationParam": {}}, "operationNode": {"resourceId": "com.example.counter:id/increment_button"}}
  ]}
}`

func TestCLICaseImportGetDelete(t *testing.T) {
	f := devicefake.NewReplay(t)
	file := filepath.Join(t.TempDir(), "counter.json")
	os.WriteFile(file, []byte(authoringCase), 0o644)
	c := runReplayCLI(t, context.Background(), f, "case-import", "--file", file, "--poll-interval", "0.02")
	if c.code != 0 || c.obj["imported"] != true || c.obj["cleanup"].(map[string]any)["success"] != true {
		t.Fatalf("import %d %s", c.code, c.out)
	}
	c.validate(t, "case-import", true)
	c = runReplayCLI(t, context.Background(), f, "case-import", "--file", file, "--poll-interval", "0.02")
	if c.code != 2 || c.obj["errorCode"] != "duplicate_case" || c.obj["cleanup"] == nil || c.obj["requestId"] == nil {
		t.Fatalf("duplicate %d %s", c.code, c.out)
	}
	c.validate(t, "case-import", false)
	c = runReplayCLI(t, context.Background(), f, "case-get", "--case", "counter")
	if c.code != 0 || c.obj["stepCount"] != float64(2) {
		t.Fatalf("get %d %s", c.code, c.out)
	}
	c.validate(t, "case-get", true)
	out := filepath.Join(t.TempDir(), "got.json")
	c = runReplayCLI(t, context.Background(), f, "case-get", "--case", "counter", "--output", out)
	if c.code != 0 || c.obj["output"] != out {
		t.Fatalf("get --output %d %s", c.code, c.out)
	}
	c.validate(t, "case-get", true)
	c = runReplayCLI(t, context.Background(), f, "cases")
	if c.code != 0 || c.obj["count"] != float64(1) {
		t.Fatalf("cases %d %s", c.code, c.out)
	}
	c.validate(t, "cases", true)
	c = runReplayCLI(t, context.Background(), f, "case-delete", "--case", "counter", "--poll-interval", "0.02")
	if c.code != 0 || c.obj["deleted"] != true {
		t.Fatalf("delete %d %s", c.code, c.out)
	}
	c.validate(t, "case-delete", true)
	// A refused case never reaches the device.
	bad := filepath.Join(t.TempDir(), "shell.json")
	os.WriteFile(bad, []byte(`{"caseName":"s","targetAppPackage":"com.example.counter","operationLog":{"steps":[{"operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":"reboot"}}}]}}`), 0o644)
	c = runReplayCLI(t, context.Background(), f, "case-import", "--file", bad)
	if c.code != 3 || c.opened != 0 {
		t.Fatalf("refused import %d %s", c.code, c.out)
	}
	c.validate(t, "case-import", false)
}

func TestCLICaseTemplateValidateAndStepEdits(t *testing.T) {
	f := devicefake.NewReplay(t)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "tpl.json")
	c := runReplayCLI(t, context.Background(), f, "case-template", "--name", "demo", "--target-package", "com.example.counter", "--output", tpl)
	if c.code != 0 || c.opened != 0 {
		t.Fatalf("template %d %s", c.code, c.out)
	}
	c.validate(t, "case-template", true)
	c = runReplayCLI(t, context.Background(), f, "case-validate", "--file", tpl)
	if c.code != 0 || c.obj["valid"] != true || c.obj["stepCount"] != float64(1) {
		t.Fatalf("validate %d %s", c.code, c.out)
	}
	c.validate(t, "case-validate", true)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"caseName":5,"targetAppPackage":"x","operationLog":{"steps":[]}}`), 0o644)
	c = runReplayCLI(t, context.Background(), f, "case-validate", "--file", bad)
	if c.code != 3 || c.obj["errorCode"] != replaycmd.CodeSchemaViolation {
		t.Fatalf("schema %d %s", c.code, c.out)
	}

	step := filepath.Join(dir, "step.json")
	os.WriteFile(step, []byte(`{"operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/ok"}}`), 0o644)
	added := filepath.Join(dir, "added.json")
	c = runReplayCLI(t, context.Background(), f, "case-step-add", "--file", tpl, "--step-file", step, "--output", added)
	if c.code != 0 || c.obj["stepCount"] != float64(2) || c.obj["affectedIndex"] != float64(1) {
		t.Fatalf("add %d %s", c.code, c.out)
	}
	c.validate(t, "case-step-add", true)
	// Output rules: not the source, not an existing file, not a symlink.
	c = runReplayCLI(t, context.Background(), f, "case-step-add", "--file", tpl, "--step-file", step, "--output", tpl, "--overwrite")
	if c.code != 3 || c.obj["errorCode"] != replaycmd.CodeOutputIsSource {
		t.Fatalf("source as output %d %s", c.code, c.out)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(tpl, link)
	c = runReplayCLI(t, context.Background(), f, "case-step-add", "--file", tpl, "--step-file", step, "--output", link, "--overwrite")
	if c.code != 3 {
		t.Fatalf("symlink output %d %s", c.code, c.out)
	}
	c = runReplayCLI(t, context.Background(), f, "case-step-add", "--file", tpl, "--step-file", step, "--output", added)
	if c.code != 3 || c.obj["errorCode"] != artifacts.CodeOutputExists {
		t.Fatalf("existing output %d %s", c.code, c.out)
	}
	steps := map[string][]string{
		"case-step-update": {"--index", "1", "--step-file", step},
		"case-step-move":   {"--from-index", "1", "--to-index", "0"},
		"case-step-copy":   {"--index", "1", "--to-index", "2"},
		"case-step-delete": {"--index", "0"},
	}
	for cmd, extra := range steps {
		out := filepath.Join(dir, cmd+".json")
		c = runReplayCLI(t, context.Background(), f, append([]string{cmd, "--file", added, "--output", out}, extra...)...)
		if c.code != 0 {
			t.Fatalf("%s %d %s", cmd, c.code, c.out)
		}
		c.validate(t, cmd, true)
	}
	c = runReplayCLI(t, context.Background(), f, "case-step-list", "--file", filepath.Join(dir, "case-step-copy.json"))
	if c.code != 0 || c.obj["stepCount"] != float64(3) {
		t.Fatalf("list %d %s", c.code, c.out)
	}
	c.validate(t, "case-step-list", true)
	// The source of an edit is never modified.
	before, _ := os.ReadFile(added)
	runReplayCLI(t, context.Background(), f, "case-step-delete", "--file", added, "--index", "0", "--output", filepath.Join(dir, "d2.json"))
	after, _ := os.ReadFile(added)
	if !bytes.Equal(before, after) {
		t.Fatal("source modified")
	}
}

func TestCLIReplayHistory(t *testing.T) {
	f := devicefake.NewReplay(t)
	id := "replay-" + strings.Repeat("cd", 32)
	f.History[id] = map[string]any{"id": id, "kind": "replay", "caseName": "smoke", "status": "passed", "pathAvailable": true}
	c := runReplayCLI(t, context.Background(), f, "replay-history-list", "--limit", "10")
	if c.code != 0 || c.obj["returned"] != float64(1) {
		t.Fatalf("list %d %s", c.code, c.out)
	}
	c.validate(t, "replay-history-list", true)
	c = runReplayCLI(t, context.Background(), f, "replay-history-get", "--id", id)
	if c.code != 0 || c.obj["id"] != id {
		t.Fatalf("get %d %s", c.code, c.out)
	}
	c.validate(t, "replay-history-get", true)
	c = runReplayCLI(t, context.Background(), f, "replay-history-get", "--id", "../../sdcard")
	if c.code != 3 || c.opened != 0 || c.obj["errorCode"] != replay.CodeInvalidHistoryID {
		t.Fatalf("bad id %d opened %d %s", c.code, c.opened, c.out)
	}
	c = runReplayCLI(t, context.Background(), f, "replay-history-list", "--limit", "501")
	if c.code != 3 || c.opened != 0 {
		t.Fatalf("bad limit %d %s", c.code, c.out)
	}
	f.HistPending = 1
	c = runReplayCLI(t, context.Background(), f, "replay-history-delete", "--id", id, "--poll-interval", "0.02")
	if c.code != 0 || c.obj["state"] != "completed" {
		t.Fatalf("delete %d %s", c.code, c.out)
	}
	c.validate(t, "replay-history-delete", true)
	c = runReplayCLI(t, context.Background(), f, "replay-history-delete", "--id", id, "--poll-interval", "0.02")
	if c.code != 2 || c.obj["errorCode"] != "record_not_found" || c.obj["requestId"] == nil {
		t.Fatalf("delete missing %d %s", c.code, c.out)
	}
	c.validate(t, "replay-history-delete", false)
}

// TestCLIReplayAgainstSimulator runs the authoring → import → run → result
// → delete path of the CLI against the simulated device (SoloPi's device
// side per docs/device-protocol.md), through the same Transport adb uses.
func TestCLIReplayAgainstSimulator(t *testing.T) {
	dev := sim.New(sim.Options{Serial: "sim-cli-replay", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	open := func(ctx context.Context) (device.Transport, error) { return dev, nil }
	cli := func(args ...string) map[string]any {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"solopi"}, args...), cmdutil.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Transport: open})
		var obj map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
			t.Fatalf("%v: %q %s", args, stdout.Bytes(), stderr.Bytes())
		}
		schemas.Validate(t, args[0], stdout.Bytes())
		obj["_exit"] = code
		return obj
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "counter.json")
	os.WriteFile(src, []byte(authoringCase), 0o644)
	if o := cli("case-import", "--file", src, "--poll-interval", "0.05"); o["_exit"] != 0 {
		t.Fatalf("import %v", o)
	}
	out := filepath.Join(dir, "evidence")
	junit := filepath.Join(dir, "junit.xml")
	o := cli("run", "--case", "counter", "--artifacts", out, "--junit", junit, "--poll-interval", "0.2")
	if o["_exit"] != 0 || o["state"] != "passed" {
		t.Fatalf("run %v", o)
	}
	runID := o["runId"].(string)
	if r := cli("result", "--run-id", runID); r["_exit"] != 0 {
		t.Fatalf("result %v", r)
	}
	m, err := os.ReadFile(filepath.Join(out, artifacts.ManifestName))
	if err != nil || !strings.Contains(string(m), runID) {
		t.Fatalf("manifest %s %v", m, err)
	}
	if d := cli("case-delete", "--case", "counter", "--poll-interval", "0.05"); d["_exit"] != 0 {
		t.Fatalf("delete %v", d)
	}
	if g := cli("case-get", "--case", "counter"); g["_exit"] != 2 || g["errorCode"] != "case_not_found" {
		t.Fatalf("get after delete %v", g)
	}
}
