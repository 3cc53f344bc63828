package verifycmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// localCLI is a rig for the local verify commands: none may touch a device.
func localCLI(t *testing.T) *cmdtest.CLI {
	c := cmdtest.New(t, Commands, nil)
	c.NoDevice = true
	return c
}

// fixture is the path of solopi-ai's named requirement fixture.
func fixture(name string) string { return filepath.Join(cmdtest.Fixtures(), name+".json") }

func TestVerifyCompileValidateNormalize(t *testing.T) {
	t.Parallel()
	cli := localCLI(t)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	cases := filepath.Join(dir, "cases")
	r := cli.Run("verify-compile", "--file", fixture("counter-outcome-matrix"), "--output", plan, "--cases-dir", cases)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s %s", r.Code, r.Stdout, r.Stderr)
	}
	schematest.Validate(t, "verify-compile", r.Stdout)
	m := r.Object(t)
	if m["planFingerprint"] != "4e3ba3566d14c24313ba28ba61a797540919a9544c36eed07eaf7de4b7fc353f" || m["caseCount"] != 9.0 || m["scenarioCount"] != 5.0 {
		t.Errorf("verify-compile = %v", m)
	}
	files, _ := filepath.Glob(filepath.Join(cases, "verify-*.json"))
	if len(files) != 9 || len(m["cases"].([]any)) != 9 {
		t.Errorf("compiled case files: %d written, %v listed", len(files), m["cases"])
	}

	r = cli.Run("verify-validate", "--plan", plan)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stdout)
	}
	schematest.Validate(t, "verify-validate", r.Stdout)
	m = r.Object(t)
	if m["segmentCount"] != 12.0 || m["checkpointCount"] != 5.0 || m["valid"] != true {
		t.Errorf("verify-validate = %v", m)
	}

	norm := filepath.Join(dir, "normalized.json")
	r = cli.Run("verify-normalize", "--file", fixture("counter-success"), "--output", norm)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stdout)
	}
	schematest.Validate(t, "verify-normalize", r.Stdout)
	// The written file hashes to the plan's sourceFingerprint.
	b, err := os.ReadFile(norm)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := canonjson.Decode(b)
	if fp, _ := canonjson.Fingerprint(v); fp != "b9ef20deba65e49833db45070c6039927e1952b43a9a8ccbf11fc0d305b018e3" {
		t.Errorf("normalized file fingerprint %s", fp)
	}
	if _, ok := r.Object(t)["success"]; ok {
		t.Error("verify-normalize prints no success key")
	}
}

func TestVerifyErrorsExit3(t *testing.T) {
	t.Parallel()
	cli := localCLI(t)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if r := cli.Run("verify-compile", "--file", fixture("counter-success"), "--output", plan); r.Code != 0 {
		t.Fatalf("compile: %s", r.Stdout)
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
		{[]string{"verify-compile", "--file", fixture("counter-success"), "--output", link}, "invalid_output_path"},
	}
	for _, c := range cases {
		r := cli.Run(c.args...)
		if r.Code != 3 {
			t.Errorf("%v: exit %d, want 3: %s", c.args, r.Code, r.Stdout)
			continue
		}
		schematest.Validate(t, "error", r.Stdout)
		if m := r.Object(t); m["errorCode"] != c.code {
			t.Errorf("%v: errorCode %v, want %s", c.args, m["errorCode"], c.code)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.json")); err == nil {
		t.Error("a symbolic link was followed")
	}
}

// An existing --junit file is refused before anything runs, and the error
// names the real remedy: verify-run has no --overwrite.
func TestVerifyRunExistingJUnitNamesTheRemedy(t *testing.T) {
	t.Parallel()
	cli := localCLI(t)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if r := cli.Run("verify-compile", "--file", fixture("counter-success"), "--output", plan); r.Code != 0 {
		t.Fatalf("compile: %s", r.Stdout)
	}
	junit := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(junit, []byte("<testsuites/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli.Run("verify-run", "--plan", plan, "--artifacts", filepath.Join(dir, "out"), "--junit", junit)
	schematest.Validate(t, "error", r.Stdout)
	m := r.Object(t)
	if r.Code != 3 || m["errorCode"] != "output_exists" || strings.Contains(string(r.Stdout), "--overwrite") || !strings.Contains(cmdtest.Str(m, "userActionRequired"), "Remove the file") {
		t.Fatalf("exit %d: %s", r.Code, r.Stdout)
	}
	if b, _ := os.ReadFile(junit); string(b) != "<testsuites/>" {
		t.Fatal("the existing JUnit file was changed")
	}
}
