package replaycmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
)

// localCLI is the rig of the local case commands: a device selection fails
// the test.
func localCLI(t *testing.T) *cmdtest.CLI {
	c := cmdtest.New(t, Commands, nil)
	c.NoDevice = true
	return c
}

// caseSteps decodes the steps of the case file at path.
func caseSteps(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		OperationLog struct {
			Steps []map[string]any `json:"steps"`
		} `json:"operationLog"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.OperationLog.Steps
}

// withoutPositions are steps without their operationIndex (the position
// that an insertion shifts).
func withoutPositions(steps []map[string]any) []map[string]any {
	out := make([]map[string]any, len(steps))
	for i, st := range steps {
		out[i] = map[string]any{}
		for k, v := range st {
			if k != "operationIndex" {
				out[i][k] = v
			}
		}
	}
	return out
}

// An inline step added and then updated in place: the case file is
// replaced by exactly what --output writes for the same edit, re-validates
// with case-validate, and its other steps keep their meaning.
func TestCaseStepInlineInPlace(t *testing.T) {
	t.Parallel()
	c := localCLI(t)
	dir := t.TempDir()
	file := cmdtest.WriteCase(t, nil)
	// The authoring form of the untouched case: the reference for the
	// steps no edit touches.
	ref := filepath.Join(dir, "ref.json")
	c.Cmd(0, "case-step-move", "--file", file, "--from-index", "0", "--to-index", "0", "--output", ref)
	before := withoutPositions(caseSteps(t, ref))

	back := `{"stepId":"go-back","operationMethod":{"actionEnum":"BACK"}}`
	viaOutput := filepath.Join(dir, "added.json")
	c.Cmd(0, "case-step-add", "--file", file, "--step", back, "--at", "1", "--output", viaOutput)
	m := c.Cmd(0, "case-step-add", "--file", file, "--step", back, "--at", "1", "--in-place")
	abs, _ := filepath.Abs(file)
	if m["inPlace"] != true || m["output"] != abs || m["source"] != abs || cmdtest.Num(m, "stepCount") != float64(len(before)+1) || cmdtest.Num(m, "affectedIndex") != 1 {
		t.Fatalf("add --in-place: %v", m)
	}
	got, _ := os.ReadFile(file)
	want, _ := os.ReadFile(viaOutput)
	if !bytes.Equal(got, want) {
		t.Fatalf("in place and --output differ:\n%s\n%s", got, want)
	}

	sleep := `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"250"}}}`
	m = c.Cmd(0, "case-step-update", "--file", file, "--index", "1", "--step", sleep, "--in-place")
	if m["inPlace"] != true || cmdtest.Str(cmdtest.Obj(m, "step"), "stepId") != "go-back" {
		t.Fatalf("update --in-place (the stepId is inherited): %v", m)
	}
	c.Cmd(0, "case-validate", "--file", file)
	after := withoutPositions(caseSteps(t, file))
	if len(after) != len(before)+1 {
		t.Fatalf("%d steps, want %d", len(after), len(before)+1)
	}
	if !reflect.DeepEqual(after[0], before[0]) || !reflect.DeepEqual(after[2:], before[1:]) {
		t.Fatalf("the other steps changed:\n%v\n%v", after, before)
	}
	edited, _ := json.Marshal(after[1])
	if !strings.Contains(string(edited), `"SLEEP"`) || !strings.Contains(string(edited), `"250"`) {
		t.Fatalf("edited step: %s", edited)
	}

	// Every other edit that writes a case takes --in-place.
	for _, args := range [][]string{
		{"case-step-copy", "--index", "1", "--to-index", "2"},
		{"case-step-move", "--from-index", "2", "--to-index", "0"},
		{"case-step-delete", "--index", "0"},
	} {
		if m := c.Cmd(0, append(append([]string{args[0], "--file", file}, args[1:]...), "--in-place")...); m["inPlace"] != true {
			t.Fatalf("%s --in-place: %v", args[0], m)
		}
		c.Cmd(0, "case-validate", "--file", file)
	}
	if got := withoutPositions(caseSteps(t, file)); !reflect.DeepEqual(got, after) {
		t.Fatalf("copy, move and delete did not come back to the same case:\n%v\n%v", got, after)
	}
	// No temporary file is left beside the case.
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Fatalf("left beside the case: %v", ents)
	}
}

// A refused in-place edit leaves the case file as it was, byte for byte;
// an inline step has a step file's checks and error fields, naming the
// flag instead of a file.
func TestCaseStepInPlaceRefused(t *testing.T) {
	t.Parallel()
	c := localCLI(t)
	file := cmdtest.WriteCase(t, nil)
	orig, _ := os.ReadFile(file)
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(file); !bytes.Equal(b, orig) {
			t.Fatalf("%s changed the case file", what)
		}
	}
	for _, tc := range []struct {
		name, code string
		args       []string
		fields     map[string]any
	}{
		{"bad JSON", fault.CodeInvalidStep, []string{"case-step-add", "--step", `{"operationMethod":`}, map[string]any{"flag": "--step", "line": float64(1), "column": float64(20)}},
		{"trailing data", fault.CodeInvalidStep, []string{"case-step-add", "--step", `{} {}`}, map[string]any{"flag": "--step"}},
		{"empty", fault.CodeInvalidStep, []string{"case-step-add", "--step", ``}, map[string]any{"flag": "--step"}},
		{"not an object", fault.CodeInvalidStep, []string{"case-step-update", "--index", "0", "--step", `[]`}, map[string]any{"flag": "--step"}},
		{"duplicate key", fault.CodeDuplicateKey, []string{"case-step-add", "--step", `{"stepId":"a","stepId":"b"}`}, map[string]any{"flag": "--step", "key": "stepId", "jsonPath": "$.stepId"}},
		{"wrong type", fault.CodeInvalidStep, []string{"case-step-add", "--step", `{"stepId":5,"operationMethod":{"actionEnum":"BACK"}}`}, map[string]any{"flag": "--step", "field": "stepId"}},
		{"redaction marker", fault.CodeRedactedValue, []string{"case-step-update", "--index", "0", "--step", `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"[redacted]"}}}`}, map[string]any{"jsonPath": "$.operationLog.steps[0].operationMethod.operationParam.text"}},
		{"refused action", fault.CodeRefusedAction, []string{"case-step-add", "--step", `{"operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":"id"}}}`}, nil},
		{"high risk", fault.CodeHighRiskUnconfirmed, []string{"case-step-add", "--step", `{"operationMethod":{"actionEnum":"CLEAR_DATA"}}`}, nil},
		{"index", "step_index_out_of_range", []string{"case-step-update", "--index", "99", "--step", `{"operationMethod":{"actionEnum":"BACK"}}`}, nil},
		{"last step", "", []string{"case-step-delete", "--index", "99"}, nil},
	} {
		args := append(append([]string{tc.args[0], "--file", file}, tc.args[1:]...), "--in-place")
		m := c.Cmd(3, args...)
		if tc.code != "" && m["errorCode"] != tc.code {
			t.Errorf("%s: %v", tc.name, m)
		}
		for k, v := range tc.fields {
			if m[k] != v {
				t.Errorf("%s: %s = %v, want %v (%v)", tc.name, k, m[k], v, m)
			}
		}
		unchanged(tc.name)
	}
	// The same bad step from a file: the same code and position, the file
	// named instead of the flag.
	stepFile := cmdtest.WriteFile(t, "step.json", []byte(`{"operationMethod":`))
	if m := c.Cmd(3, "case-step-add", "--file", file, "--step-file", stepFile, "--in-place"); m["errorCode"] != fault.CodeInvalidStep || m["file"] != stepFile || m["column"] != float64(20) {
		t.Errorf("step file: %v", m)
	}
	// A symbolic link is never replaced (nor followed).
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if m := c.Cmd(3, "case-step-delete", "--file", link, "--index", "0", "--in-place"); m["errorCode"] != fault.CodeInvalidOutputPath {
		t.Errorf("symlink: %v", m)
	}
	unchanged("a symlink")
	if m := c.Cmd(3, "case-step-delete", "--file", filepath.Join(t.TempDir(), "missing.json"), "--index", "0", "--in-place"); m["errorCode"] != fault.CodeCaseFileUnreadable {
		t.Errorf("missing case: %v", m)
	}
}

// --step with --step-file, --in-place with --output, and neither of a
// pair are parser errors: exit 3, a message on stderr, nothing on stdout,
// and the case file untouched.
func TestCaseStepParserRules(t *testing.T) {
	t.Parallel()
	c := localCLI(t)
	file := cmdtest.WriteCase(t, nil)
	orig, _ := os.ReadFile(file)
	step := cmdtest.WriteFile(t, "step.json", []byte(`{"operationMethod":{"actionEnum":"BACK"}}`))
	out := filepath.Join(t.TempDir(), "new.json")
	inline := `{"operationMethod":{"actionEnum":"BACK"}}`
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"--step-file and --step exclude each other", []string{"case-step-add", "--step-file", step, "--step", inline, "--in-place"}},
		{"--step-file and --step exclude each other", []string{"case-step-update", "--index", "0", "--step-file", step, "--step", inline, "--output", out}},
		{"--output and --in-place exclude each other", []string{"case-step-add", "--step", inline, "--output", out, "--in-place"}},
		{"--output and --in-place exclude each other", []string{"case-step-update", "--index", "0", "--step", inline, "--output", out, "--in-place"}},
		{"--output and --in-place exclude each other", []string{"case-step-delete", "--index", "0", "--output", out, "--in-place"}},
		{"--output and --in-place exclude each other", []string{"case-step-move", "--from-index", "0", "--to-index", "1", "--output", out, "--in-place"}},
		{"--output and --in-place exclude each other", []string{"case-step-copy", "--index", "0", "--to-index", "1", "--output", out, "--in-place"}},
		{"one of --step-file or --step is required", []string{"case-step-add", "--in-place"}},
		{"one of --output or --in-place is required", []string{"case-step-delete", "--index", "0"}},
	} {
		args := append([]string{tc.args[0], "--file", file}, tc.args[1:]...)
		res := c.Run(args...)
		if res.Code != 3 || len(res.Stdout) != 0 || !strings.Contains(string(res.Stderr), tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, res.Code, res.Stdout, res.Stderr)
		}
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, orig) {
		t.Error("a refused command line changed the case file")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused command line wrote --output")
	}
}

// An in-place edit never loosens the case file's mode, and a directory
// the edit cannot write to is refused with the file unchanged.
func TestCaseStepInPlaceMode(t *testing.T) {
	t.Parallel()
	c := localCLI(t)
	file := cmdtest.WriteCase(t, nil)
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Cmd(0, "case-step-delete", "--file", file, "--index", "0", "--in-place")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after an in-place edit: %v %v", fi.Mode(), err)
	}
	if os.Geteuid() == 0 {
		return // root writes into any directory
	}
	orig, _ := os.ReadFile(file)
	dir := filepath.Dir(file)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if m := c.Cmd(3, "case-step-delete", "--file", file, "--index", "0", "--in-place"); m["errorCode"] != fault.CodeOutputNotWritable {
		t.Errorf("read-only directory: %v", m)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, orig) {
		t.Error("a refused in-place edit changed the case file")
	}
}
