package replaycmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/sim"
)

// run --video on-failure: a failing run keeps a playable video.mp4 (its
// digest in the output), a passing one keeps none; --video needs
// --artifacts.
func TestRunVideoOnFailure(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	pass := filepath.Join(t.TempDir(), "pass")
	m := r.Cmd(0, append([]string{"run", "--case", demo, "--artifacts", pass, "--video", "on-failure"}, fast...)...)
	if v := cmdtest.Obj(m, "video"); v["kept"] != false {
		t.Errorf("a passing run kept its video: %v", v)
	}
	if _, err := os.Stat(filepath.Join(pass, "video.mp4")); !os.IsNotExist(err) {
		t.Errorf("video.mp4 of a passing run: %v", err)
	}
	if err := r.Dev.App.FailReplays(demo, 1); err != nil {
		t.Fatal(err)
	}
	fail := filepath.Join(t.TempDir(), "fail")
	m = r.Cmd(2, append([]string{"run", "--case", demo, "--artifacts", fail, "--video", "on-failure"}, fast...)...)
	if v := cmdtest.Obj(m, "video"); v["kept"] != true {
		t.Fatalf("a failing run did not keep its video: %v", v)
	}
	b, err := os.ReadFile(filepath.Join(fail, "video.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := mp4check.Check(b)
	if err != nil || info.Frames == 0 {
		t.Fatalf("video.mp4 is not playable: %+v %v", info, err)
	}
	if r := r.Run("run", "--case", demo, "--video", "always"); r.Code != 3 {
		t.Errorf("--video without --artifacts: exit %d %s", r.Code, r.Stdout)
	}
}

// run-batch passes --video to every sub-run (its evidence under the
// batch's root is where the recording goes).
func TestRunBatchVideoPerSubRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	m := r.Cmd(0, append([]string{"run-batch", "--case", demo, "--artifacts", t.TempDir(), "--video", "always"}, fast...)...)
	run := m["results"].([]any)[0].(map[string]any)["run"].(map[string]any)
	if v := cmdtest.Obj(run, "video"); v["kept"] != true {
		t.Fatalf("video %v", v)
	}
	b, err := os.ReadFile(filepath.Join(cmdtest.Str(cmdtest.Obj(run, "artifacts"), "dir"), "video.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := mp4check.Check(b); err != nil || info.Frames == 0 {
		t.Fatalf("video.mp4 is not playable: %+v %v", info, err)
	}
}
