package verifycmd

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify"
)

// verify-run --devices all spreads the outcome matrix over three phones of
// a farm reached through its adb server and gives the single-phone
// outcome fingerprint, with every phone's screen recorded (--video always
// changes no verdict; each phone's recording is its own file and the
// segments name moments in the recording of the phone that ran them); a
// --devices list naming a phone twice is refused before any phone is
// touched.
func TestVerifyRunAcrossDevices(t *testing.T) {
	t.Parallel()
	f := cmdtest.Farm(t, sim.FarmOptions{Devices: 3, TimeScale: verifyTimeScale})
	c := cmdtest.OverAdb(t, Commands, f)
	c.Env["XDG_RUNTIME_DIR"] = t.TempDir()
	art := filepath.Join(t.TempDir(), "run")
	r := c.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"),
		"--agent-decisions", fixture("counter-agent-decisions"), "--artifacts", art, "--devices", "all", "--video", "always")
	schemas.Validate(t, "verify-run", r.Stdout)
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
	tl := readTimeline(t, art)
	files := map[string]string{} // serial -> its recording
	for _, v := range tl.Videos {
		if !v.Kept || len(v.Files) != 1 || v.Files[0].Path != "video-"+v.Serial+".mp4" {
			t.Errorf("recording %+v", v)
			continue
		}
		files[v.Serial] = v.Files[0].Path
	}
	if len(files) != 3 {
		t.Fatalf("recordings %v", files)
	}
	for _, s := range tl.Segments {
		if s.Video == nil || s.Video.File != files[s.Serial] {
			t.Errorf("segment %s on %s names %+v", s.SegmentID, s.Serial, s.Video)
		}
	}
	if r := c.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-success"), "--artifacts", filepath.Join(t.TempDir(), "x"),
		"--devices", "sim-0001,sim-0001"); r.Code != 3 || r.Object(t)["errorCode"] != "invalid_devices" {
		t.Errorf("a phone named twice: exit %d %s", r.Code, r.Stdout)
	}
}
