package verifycmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify"
)

// verify-run --devices all spreads the outcome matrix over three phones of
// a farm reached through its adb server and gives the single-phone
// outcome fingerprint; a --devices list naming a phone twice is refused
// before any phone is touched.
func TestVerifyRunAcrossDevices(t *testing.T) {
	t.Parallel()
	f := cmdtest.Farm(t, sim.FarmOptions{Devices: 3, TimeScale: verifyTimeScale})
	c := cmdtest.OverAdb(t, Commands, f)
	c.Env["XDG_RUNTIME_DIR"] = t.TempDir()
	art := filepath.Join(t.TempDir(), "run")
	r := c.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"),
		"--agent-decisions", fixture("counter-agent-decisions"), "--artifacts", art, "--devices", "all")
	schematest.Validate(t, "verify-run", r.Stdout)
	m := r.Object(t)
	if r.Code != 2 || m["status"] != verify.Failed || m["outcomeFingerprint"] != e2eOutcomeMatrix {
		rep, _ := os.ReadFile(filepath.Join(art, "events.jsonl"))
		t.Fatalf("exit %d %s\nstderr %s\nevents %s", r.Code, r.Stdout, r.Stderr, rep)
	}
	events, err := os.ReadFile(filepath.Join(art, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	serials := map[string]bool{}
	for _, m := range regexp.MustCompile(`"serial":"([^"]+)"`).FindAllStringSubmatch(string(events), -1) {
		serials[m[1]] = true
	}
	if len(serials) < 2 {
		t.Errorf("the segments ran on %v", serials)
	}
	if r := c.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-success"), "--artifacts", filepath.Join(t.TempDir(), "x"),
		"--devices", "sim-0001,sim-0001"); r.Code != 3 || r.Object(t)["errorCode"] != "invalid_devices" {
		t.Errorf("a phone named twice: exit %d %s", r.Code, r.Stdout)
	}
}

// verify-run --devices all --video always records every phone: each
// phone's recording is its own file (video-<serial>.mp4, numbered when it
// rolled over), and each segment names a moment in the recording of the
// phone that ran it.
func TestVerifyRunVideoAcrossDevices(t *testing.T) {
	t.Parallel()
	f := cmdtest.Farm(t, sim.FarmOptions{Devices: 2, TimeScale: verifyTimeScale})
	c := cmdtest.OverAdb(t, Commands, f)
	c.Env["XDG_RUNTIME_DIR"] = t.TempDir()
	art := filepath.Join(t.TempDir(), "run")
	r := c.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-success"), "--artifacts", art, "--devices", "all", "--video", "always")
	schematest.Validate(t, "verify-run", r.Stdout)
	if r.Code != 0 {
		t.Fatalf("exit %d %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	tl := readTimeline(t, art)
	files := map[string]map[string]bool{} // serial -> its recording's parts
	for _, v := range tl.Videos {
		if !v.Kept || len(v.Files) != v.Parts || len(v.Files) == 0 || v.Serial == "" {
			t.Errorf("recording %+v", v)
			continue
		}
		files[v.Serial] = map[string]bool{}
		for i, f := range v.Files {
			want := "video-" + v.Serial + ".mp4"
			if v.Parts > 1 {
				want = "video-" + v.Serial + "-" + strconv.Itoa(i+1) + ".mp4"
			}
			if f.Path != want {
				t.Errorf("%s's part %d is %s, want %s", v.Serial, i+1, f.Path, want)
			}
			files[v.Serial][f.Path] = true
		}
	}
	if len(files) != 2 {
		t.Fatalf("recordings %v", files)
	}
	if len(tl.Segments) == 0 {
		t.Fatal("no segment ran")
	}
	for _, s := range tl.Segments {
		if s.Serial == "" || s.Video == nil || !files[s.Serial][s.Video.File] {
			t.Errorf("segment %s on %q names %+v", s.SegmentID, s.Serial, s.Video)
		}
	}
}
