package verifycmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

const authoringCase = "../../../../casefile/testdata/counter-increment.authoring.json"

// verify-init drafts a requirement from a case file that verify-compile
// accepts; an existing file is kept unless --overwrite; exactly one source.
func TestVerifyInitFromCaseFileCompiles(t *testing.T) {
	t.Parallel()
	cli := localCLI(t)
	dir := t.TempDir()
	req := filepath.Join(dir, "req.json")
	r := cli.Run("verify-init", "--from-case", authoringCase, "--output", req)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s %s", r.Code, r.Stdout, r.Stderr)
	}
	schematest.Validate(t, "verify-init", r.Stdout)
	m := r.Object(t)
	if m["complete"] != true || m["checkpoints"] == 0.0 {
		t.Fatalf("verify-init = %v", m)
	}
	if r := cli.Run("verify-compile", "--file", req, "--output", filepath.Join(dir, "plan.json")); r.Code != 0 {
		t.Fatalf("the draft does not compile: exit %d: %s", r.Code, r.Stdout)
	}
	before, _ := os.ReadFile(req)
	if r := cli.Run("verify-init", "--from-case", authoringCase, "--output", req); r.Code != 3 || r.Object(t)["errorCode"] != "output_exists" {
		t.Errorf("an existing requirement was not kept: exit %d %s", r.Code, r.Stdout)
	}
	if after, _ := os.ReadFile(req); string(after) != string(before) {
		t.Error("the existing requirement changed")
	}
	if r := cli.Run("verify-init", "--from-case", authoringCase, "--output", req, "--overwrite"); r.Code != 0 {
		t.Errorf("--overwrite: exit %d %s", r.Code, r.Stdout)
	}
	if r := cli.Run("verify-init", "--output", req); r.Code != 3 || len(r.Stdout) != 0 || !strings.Contains(string(r.Stderr), "--from-case") {
		t.Errorf("no source: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
}

// verify-init --case reads the case the phone stores.
func TestVerifyInitFromThePhone(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{TimeScale: 20})
	b, err := os.ReadFile(authoringCase)
	if err != nil {
		t.Fatal(err)
	}
	c, err := casefile.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := device.OpenSession(ctx, r.Dev, device.SessionOptions{StartupTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.ImportCase(ctx, s.Device, n, replay.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	req := filepath.Join(t.TempDir(), "req.json")
	res := r.Cmd(0, "verify-init", "--case", c.CaseName, "--output", req)
	if m := res; m["complete"] != true {
		t.Fatalf("verify-init --case = %v", m)
	}
	cli := localCLI(t)
	if r := cli.Run("verify-compile", "--file", req, "--output", filepath.Join(t.TempDir(), "plan.json")); r.Code != 0 {
		t.Fatalf("the draft does not compile: exit %d: %s", r.Code, r.Stdout)
	}
}
