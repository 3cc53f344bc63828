package onphone

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// signIn signs in to the simulator's Login app with a password the
// requirement marks secret by the name of its parameter.
const signIn = `{"id":"login","title":"sign in","targetAppPackage":"com.example.login","acceptanceCriteria":["the user gets in"],
 "parameters":{"user":"demo","loginPassword":"secret"},
 "scenarios":[{"id":"sign-in","acceptanceCriteria":["AC-001"],"steps":[
  {"id":"user","action":{"type":"input","selector":{"resourceId":"com.example.login:id/username"},"text":"${user}"}},
  {"id":"password","action":{"type":"input","selector":{"resourceId":"com.example.login:id/password"},"text":"${loginPassword}"}},
  {"id":"go","action":{"type":"click","selector":{"resourceId":"com.example.login:id/sign_in_button"}}}],
  "checkpoints":[{"id":"welcome","afterStep":"go","oracle":{"type":"ui","selector":{"resourceId":"com.example.login:id/welcome_text"},"expected":"Welcome, demo"}}]}]}`

// A requirement's secret (the Login app's password, typed by an input
// step) is in no file of the evidence directory, not in the JUnit report
// and not in report.html, whose replay view used to show text=secret; the
// verdict is unchanged.
func TestRequirementSecretsStayOutOfTheEvidence(t *testing.T) {
	t.Parallel()
	_, phone := newPhone(t, 20)
	plan := compile(t, []byte(signIn))
	if got := plan.Secrets(); len(got) != 1 || got[0] != "secret" {
		t.Fatalf("secrets %q", got)
	}
	b, err := verify.MarshalPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	p, err := execution.Prepare(execution.RunOptions{Plan: b, Artifacts: dir, JUnit: junit})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Run(context.Background(), execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: phone}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != verify.Passed {
		t.Fatalf("status %s", s.Status)
	}
	html, err := report.Write(dir, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(s)
	if bytes.Contains(out, []byte("secret")) {
		t.Errorf("the summary holds the secret: %s", out)
	}
	files := 0
	for _, root := range []string{dir, junit} {
		err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if bytes.Contains(b, []byte("secret")) {
				t.Errorf("%s holds the secret", path)
			}
			files++
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if html.Path == "" || files < 10 {
		t.Fatalf("report %q, %d files", html.Path, files)
	}
	page, err := os.ReadFile(html.Path)
	if err != nil || !bytes.Contains(page, []byte("text=[redacted]")) || !bytes.Contains(page, []byte("text=demo")) {
		t.Errorf("report.html does not show the password step redacted next to the user name: %v", err)
	}
}
