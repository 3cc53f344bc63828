package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/fault"
)

// secretCase is a case file whose author marked two steps encrypted: one
// stored as SoloPi ciphertext (the default key is public, so that is a
// secret too), one in plain; a third step is plain and stays visible.
func secretCase(t *testing.T, dir string) (path string, hidden []string, visible string) {
	t.Helper()
	cipher := paramcrypt.Encrypt(paramcrypt.DefaultSeed, "cipher-secret-4711")
	path = writeJSON(t, dir, "secret.json", map[string]any{"caseName": "secret", "targetAppPackage": "com.example.counter",
		"operationLog": map[string]any{"steps": []any{
			map[string]any{"stepId": "a", "operationMethod": map[string]any{"actionEnum": "INPUT", "encrypt": true,
				"operationParam": map[string]any{"text": "plain-secret-0815"}}, "operationNode": map[string]any{"resourceId": "x:id/y"}},
			map[string]any{"stepId": "b", "operationMethod": map[string]any{"actionEnum": "SLEEP", "encrypt": true,
				"operationParam": map[string]any{"text": cipher}}, "operationNode": nil},
			map[string]any{"stepId": "c", "operationMethod": map[string]any{"actionEnum": "SCREENSHOT", "encrypt": false,
				"operationParam": map[string]any{"text": "visible-name"}}},
		}}})
	return path, []string{"plain-secret-0815", cipher}, "visible-name"
}

func assertHidden(t *testing.T, what string, v any, hidden []string, visible string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range hidden {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s prints the secret %q: %s", what, s, b)
		}
	}
	if visible != "" && !bytes.Contains(b, []byte(visible)) {
		t.Errorf("%s lost the plain value %q: %s", what, visible, b)
	}
}

// Nothing the local case commands print holds a value marked encrypted;
// the files they write hold every value.
func TestLocalCaseOutputsHideSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, hidden, visible := secretCase(t, dir)

	v, err := ValidateCaseFile(CaseValidateOptions{File: src})
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := v.Emit("")
	assertHidden(t, "case-validate", stdout, hidden, visible)
	out := filepath.Join(dir, "validated.json")
	if _, err := v.Emit(out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte(hidden[0])) {
		t.Errorf("the case-validate --output file lost the values:\n%s", b)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("a file with secrets is %v", fi.Mode())
	}

	list, err := CaseStepList(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertHidden(t, "case-step-list", list, hidden, visible)

	edited := filepath.Join(dir, "edited.json")
	res, err := CaseStepEdit(src, edited, false, false, func(c *casefile.Case, o casefile.EditOptions) (*casefile.EditResult, error) {
		return casefile.Copy(c, 0, 1, o)
	})
	if err != nil {
		t.Fatal(err)
	}
	assertHidden(t, "case-step-copy", res, hidden, "")
	if b, _ := os.ReadFile(edited); !bytes.Contains(b, []byte(hidden[0])) {
		t.Errorf("the edited file lost the values:\n%s", b)
	}

	// A message about a value of an encrypted step does not quote it.
	bad := writeJSON(t, dir, "bad.json", map[string]any{"caseName": "bad", "targetAppPackage": "com.example.counter",
		"operationLog": map[string]any{"steps": []any{
			map[string]any{"operationMethod": map[string]any{"actionEnum": "startRecordScreen", "encrypt": true, "operationParam": map[string]any{
				"resolution": "secret-resolution-42", "INTENT_VIDEO_BITRATE": "1", "INTENT_FRAME_RATE": "1", "INTENT_EXCEPT_DIFF": "1"}}},
			map[string]any{"operationMethod": map[string]any{"actionEnum": "stopRecordScreen"}}}}})
	_, err = ValidateCaseFile(CaseValidateOptions{File: bad})
	if fault.CodeOf(err) != fault.CodeInvalidProviderParams {
		t.Fatalf("bad resolution: %v", err)
	}
	assertHidden(t, "the validation error", fault.From(err).Fields(), []string{"secret-resolution-42"}, "")
}

// null is a value: solopi-ai's template and the files and outputs of the
// case commands keep "operationNode": null, and runningParams.mode is null
// when none are configured.
func TestNullsAreKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tpl, err := CaseTemplate("t", "com.example.counter", "")
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"template file": tpl.File, "template case": mustJSON(t, tpl.Case)} {
		if !bytes.Contains(b, []byte(`"operationNode": null`)) && !bytes.Contains(b, []byte(`"operationNode":null`)) {
			t.Errorf("%s lost operationNode null:\n%s", what, b)
		}
	}
	src := filepath.Join(dir, "tpl.json")
	if err := os.WriteFile(src, tpl.File, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := ValidateCaseFile(CaseValidateOptions{File: src})
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := v.Emit("")
	b := mustJSON(t, stdout)
	if !bytes.Contains(b, []byte(`"mode":null`)) || !strings.Contains(stdout.(caseValidateResult).Case.(map[string]any)["operationLog"].(string), `"operationNode":null`) {
		t.Errorf("case-validate: %s", b)
	}
	list, err := CaseStepList(src, nil)
	if err != nil || !bytes.Contains(mustJSON(t, list), []byte(`"operationNode":null`)) {
		t.Errorf("case-step-list: %s %v", mustJSON(t, list), err)
	}
	out := filepath.Join(dir, "copy.json")
	if _, err := CaseStepEdit(src, out, false, false, func(c *casefile.Case, o casefile.EditOptions) (*casefile.EditResult, error) {
		return casefile.Copy(c, 0, 1, o)
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); bytes.Count(b, []byte(`"operationNode": null`)) != 2 {
		t.Errorf("case-step-copy file:\n%s", b)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Data after the case document (`{…} junk`, `{…}}`) is refused by every
// local case command's reading of the file, exit 3, with where it starts.
func TestTrailingDataRefusedByTheCommandPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tpl, _ := CaseTemplate("t", "com.example.counter", "")
	doc := bytes.TrimSpace(tpl.File)
	for i, tail := range []string{" junk", "}", "\n{}", "]"} {
		path := filepath.Join(dir, "t"+string(rune('a'+i))+".json")
		if err := os.WriteFile(path, append(append([]byte{}, doc...), tail...), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ValidateCaseFile(CaseValidateOptions{File: path})
		e := fault.From(err)
		if e.Code != fault.CodeInvalidCaseJSON || e.Kind != fault.Invalid || e.Details["file"] != path {
			t.Errorf("%q: %v %v", tail, err, e.Details)
		}
		if _, ok := e.Details["line"].(int); !ok {
			t.Errorf("%q: no line: %v", tail, e.Details)
		}
		if _, err := PrepareImport(path, false); fault.CodeOf(err) != fault.CodeInvalidCaseJSON {
			t.Errorf("import %q: %v", tail, err)
		}
	}
}
