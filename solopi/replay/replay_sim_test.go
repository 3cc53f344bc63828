package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// These tests run the replay flows against the simulated device (SoloPi's
// device side as docs/device-protocol.md describes it, reached in-process through
// the same Transport interface adb uses), so the host code is checked
// against the device contract and not only against the scripted fake.

func replaySimDevice(t *testing.T) *device.Device {
	t.Helper()
	dev := sim.New(sim.Options{Serial: "sim-replay", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	s, err := device.OpenSession(context.Background(), dev, device.SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("open session on the simulator: %v", err)
	}
	return s.Device
}

func TestReplaySimImportRunAndArtifacts(t *testing.T) {
	d := replaySimDevice(t)
	ctx := context.Background()
	imp, err := ImportCase(ctx, d, normalizedCase(t, "sim-smoke"), ImportOptions{Timeout: 10 * time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if imp.Cleanup["success"] != true {
		t.Fatalf("cleanup %v", imp.Cleanup)
	}
	dir := filepath.Join(t.TempDir(), "out")
	o := RunOptions{CaseName: "sim-smoke", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond, ArtifactsDir: dir}
	rep := RunReplay(ctx, d, o)
	t.Logf("kind %v code %s state %s", kindOf(rep.Err), rep.ErrorCode, rep.State)
	if kindOf(rep.Err) == fault.Transport || kindOf(rep.Err) == fault.Timeout {
		t.Fatalf("protocol problem against the simulator: %v", rep.Payload)
	}
	if rep.RunID == "" || rep.Status == nil || !rep.Status.Terminal {
		t.Fatalf("no terminal status: %v", rep.Payload)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	t.Logf("artifacts %v", rep.Payload["artifacts"])
}

func replaySimImport(t *testing.T, d *device.Device, name, steps string) {
	t.Helper()
	c, err := casefile.Parse([]byte(`{"caseName":` + devicefake.JSONString(name) + `,"targetAppPackage":"com.example.counter","operationLog":{"steps":` + steps + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCase(context.Background(), d, n, ImportOptions{Timeout: 10 * time.Second, PollInterval: 50 * time.Millisecond}); err != nil {
		t.Fatalf("import %s: %v", name, err)
	}
}

func TestReplaySimFailTimeoutAndDelete(t *testing.T) {
	d := replaySimDevice(t)
	ctx := context.Background()
	replaySimImport(t, d, "sim-fail", `[{"operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/no_such_button"}}]`)
	replaySimImport(t, d, "sim-slow", `[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"600000"}}}]`)

	rep := RunReplay(ctx, d, RunOptions{CaseName: "sim-fail", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond})
	if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != CodeReplayFailed {
		t.Fatalf("fail run: kind %v %v", kindOf(rep.Err), rep.Payload)
	}
	if f := rep.Status.FirstFailure(); f == nil || f.ExceptionStepID == "" {
		t.Fatalf("no exception step: %+v", rep.Status.Results)
	}

	dir := filepath.Join(t.TempDir(), "slow")
	rep = RunReplay(ctx, d, RunOptions{CaseName: "sim-slow", AckTimeout: 10 * time.Second, RunTimeout: time.Second, PollInterval: 100 * time.Millisecond, ArtifactsDir: dir})
	if kindOf(rep.Err) != fault.Timeout || rep.ErrorCode != CodeRunTimeout {
		t.Fatalf("slow run: kind %v %v", kindOf(rep.Err), rep.Payload)
	}
	cx := rep.Payload["cancel"].(map[string]any)
	if cx["sent"] != true || cx["finalState"] != "cancelled" {
		t.Fatalf("the simulator's run was not cancelled: %v", cx)
	}
	st, err := FetchReplayStatus(ctx, d)
	if err != nil || st.RunID != rep.RunID || st.State != "cancelled" {
		t.Fatalf("device status after timeout: %+v %v", st, err)
	}

	out, _, err := DeleteCase(ctx, d, "sim-fail", 10*time.Second, 50*time.Millisecond)
	if err != nil || out["deleted"] != true {
		t.Fatalf("case delete: %v %v", out, err)
	}
}

// TestSimReplayHistory lists, reads and deletes a replay record the
// simulated app saved after a run.
func TestReplaySimReplayHistory(t *testing.T) {
	d := replaySimDevice(t)
	ctx := context.Background()
	replaySimImport(t, d, "sim-hist", devicefake.TwoSteps)
	if rep := RunReplay(ctx, d, RunOptions{CaseName: "sim-hist", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond}); kindOf(rep.Err) != passed {
		t.Fatalf("run: kind %v %v", kindOf(rep.Err), rep.Payload)
	}
	list, err := ListReplayHistory(ctx, d, 10)
	if err != nil {
		t.Fatalf("history list: %v", err)
	}
	recs, _ := list["records"].([]any)
	if len(recs) == 0 {
		t.Fatalf("the simulator saved no replay history record: %v", list)
	}
	id := recs[0].(map[string]any)["id"].(string)
	if _, err := GetReplayHistory(ctx, d, id); err != nil {
		t.Fatalf("history get: %v", err)
	}
	res, err := DeleteReplayHistory(ctx, d, id, 10*time.Second, 50*time.Millisecond)
	if err != nil || !res.Success {
		t.Fatalf("history delete: %+v %v", res, err)
	}
}

// A secret planted in an encrypted ASSERT parameter comes back from the
// device in plain (the failure message, running.log): the run's payload,
// its JUnit case and every evidence file hold only the marker.
func TestReplaySimPlantedSecretStaysOut(t *testing.T) {
	t.Parallel()
	d := replaySimDevice(t)
	ctx := context.Background()
	const secret = `s3cret-"PIN"<4711>`
	enc := func(s string) string { return devicefake.JSONString(paramcrypt.Encrypt(paramcrypt.DefaultSeed, s)) }
	c, err := casefile.Parse([]byte(`{"caseName":"sim-secret","targetAppPackage":"com.example.counter","operationLog":{"steps":[
		{"stepId":"e1","operationMethod":{"actionEnum":"ASSERT","encrypt":true,"operationParam":{"assertMode":` + enc("assert_accurate") + `,"assertInputContent":` + enc(secret) + `}},
		 "operationNode":{"resourceId":"com.example.counter:id/counter_value"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ImportCase(ctx, d, n, ImportOptions{Timeout: 10 * time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	store := SecretsStore{Dir: filepath.Join(t.TempDir(), "cases")}
	id, _ := device.WireObject(imp.Receipt).Integer("caseId")
	if _, err := RecordSecrets(ctx, d, store, n, id); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(ctx, d, RunOptions{CaseName: "sim-secret", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second,
		PollInterval: 100 * time.Millisecond, ArtifactsDir: dir, Secrets: store})
	if kindOf(rep.Err) != fault.Failed || rep.Redaction == nil || rep.Redaction.Basis != RedactionImportRecord {
		t.Fatalf("run: kind %v redaction %+v %v", kindOf(rep.Err), rep.Redaction, rep.Payload)
	}
	payload, _ := json.Marshal(rep.Payload)
	junit, _ := json.Marshal(RunJUnitCase(rep, "sim-secret", 1))
	outputs := map[string][]byte{"payload": payload, "junit": junit}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			outputs[p], _ = os.ReadFile(p)
		}
		return nil
	})
	sawMarker := false
	for name, b := range outputs {
		for _, spelled := range []string{secret, `s3cret-\"PIN\"`, `\u003c4711\u003e`, "PIN"} {
			if bytes.Contains(b, []byte(spelled)) {
				t.Errorf("%s holds the secret (%s)", name, spelled)
			}
		}
		sawMarker = sawMarker || bytes.Contains(b, []byte(redact.Marker))
	}
	if !sawMarker || len(outputs) < 4 {
		t.Fatalf("no marker in %d outputs: the failure did not quote the secret", len(outputs))
	}
}
