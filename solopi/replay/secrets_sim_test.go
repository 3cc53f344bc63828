package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	if _, err := recordSecrets(ctx, d, store, n, id, casefile.EncryptedParams(n)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(ctx, d, RunOptions{CaseName: "sim-secret", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second,
		PollInterval: 100 * time.Millisecond, ArtifactsDir: dir, Secrets: store})
	if kindOf(rep.Err) != fault.Failed || rep.Redaction == nil || rep.Redaction.Basis != redactionImportRecord {
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

// The replay history of a failed run quotes the encrypted value it
// compared: replay-history-list and -get print it only as the marker,
// also once the case is gone (its texts are withheld then).
func TestReplayHistoryHidesSecrets(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	dir := t.TempDir()
	store := SecretsStore{Dir: filepath.Join(dir, "cases")}
	const secret = "history-secret-9931"
	src := writeJSON(t, dir, "c.json", map[string]any{"caseName": "hist-secret", "targetAppPackage": "com.example.counter",
		"operationLog": map[string]any{"steps": []any{map[string]any{"stepId": "e1",
			"operationMethod": map[string]any{"actionEnum": "ASSERT", "encrypt": true,
				"operationParam": map[string]any{"assertMode": paramcrypt.Encrypt(paramcrypt.DefaultSeed, "assert_accurate"), "assertInputContent": paramcrypt.Encrypt(paramcrypt.DefaultSeed, secret)}},
			"operationNode": map[string]any{"resourceId": "com.example.counter:id/counter_value"}}}}})
	importFile(t, p, store, src, false)
	if rep := RunReplay(ctx, p.d, RunOptions{CaseName: "hist-secret", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second,
		PollInterval: 20 * time.Millisecond, Secrets: store}); kindOf(rep.Err) != fault.Failed {
		t.Fatalf("run: %v", rep.Err)
	}
	check := func(when string) map[string]any {
		list, err := ListReplayHistory(ctx, p.d, 100, store)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := list["records"].([]any)
		if len(recs) != 1 {
			t.Fatalf("records %v", list)
		}
		rec := recs[0].(map[string]any)
		got, err := GetReplayHistory(ctx, p.d, rec["id"].(string), store)
		if err != nil {
			t.Fatal(err)
		}
		for what, v := range map[string]any{"list": list, "get": got} {
			b, _ := json.Marshal(v)
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s, %s prints the secret: %s", when, what, b)
			}
			if !bytes.Contains(b, []byte(redact.Marker)) {
				t.Errorf("%s, %s: the failure quotes nothing: %s", when, what, b)
			}
		}
		return rec
	}
	if rec := check("with the case"); !strings.Contains(rec["exceptionMessage"].(string), "Assert failed") {
		t.Errorf("the message itself was lost: %v", rec)
	}
	if _, _, err := DeleteCase(ctx, p.d, "hist-secret", 10*time.Second, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if rec := check("after the case was deleted"); rec["exceptionMessage"] != redact.Marker {
		t.Errorf("the text of a case whose secrets are unknown is shown: %v", rec)
	}
}
