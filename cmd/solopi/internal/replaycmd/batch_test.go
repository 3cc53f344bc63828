package replaycmd

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// A batch from a cases file: a failure does not stop it (continue on
// failure), an interrupt during the fourth run stops it there; the JUnit
// report has one testcase per requested run (the fifth skipped), each
// sub-run its evidence, the batch its summary.
func TestRunBatchCasesFileJUnitAndPartialOnInterrupt(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	var names []string
	for i, kind := range []string{"pass", "fail", "pass", "hang", "pass"} {
		name := string(rune('a'+i)) + " case"
		names = append(names, name)
		edit := cmdtest.Renamed(name)
		switch kind {
		case "fail":
			edit = func(s string) string {
				return cmdtest.Renamed(name)(strings.Replace(s, `"assertInputContent": "3"`, `"assertInputContent": "4"`, 1))
			}
		case "hang":
			slow, _ := os.ReadFile(cmdtest.SlowCase(t, 600000))
			r.importCase(cmdtest.WriteFile(t, "slow.json", []byte(cmdtest.Renamed(name)(string(slow)))))
			continue
		}
		r.importCase(cmdtest.WriteCase(t, edit))
	}
	cf := cmdtest.WriteFile(t, "cases.txt", []byte("# regression\n"+strings.Join(names, "\n")+"\n\n"))
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The third run's evidence is written once it ended: a replay
		// running after that is the fourth's.
		testwait.Until(t, 30*time.Second, "the fourth run to replay", func() bool {
			ds, _ := filepath.Glob(filepath.Join(root, "*", "003-c-case", artifacts.ManifestName))
			return len(ds) == 1 && r.replaying()
		})
		cancel()
	}()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.ExpectCtx(ctx, 130, "run-batch", append([]string{"run-batch", "--cases-file", cf, "--continue-on-failure", "--artifacts", root, "--junit", junit}, fast...)...)
	if m["errorCode"] != fault.CodeBatchInterrupted || m["completedRuns"] != float64(4) || m["failedRuns"] != float64(2) {
		t.Fatalf("batch: %v", m)
	}
	res, skipped := m["results"].([]any), m["skipped"].([]any)
	if len(res) != 4 || len(skipped) != 1 || skipped[0].(map[string]any)["caseName"] != "e case" {
		t.Fatalf("results %v skipped %v", res, skipped)
	}
	for i, want := range []float64{0, 2, 0, 130} {
		if got := res[i].(map[string]any)["exitCode"]; got != want {
			t.Errorf("run %d exitCode %v, want %v", i+1, got, want)
		}
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Suites[0]; s.Tests != 5 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Fatalf("junit counts %+v", s)
	}
	art := cmdtest.Str(m, "artifactsRoot")
	if _, err := os.Stat(filepath.Join(art, "004-d-case", artifacts.ManifestName)); err != nil {
		t.Fatalf("interrupted sub-run evidence: %v", err)
	}
	summary, err := os.ReadFile(filepath.Join(art, "batch.json"))
	if err != nil || m["batchJson"] != filepath.Join(art, "batch.json") || m["report"] != filepath.Join(art, "report.html") {
		t.Fatalf("batch summary %v (%v)", m, err)
	}
	schematest.Validate(t, "run-batch", summary)
}

func TestRunRepeat(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, cmdtest.Renamed("payment smoke")))
	root := t.TempDir()
	m := r.Cmd(0, append([]string{"run-repeat", "--case", "payment smoke", "--times", "3", "--artifacts", root}, fast...)...)
	if m["success"] != true || m["completedRuns"] != float64(3) {
		t.Fatalf("run-repeat: %v", m)
	}
	for _, sub := range []string{"001-payment-smoke", "002-payment-smoke", "003-payment-smoke"} {
		if _, err := os.Stat(filepath.Join(cmdtest.Str(m, "artifactsRoot"), sub, replay.ArtifactResult)); err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
	}
	// Without --continue-on-failure the first non-pass stops the batch.
	r.importCase(cmdtest.FailingCase(t))
	m = r.Cmd(2, append([]string{"run-batch", "--case", demo, "--case", "payment smoke"}, fast...)...)
	if m["completedRuns"] != float64(1) || len(m["skipped"].([]any)) != 1 {
		t.Fatalf("stop at the first failure: %v", m)
	}
	for _, cf := range []string{"/nonexistent/cases.txt", t.TempDir()} {
		if m := r.Cmd(3, "run-batch", "--cases-file", cf); m["errorCode"] != "cases_file_unreadable" {
			t.Fatalf("cases file %s: %v", cf, m)
		}
	}
}
