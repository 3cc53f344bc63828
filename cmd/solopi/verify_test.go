package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/schemas"
)

const verifyFixtures = "../../verify/testdata/solopi-ai/"

func decodeRun(t *testing.T, r cliRun) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.stdout, &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return m
}

func TestVerifyCompileValidateNormalize(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	cases := filepath.Join(dir, "cases")
	r := runBinary(t, nil, "verify-compile", "--file", verifyFixtures+"counter-outcome-matrix.json", "--output", plan, "--cases-dir", cases)
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	schemas.Validate(t, "verify-compile", r.stdout)
	m := decodeRun(t, r)
	if m["planFingerprint"] != "4e3ba3566d14c24313ba28ba61a797540919a9544c36eed07eaf7de4b7fc353f" || m["caseCount"] != 9.0 || m["scenarioCount"] != 5.0 {
		t.Errorf("verify-compile = %v", m)
	}
	files, _ := filepath.Glob(filepath.Join(cases, "verify-*.json"))
	if len(files) != 9 || len(m["cases"].([]any)) != 9 {
		t.Errorf("compiled case files: %d written, %v listed", len(files), m["cases"])
	}

	r = runBinary(t, nil, "verify-validate", "--plan", plan)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	schemas.Validate(t, "verify-validate", r.stdout)
	m = decodeRun(t, r)
	if m["segmentCount"] != 12.0 || m["checkpointCount"] != 5.0 || m["valid"] != true {
		t.Errorf("verify-validate = %v", m)
	}

	norm := filepath.Join(dir, "normalized.json")
	r = runBinary(t, nil, "verify-normalize", "--file", verifyFixtures+"counter-success.json", "--output", norm)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	schemas.Validate(t, "verify-normalize", r.stdout)
	// The written file hashes to the plan's sourceFingerprint.
	b, err := os.ReadFile(norm)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := canonjson.Decode(b)
	if fp, _ := canonjson.Fingerprint(v); fp != "b9ef20deba65e49833db45070c6039927e1952b43a9a8ccbf11fc0d305b018e3" {
		t.Errorf("normalized file fingerprint %s", fp)
	}
	if _, ok := decodeRun(t, r)["success"]; ok {
		t.Error("verify-normalize prints no success key")
	}
}

func TestVerifyErrorsExit3(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if r := runBinary(t, nil, "verify-compile", "--file", verifyFixtures+"counter-success.json", "--output", plan); r.code != 0 {
		t.Fatalf("compile: %s", r.stdout)
	}
	b, _ := os.ReadFile(plan)
	tampered := filepath.Join(dir, "tampered.json")
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(b), `"expected": "1"`, `"expected": "2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	badReq := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badReq, []byte(`{"id":"r","title":"t","acceptanceCriteria":["a"],"scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],"steps":[{"id":"x","action":{"type":"shell"}}],"checkpoints":[{"id":"c","afterStep":"x","oracle":{"type":"ui","selector":{"text":"a"},"expected":"a"}}],"targetAppPackage":"p"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.json"), link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code string
	}{
		{[]string{"verify-validate", "--plan", tampered}, "fingerprint_mismatch"},
		{[]string{"verify-validate", "--plan", filepath.Join(dir, "missing.json")}, "file_unreadable"},
		{[]string{"verify-compile", "--file", badReq, "--output", filepath.Join(dir, "p2.json")}, "unsupported_action"},
		{[]string{"verify-normalize", "--file", plan}, "unsupported_schema"},
		{[]string{"verify-compile", "--file", verifyFixtures + "counter-success.json", "--output", link}, "invalid_output_path"},
	}
	for _, c := range cases {
		r := runBinary(t, nil, c.args...)
		if r.code != 3 {
			t.Errorf("%v: exit %d, want 3: %s", c.args, r.code, r.stdout)
			continue
		}
		schemas.Validate(t, "error", r.stdout)
		if m := decodeRun(t, r); m["errorCode"] != c.code {
			t.Errorf("%v: errorCode %v, want %s", c.args, m["errorCode"], c.code)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.json")); err == nil {
		t.Error("a symbolic link was followed")
	}
}
