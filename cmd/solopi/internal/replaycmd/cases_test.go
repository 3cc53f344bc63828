package replaycmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

const authoringCase = `{
  "caseName": "counter",
  "targetAppPackage": "com.example.counter",
  "operationLog": {"steps": [
    {"operationMethod": {"actionEnum": "SLEEP", "operationParam": {"text": "500"}}},
    {"operationMethod": {"actionEnum": "CLICK", "operationParam": {}}, "operationNode": {"resourceId": "com.example.counter:id/increment_button"}}
  ]}
}`

// The authoring → import → get → list → run → delete path against the
// simulated device.
func TestCaseImportGetListDelete(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	file := cmdtest.WriteFile(t, "counter.json", []byte(authoringCase))
	m := r.Cmd(0, "case-import", "--file", file, "--poll-interval", "0.05")
	if m["imported"] != true || cmdtest.Obj(m, "cleanup")["success"] != true || cmdtest.Obj(m, "redaction")["record"] == nil {
		t.Fatalf("import: %v", m)
	}
	m = r.Cmd(2, "case-import", "--file", file, "--poll-interval", "0.05")
	if m["errorCode"] != "duplicate_case" || m["cleanup"] == nil || m["requestId"] == nil || m["caseName"] != "counter" {
		t.Fatalf("duplicate: %v", m)
	}
	m = r.Cmd(0, "case-get", "--case", "counter")
	if m["stepCount"] != float64(2) || m["caseFingerprint"] == nil {
		t.Fatalf("get: %v", m)
	}
	out := filepath.Join(t.TempDir(), "got.json")
	if m = r.Cmd(0, "case-get", "--case", "counter", "--output", out); m["output"] != out || m["outputReplaced"] != false {
		t.Fatalf("get --output: %v", m)
	}
	if m = r.Cmd(0, "cases"); m["count"] != float64(1) {
		t.Fatalf("cases: %v", m)
	}
	run := r.Cmd(0, append([]string{"run", "--case", "counter", "--artifacts", filepath.Join(t.TempDir(), "ev")}, fast...)...)
	r.Cmd(0, "result", "--run-id", cmdtest.Str(run, "runId"))
	if m = r.Cmd(0, "case-delete", "--case", "counter", "--poll-interval", "0.05"); m["deleted"] != true {
		t.Fatalf("delete: %v", m)
	}
	if m = r.Cmd(2, "case-get", "--case", "counter"); m["errorCode"] != "case_not_found" {
		t.Fatalf("get after delete: %v", m)
	}
	if m = r.Cmd(2, "case-delete", "--case", "counter", "--poll-interval", "0.05"); m["requestId"] == nil || m["caseName"] != "counter" {
		t.Fatalf("delete of a missing case: %v", m)
	}
	// A refused case never reaches the device.
	before := r.Selections()
	bad := cmdtest.WriteFile(t, "shell.json", []byte(`{"caseName":"s","targetAppPackage":"com.example.counter","operationLog":{"steps":[{"operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":"reboot"}}}]}}`))
	r.Cmd(3, "case-import", "--file", bad)
	r.Cmd(3, "case-get", "--case", "")
	if r.Selections() != before {
		t.Fatal("a refused command selected the device")
	}
}

func TestCaseTemplateValidateAndStepEdits(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	tpl := filepath.Join(dir, "tpl.json")
	r.Cmd(0, "case-template", "--name", "demo", "--target-package", "com.example.counter", "--output", tpl)
	if m := r.Cmd(0, "case-template", "--name", "demo", "--target-package", "com.example.counter"); cmdtest.Obj(m, "case")["caseName"] != "demo" {
		t.Fatalf("template to stdout: %v", m)
	}
	if m := r.Cmd(3, "case-template", "--name", "demo", "--target-package", "not a package"); m["errorCode"] == nil {
		t.Fatalf("bad package: %v", m)
	}
	m := r.Cmd(0, "case-validate", "--file", tpl)
	if m["valid"] != true || m["stepCount"] != float64(1) {
		t.Fatalf("validate: %v", m)
	}
	params := cmdtest.WriteFile(t, "params.json", []byte(`{"mode":"UNION","paramList":[{"user":"alice"},{"user":"bob"}]}`))
	if m := r.Cmd(0, "case-validate", "--file", tpl, "--running-params-file", params); m["runningParams"] == nil {
		t.Fatalf("running params: %v", m)
	}
	r.Cmd(3, "case-validate", "--file", tpl, "--running-params-file", params, "--clear-running-params")
	r.Cmd(0, "case-validate", "--file", tpl, "--clear-running-params")
	bad := cmdtest.WriteFile(t, "bad.json", []byte(`{"caseName":5,"targetAppPackage":"x","operationLog":{"steps":[]}}`))
	if m := r.Cmd(3, "case-validate", "--file", bad); m["errorCode"] != fault.CodeCaseSchemaViolation {
		t.Fatalf("schema: %v", m)
	}

	step := cmdtest.WriteFile(t, "step.json", []byte(`{"operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/ok"}}`))
	added := filepath.Join(dir, "added.json")
	m = r.Cmd(0, "case-step-add", "--file", tpl, "--step-file", step, "--output", added)
	if m["stepCount"] != float64(2) || m["affectedIndex"] != float64(1) {
		t.Fatalf("add: %v", m)
	}
	// Output rules: not the source, not an existing file, not a symlink.
	if m := r.Cmd(3, "case-step-add", "--file", tpl, "--step-file", step, "--output", tpl, "--overwrite"); m["errorCode"] != fault.CodeOutputIsSource {
		t.Fatalf("source as output: %v", m)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(tpl, link)
	r.Cmd(3, "case-step-add", "--file", tpl, "--step-file", step, "--output", link, "--overwrite")
	if m := r.Cmd(3, "case-step-add", "--file", tpl, "--step-file", step, "--output", added); m["errorCode"] != fault.CodeOutputExists {
		t.Fatalf("existing output: %v", m)
	}
	for _, c := range [][]string{
		{"case-step-update", "--index", "1", "--step-file", step},
		{"case-step-move", "--from-index", "1", "--to-index", "0"},
		{"case-step-copy", "--index", "1", "--to-index", "2"},
		{"case-step-delete", "--index", "0"},
		{"case-step-add", "--step-file", step, "--at", "0"},
	} {
		r.Cmd(0, append([]string{c[0], "--file", added, "--output", filepath.Join(dir, c[0]+".json")}, c[1:]...)...)
	}
	if m := r.Cmd(0, "case-step-list", "--file", filepath.Join(dir, "case-step-copy.json")); m["stepCount"] != float64(3) {
		t.Fatalf("list: %v", m)
	}
	if m := r.Cmd(0, "case-step-list", "--file", added, "--index", "1"); len(m["steps"].([]any)) != 1 {
		t.Fatalf("list --index: %v", m)
	}
	for _, idx := range []string{"-1", "9"} {
		if m := r.Cmd(3, "case-step-list", "--file", added, "--index", idx); m["errorCode"] != "step_index_out_of_range" {
			t.Fatalf("list --index %s: %v", idx, m)
		}
	}
	// The source of an edit is never modified.
	before, _ := os.ReadFile(added)
	r.Cmd(0, "case-step-delete", "--file", added, "--index", "0", "--output", filepath.Join(dir, "d2.json"))
	if after, _ := os.ReadFile(added); !bytes.Equal(before, after) {
		t.Fatal("source modified")
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("local case commands selected the device %d times", n)
	}
}

// A negative step index and broken case JSON are local input errors (exit
// 3) with stable codes, never a silent append or a guessed meaning.
func TestCaseFileInputErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	file := cmdtest.WriteCase(t, nil)
	step := cmdtest.WriteFile(t, "step.json", []byte(`{"operationMethod":{"actionEnum":"BACK"}}`))
	out := filepath.Join(t.TempDir(), "new.json")
	for _, at := range []string{"-1", "-7"} {
		if m := r.Cmd(3, "case-step-add", "--file", file, "--step-file", step, "--output", out, "--at", at); m["errorCode"] != "step_index_out_of_range" {
			t.Errorf("--at %s: %v", at, m)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused step-add wrote its output")
	}
	if m := r.Cmd(0, "case-step-add", "--file", file, "--step-file", step, "--output", out); cmdtest.Num(m, "affectedIndex") != 7 {
		t.Errorf("append without --at: %v", m)
	}
	// Latin-1 in a case name: refused with the byte offset, by every
	// command that reads a case file (before any device contact).
	latin1 := cmdtest.WriteFile(t, "latin1.json", []byte(strings.Replace(cmdtest.DemoCase(t), `"`+demo+`"`, "\"caf\xe9\"", 1)))
	for _, args := range [][]string{{"case-validate", "--file", latin1}, {"case-import", "--file", latin1, "--replace"}} {
		if m := r.Cmd(3, args...); m["errorCode"] != "invalid_utf8" || m["offset"] == nil {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	dup := cmdtest.WriteFile(t, "dup.json", []byte(strings.Replace(cmdtest.DemoCase(t), `"priority": 1,`, `"priority": 1, "priority": 2,`, 1)))
	for _, args := range [][]string{{"case-validate", "--file", dup}, {"case-import", "--file", dup, "--replace"}, {"case-step-list", "--file", dup}} {
		if m := r.Cmd(3, args...); m["errorCode"] != "duplicate_key" || m["key"] != "priority" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	for _, args := range [][]string{{"case-validate", "--file", "/nonexistent.json"}, {"case-step-add", "--file", file, "--step-file", "/nonexistent", "--output", filepath.Join(t.TempDir(), "x.json")}} {
		if m := r.Cmd(3, args...); m["errorCode"] != "case_file_unreadable" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	// Nothing reached the device: the case list is still empty.
	if m := r.Cmd(0, "cases"); len(m["cases"].([]any)) != 0 {
		t.Errorf("a refused import reached the device: %v", m)
	}
}
