package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

func TestRunPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := compileFixture(t, "counter-outcome-matrix")
	rememberCases(p)
	planBytes, _ := verify.MarshalPlan(p)
	decisions := filepath.Join(dir, "decisions.json")
	if err := os.WriteFile(decisions, readFixture(t, "counter-agent-decisions"), 0o644); err != nil {
		t.Fatal(err)
	}
	phone := &counterPhone{}
	opts := RunOptions{Plan: planBytes, Artifacts: filepath.Join(dir, "run"), DecisionsFile: decisions,
		JUnit: filepath.Join(dir, "junit.xml")}
	e := Engine{Phones: []Ports{{Runner: phone, Agent: phone}}}
	s, err := runPlan(context.Background(), opts, e)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != verify.Failed || s.Success || s.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Errorf("summary = %+v", s)
	}
	b, _ := json.Marshal(s)
	schematest.Validate(t, "verify-run", b)

	// Refused before the phone is touched.
	calls := len(phone.calls)
	for name, edit := range map[string]func(o *RunOptions){
		fault.CodeArtifactsExist: func(o *RunOptions) { o.JUnit = "" },
		fault.CodeProviderConflict: func(o *RunOptions) {
			o.Artifacts += "2"
			o.Provider.Name = providerCloud
			o.Provider.CloudEndpoint = "http://127.0.0.1:1"
		},
		fault.CodeInvalidDecisions: func(o *RunOptions) {
			o.Artifacts += "3"
			bad := filepath.Join(dir, "bad.json")
			_ = os.WriteFile(bad, []byte(`{"hybrid-success":[]}`), 0o644)
			o.DecisionsFile = bad
		},
		fault.CodeFingerprintMismatch: func(o *RunOptions) {
			o.Plan = []byte(`{"schemaVersion":"solopi.ai.verification-plan/v1","planFingerprint":"` + outcomeMatrixDecisions + `"}`)
		},
		fault.CodeProviderNotSupported: func(o *RunOptions) {
			o.Artifacts += "4"
			o.DecisionsFile = ""
			o.Provider.Name = providerOnDevice
		},
	} {
		o := opts
		o.JUnit = ""
		edit(&o)
		if _, err := runPlan(context.Background(), o, e); fault.CodeOf(err) != name || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: got %v", name, err)
		}
	}
	o := opts
	o.Artifacts, o.JUnit, o.DecisionsFile, o.DecisionsJSON = filepath.Join(dir, "inline-bad"), "", "", []byte(`{"hybrid-success":[]}`)
	if _, err := runPlan(context.Background(), o, e); fault.CodeOf(err) != fault.CodeInvalidDecisions {
		t.Errorf("bad inline decisions: got %v", err)
	}
	// A decisions file that is not UTF-8 is refused as it is read, not
	// decoded into U+FFFD and found out on the phone.
	latin := filepath.Join(dir, "latin1.json")
	if err := os.WriteFile(latin, bytes.Replace(readFixture(t, "counter-agent-decisions"), []byte("goal reached"), []byte("goal r\xe9ached"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Artifacts, o.DecisionsJSON, o.DecisionsFile = filepath.Join(dir, "latin1"), nil, latin
	if _, err := runPlan(context.Background(), o, e); fault.CodeOf(err) != fault.CodeInvalidDecisions || fault.KindOf(err) != fault.Invalid {
		t.Errorf("a decisions file that is not UTF-8: got %v", err)
	}
	o.DecisionsFile = ""
	if len(phone.calls) != calls {
		t.Errorf("a refused run touched the phone: %v", phone.calls[calls:])
	}

	// Decisions given inline (a managed assignment carries them) decide
	// exactly as the file does.
	o.Artifacts, o.DecisionsJSON = filepath.Join(dir, "inline"), readFixture(t, "counter-agent-decisions")
	if s, err := runPlan(context.Background(), o, e); err != nil || s.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Errorf("inline decisions: %+v %v", s, err)
	}
}
