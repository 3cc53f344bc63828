package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// The export a case-get --output writes imports back as the same case:
// for every action of the catalogue with every parameter it reads (the
// provider actions with theirs), stored encrypted, encrypted in name only,
// plain, unflagged and null, the device's case after case-import --replace
// of the export has the content fingerprint it had before, the secrets
// keep their positions, and nothing printed holds a value marked secret.
func TestExportImportRoundTripEveryParameter(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	dir := t.TempDir()
	store := SecretsStore{Dir: filepath.Join(dir, "cases")}
	steps, secrets := catalogueSteps(t)
	src := writeJSON(t, dir, "source.json", map[string]any{"caseName": "every-param", "targetAppPackage": "com.example.counter",
		"caseDesc": `all of it "quoted" <&>`, "advanceSettings": `{"descriptorMode":"accessibilityMode","version":35}`,
		"operationLog": map[string]any{"steps": steps}})

	before := importFile(t, p, store, src, false)
	if got := contentFingerprint(t, before, true); got != before.Fingerprint {
		t.Fatalf("the recomputed fingerprint %s is not the device's %s", got, before.Fingerprint)
	}
	exp, err := before.Export(false)
	if err != nil {
		t.Fatal(err)
	}
	exportPath := filepath.Join(dir, "export", "e.json") // a parent that does not exist yet
	printed, err := exp.Emit(exportPath)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if fi, err := os.Stat(exportPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", fi, err)
	}
	file, _ := os.ReadFile(exportPath)
	if bytes.Contains(file, []byte(redact.Marker)) {
		t.Fatalf("the export holds the redaction marker:\n%s", file)
	}
	stdout, _ := exp.Emit("")
	for _, out := range []any{printed, stdout} {
		b, _ := json.Marshal(out)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("case-get printed the secret %q", s)
			}
		}
	}

	after := importFile(t, p, store, exportPath, true)
	if after.ID == before.ID {
		t.Fatalf("the export did not replace the case (id %d)", after.ID)
	}
	if a, b := contentFingerprint(t, after, false), contentFingerprint(t, before, false); a != b {
		bs, _ := casefile.SnapshotOperationLog(before.Case.Steps, "")
		as, _ := casefile.SnapshotOperationLog(after.Case.Steps, "")
		t.Fatalf("the re-imported case differs:\nbefore %s\nafter  %s", bs, as)
	}
	rec1, ok1 := store.Load(before.Name, before.Fingerprint)
	rec2, ok2 := store.Load(after.Name, after.Fingerprint)
	if !ok1 || !ok2 || len(rec1.EncryptedParams) == 0 || !sameRefs(rec1.EncryptedParams, rec2.EncryptedParams) {
		t.Fatalf("secret positions before %v, after the re-import %v", rec1, rec2)
	}
	// The values of the steps marked encrypted are the run's secrets.
	_, values := caseSecrets(store, nil, after)
	for _, s := range secrets {
		if !slices.Contains(values, s) {
			t.Errorf("after the re-import %q is no longer a secret", s)
		}
	}
}

// A case with encrypted parameters still passes after its export is
// re-imported, and its run hides them.
func TestExportImportRoundTripRunPasses(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	dir := t.TempDir()
	store := SecretsStore{Dir: filepath.Join(dir, "cases")}
	enc := func(s string) string { return paramcrypt.Encrypt(paramcrypt.DefaultSeed, s) }
	node := func(id string) map[string]any { return map[string]any{"resourceId": "com.example.counter:id/" + id} }
	src := writeJSON(t, dir, "counter.json", map[string]any{"caseName": "counter-secret", "targetAppPackage": "com.example.counter",
		"operationLog": map[string]any{"steps": []any{
			map[string]any{"stepId": "s1", "operationMethod": map[string]any{"actionEnum": "SLEEP", "encrypt": true, "operationParam": map[string]any{"text": enc("100")}}, "operationNode": nil},
			map[string]any{"stepId": "s2", "operationMethod": map[string]any{"actionEnum": "CLICK", "encrypt": true, "operationParam": map[string]any{"localClickPos": enc("0.5,0.5")}}, "operationNode": node("reset_button")},
			map[string]any{"stepId": "s3", "operationMethod": map[string]any{"actionEnum": "CLICK", "encrypt": false, "operationParam": map[string]any{}}, "operationNode": node("increment_button")},
			map[string]any{"stepId": "s4", "operationMethod": map[string]any{"actionEnum": "ASSERT", "encrypt": true,
				"operationParam": map[string]any{"assertMode": enc("assert_accurate"), "assertInputContent": enc("1")}}, "operationNode": node("counter_value")},
			map[string]any{"stepId": "s5", "operationMethod": map[string]any{"actionEnum": "SCREENSHOT", "encrypt": true, "operationParam": map[string]any{"text": enc("after-secret-click")}}},
		}}})
	before := importFile(t, p, store, src, false)
	exp, err := before.Export(false)
	if err != nil {
		t.Fatal(err)
	}
	exportPath := filepath.Join(dir, "e.json")
	if _, err := exp.Emit(exportPath); err != nil {
		t.Fatal(err)
	}
	after := importFile(t, p, store, exportPath, true)
	if contentFingerprint(t, after, false) != contentFingerprint(t, before, false) {
		t.Fatal("the re-imported case differs")
	}
	rep := RunReplay(ctx, p.d, RunOptions{CaseName: "counter-secret", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second,
		PollInterval: 20 * time.Millisecond, Secrets: store, ArtifactsDir: filepath.Join(dir, "run")})
	if kindOf(rep.Err) != passed {
		t.Fatalf("the run of the re-imported export: %v %v", rep.Err, rep.Payload)
	}
	if rep.Redaction == nil || rep.Redaction.Basis != redactionImportRecord || rep.Redaction.Values < 4 {
		t.Fatalf("redaction %+v", rep.Redaction)
	}
}

// A case printed with its values redacted (case-get without --output)
// and saved as a file is refused by case-validate and case-import before
// the device is contacted, naming where the marker is.
func TestRedactedCopyIsRefused(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	dir := t.TempDir()
	store := SecretsStore{Dir: filepath.Join(dir, "cases")}
	src := writeJSON(t, dir, "c.json", map[string]any{"caseName": "copy", "targetAppPackage": "com.example.counter",
		"operationLog": map[string]any{"steps": []any{map[string]any{"stepId": "a", "operationMethod": map[string]any{"actionEnum": "SLEEP", "operationParam": map[string]any{"text": "100"}}}}}})
	dc := importFile(t, p, store, src, false)
	exp, _ := dc.Export(false)
	stdout, _ := exp.Emit("")
	copyPath := writeJSON(t, dir, "copy.json", stdout.(caseGetResult).Case)
	before := p.mutations("case-import")
	if _, err := PrepareImport(copyPath, false); fault.CodeOf(err) != fault.CodeRedactedValue || fault.KindOf(err) != fault.Invalid {
		t.Fatalf("import of a redacted copy: %v", err)
	} else if e := fault.From(err); e.Details["jsonPath"] != "$.operationLog.steps[0].operationMethod.operationParam.text" || e.Details["file"] != copyPath {
		t.Fatalf("details %v", e.Details)
	}
	if _, err := ValidateCaseFile(CaseValidateOptions{File: copyPath}); fault.CodeOf(err) != fault.CodeRedactedValue {
		t.Fatalf("validate of a redacted copy: %v", err)
	}
	if p.mutations("case-import") != before {
		t.Fatal("the device was contacted")
	}
}

// importFile is case-import of a file through the library path, with the
// record of its secrets; it returns the device's case.
func importFile(t *testing.T, p *simPhone, store SecretsStore, path string, replace bool) *deviceCase {
	t.Helper()
	ctx := context.Background()
	prep, err := PrepareImport(path, true)
	if err != nil {
		b, _ := json.Marshal(fault.From(err).Fields())
		t.Fatalf("prepare %s: %s", path, b)
	}
	rep, err := ImportCase(ctx, p.d, prep.Case, ImportOptions{Replace: replace, Timeout: 10 * time.Second, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	if red := RecordImportSecrets(ctx, p.d, store, prep, rep.Receipt); red.Record == "" {
		t.Fatalf("secrets record: %v", red)
	}
	dc, err := GetCase(ctx, p.d, prep.Case.CaseName)
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// contentFingerprint is caseFingerprint over dc's content: with identity
// its id and times (the device's own fingerprint, recomputed), else
// casefile.ContentFingerprint, so two imports of one case compare.
func contentFingerprint(t *testing.T, dc *deviceCase, identity bool) string {
	t.Helper()
	c := dc.Case
	if !identity {
		fp, err := casefile.ContentFingerprint(c, "")
		if err != nil {
			t.Fatal(err)
		}
		return fp
	}
	snap, err := casefile.SnapshotOperationLog(c.Steps, "")
	if err != nil {
		t.Fatal(err)
	}
	prio := int64(c.Priority)
	return casefile.Fingerprint(casefile.FingerprintInput{ID: &dc.ID, CaseName: &c.CaseName, CaseDesc: &c.CaseDesc,
		TargetAppPackage: &c.TargetAppPackage, TargetAppLabel: &c.TargetAppLabel, RecordMode: &c.RecordMode,
		AdvanceSettings: &c.AdvanceSettings, OperationLog: &snap, Priority: &prio, GmtCreate: &c.GmtCreate, GmtModify: &c.GmtModify})
}

func sameRefs(a, b []casefile.ParamRef) bool {
	key := func(r casefile.ParamRef) string { return r.StepID + "\x00" + r.Key }
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i, r := range a {
		ka[i] = key(r)
	}
	for i, r := range b {
		kb[i] = key(r)
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// catalogueSteps builds one step per action of the catalogue a case may
// hold (and each provider action, paired), with every parameter the action
// reads and localClickPos, in five encodings by turn: stored encrypted
// (SoloPi ciphertext, encrypt:true), encrypted in name only (a plain value
// under encrypt:true, which the device uses as stored), plain
// (encrypt:false), unflagged (no encrypt: the host writes false), and
// plain with a null optional parameter. It returns the steps and the
// values marked secret.
func catalogueSteps(t *testing.T) ([]any, []string) {
	t.Helper()
	node := map[string]any{"resourceId": "com.example.counter:id/counter_value", "text": "0", "className": "android.widget.TextView",
		"packageName": "com.example.counter", "description": "", "xpath": "/android.widget.FrameLayout/android.widget.TextView", "id": "4294967347",
		"depth": 9, "nodeType": "AccessibilityNodeTree", "nodeBound": map[string]any{"left": 84, "top": 242, "right": 996, "bottom": 386, "empty": false},
		"assistantNodes": []any{map[string]any{"className": "android.widget.TextView", "resourceId": "x", "text": "t", "description": "d", "parentHeight": 3}},
		"extra":          map[string]any{"screenSize": "1080,2340"}}
	var steps []any
	var secrets []string
	add := func(enum string, params map[string]string, needsNode bool, providerStep bool) {
		i := len(steps)
		mode := i % 5
		if providerStep && mode == 0 {
			mode = 1 // the host reads a provider's parameters: ciphertext would not name one
		}
		op := map[string]any{}
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := params[k]
			switch mode {
			case 0:
				op[k] = paramcrypt.Encrypt(paramcrypt.DefaultSeed, v)
			default:
				op[k] = v
			}
			if mode <= 1 {
				secrets = append(secrets, v)
			}
		}
		method := map[string]any{"actionEnum": enum, "operationParam": op}
		switch mode {
		case 0, 1:
			method["encrypt"] = true
		case 2, 4:
			method["encrypt"] = false
		}
		if mode == 4 {
			op["nullable"] = nil
		}
		step := map[string]any{"stepId": fmt.Sprintf("step-%02d", i), "operationId": "rt", "operationMethod": method}
		if needsNode {
			step["operationNode"] = node
		} else if mode == 3 {
			step["operationNode"] = nil
		}
		steps = append(steps, step)
	}
	value := func(enum, k string) string {
		return fmt.Sprintf(`%s.%s="v"<&>%d`, enum, k, len(steps))
	}
	for _, d := range casefile.Actions() {
		if d.Refused || d.RuntimeOnly || d.CaseOnly || d.DynamicProvider {
			continue
		}
		params := map[string]string{"localClickPos": "0.5,0.5"}
		for _, k := range append(slices.Clone(d.Params), d.RequiredParams...) {
			params[k] = value(d.ActionEnum, k)
		}
		add(d.ActionEnum, params, d.RequiresNode, false)
	}
	valid := map[string]string{"originSize": "100,50", "originPos": "10,20", "checkList": "CPU,Memory", "resolution": "720x480",
		"INTENT_VIDEO_BITRATE": "2500", "INTENT_FRAME_RATE": "30", "INTENT_EXCEPT_DIFF": "0.1"}
	for _, pd := range casefile.ProviderActions() {
		params := map[string]string{"targetAction": pd.Code, "targetActionDesc": pd.Code + " step"}
		for _, k := range append(slices.Clone(pd.RequiredParams), pd.OptionalParams...) {
			if slices.Contains(pd.RefusedParams, k) || k == "targetAction" {
				continue
			}
			params[k] = valid[k]
			if params[k] == "" {
				params[k] = value(pd.Code, k)
			}
		}
		add(pd.ActionEnum, params, pd.RequiresNode, true)
	}
	if len(steps) < 50 {
		t.Fatalf("only %d steps from the catalogue", len(steps))
	}
	// Values that are not a whole word elsewhere: the long ones.
	secrets = slices.DeleteFunc(secrets, func(s string) bool { return len(s) < 8 || !strings.Contains(s, "=") })
	return steps, secrets
}

// A case the phone already stores with the marker in place of a value
// (imported before it was refused) is not replayed: the run is refused
// before any mutation, exit 3, naming the value.
func TestRunRefusesAStoredRedactedCase(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	c, err := casefile.Parse([]byte(`{"caseName":"lost","targetAppPackage":"com.example.counter","operationLog":{"steps":[
		{"stepId":"a","operationMethod":{"actionEnum":"SLEEP","encrypt":false,"operationParam":{"text":"[redacted]"}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{SkipPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCase(ctx, p.d, n, ImportOptions{Timeout: 10 * time.Second, PollInterval: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	rep := RunReplay(ctx, p.d, fastRun("lost", ""))
	if rep.Err == nil || rep.Err.Code != fault.CodeRedactedValue || rep.Err.Kind != fault.Invalid {
		t.Fatalf("run: %v", rep.Err)
	}
	if p.mutations("startaction/replay") != 0 {
		t.Fatal("the replay was started")
	}
}
