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
	"github.com/solopi-dev/solopi/solopi/device"
)

// A secret planted in an encrypted ASSERT parameter comes back from the
// device in plain (the failure message, running.log): the run's payload,
// its JUnit case and every evidence file hold only the marker.
func TestReplaySimPlantedSecretStaysOut(t *testing.T) {
	t.Parallel()
	d := newSimPhone(t).d
	ctx := context.Background()
	const secret = `s3cret-"PIN"<4711>`
	enc := func(s string) string {
		b, _ := json.Marshal(paramcrypt.Encrypt(paramcrypt.DefaultSeed, s))
		return string(b)
	}
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
