package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/sim"
)

// A run SoloPi forgets (idle with no runId: an app restart) is lost, not
// replaced: exit-4 kind, the runId kept, its last status under lastStatus
// and not spread at the top level, evidence written and incomplete.
func TestRunLostWhenSoloPiForgetsIt(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "running" && n == 3 {
			p.dev.App.Restart() // the process dies: the run is forgotten
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, fastRun("slow", dir))
	if kindOf(rep.Err) != fault.Transport || rep.ErrorCode != fault.CodeRunLost || printed(rep)["runId"] != rep.RunID || rep.RunID == "" {
		t.Fatalf("kind %v payload %v", kindOf(rep.Err), rep.Payload)
	}
	last, _ := printed(rep)["lastStatus"].(map[string]any)
	if printed(rep)["state"] != nil || last["state"] != "running" || p.mutations("type=cancel") != 0 {
		t.Fatalf("payload %v", rep.Payload)
	}
	if m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, artifactCase); m.Complete || m.Extra["errorCode"] != fault.CodeRunLost {
		t.Fatalf("manifest %+v", m)
	}
}

// Each evidence item has its own deadline: a screencap that never answers
// costs EvidenceTimeout, the logcat is collected meanwhile; an interrupt
// during the collection ends it at once and keeps the verdict.
func TestEvidenceItemsHaveTheirOwnDeadline(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	// screencap never answers.
	if err := p.dev.Phone.StallCommand("screencap", 0); err != nil {
		t.Fatal(err)
	}
	stalled := make(chan struct{}, 4)
	stop := p.dev.OnCommand(func(cmd string) {
		if cmd == "screencap -p" {
			stalled <- struct{}{}
		}
	})
	defer stop()
	dir := filepath.Join(t.TempDir(), "out")
	o := fastRun("smoke", dir)
	o.EvidenceTimeout = 50 * time.Millisecond
	rep := RunReplay(context.Background(), p.d, o)
	a := rep.Artifacts
	if kindOf(rep.Err) != passed || a.Complete || a.Screenshot != "" || a.Logcat == "" || !strings.Contains(strings.Join(a.Errors, "\n"), ArtifactScreenshot+": "+errEvidenceDeadline.Error()) {
		t.Fatalf("artifacts %+v", a)
	}
	// Interrupted while the screenshot hangs: the verdict stands.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.EvidenceTimeout = time.Hour
	o.ArtifactsDir = filepath.Join(t.TempDir(), "out")
	// The logcat, the device description and the status hang too: the
	// interrupt ends them.
	for _, cmd := range []string{"getprop", "logcat"} {
		if err := p.dev.Phone.StallCommand(cmd, 0); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	first := rep.RunID
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "passed" && r.RunID != first {
			// Once the host has the verdict, every later status answer is
			// an hour late.
			once.Do(func() {
				if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "status"}, DelayMs: 3_600_000}); err != nil {
					t.Error(err)
				}
			})
		}
	})
	for len(stalled) > 0 {
		<-stalled // the first run's screencap
	}
	go func() {
		<-stalled
		cancel()
	}()
	rep = RunReplay(ctx, p.d, o)
	a = rep.Artifacts
	if kindOf(rep.Err) != passed || a.Complete || !strings.Contains(strings.Join(a.Errors, "\n"), ArtifactScreenshot+": interrupted") || a.Manifest == "" {
		t.Fatalf("interrupted collection: %v %+v", rep.Err, a)
	}
}

// case-import's record makes the run hide exactly the encrypted values;
// without it the input-bearing parameters are hidden.
func TestSecretsStoreAndRedactionBasis(t *testing.T) {
	t.Parallel()
	store := SecretsStore{Dir: filepath.Join(t.TempDir(), "cases")}
	snap, err := casefile.Parse([]byte(`{"caseName":"c","targetAppPackage":"com.example.counter","operationLog":{"steps":[
		{"stepId":"pw","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"hunter22"}},"operationNode":{"resourceId":"a:id/p"}},
		{"stepId":"wait","operationMethod":{"actionEnum":"SLEEP","encrypt":false,"operationParam":{"text":"2000"}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Repeat("ab", 32)
	ci := &deviceCase{ID: 3, Name: "c", Fingerprint: fp, Case: snap}
	if r := caseRedaction(store, nil, ci); r.Basis != redactionInputParameters || r.Values != 1 || r.Redactor().Text("typed hunter22") != "typed "+redact.Marker {
		t.Fatalf("without a record: %+v", r)
	}
	p, err := store.Save(secretsRecord{CaseName: "c", CaseID: 3, CaseFingerprint: fp, EncryptedParams: []casefile.ParamRef{{StepID: "wait", Key: "text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file %v %v", fi, err)
	}
	if fi, _ := os.Stat(store.Dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("record directory mode %v", fi.Mode())
	}
	r := caseRedaction(store, nil, ci)
	if r.Basis != redactionImportRecord || r.Redactor().Text("slept 2000 ms, typed hunter22") != "slept "+redact.Marker+" ms, typed hunter22" {
		t.Fatalf("with the record: %+v", r)
	}
	// Another name under that fingerprint, or another fingerprint: no record.
	if _, ok := store.Load("other", fp); ok {
		t.Error("a record was found for another case name")
	}
	if _, ok := store.Load("c", strings.Repeat("cd", 32)); ok {
		t.Error("a record was found for another fingerprint")
	}
	// Records unused for 90 days go when the next one is saved.
	fake := clock.NewFake(time.Now().Add(91 * 24 * time.Hour))
	store.Clock = fake
	if _, err := store.Save(secretsRecord{CaseName: "d", CaseFingerprint: strings.Repeat("ef", 32)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("an idle record was kept: %v", err)
	}
}
