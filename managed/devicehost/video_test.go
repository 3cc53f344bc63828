package devicehost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
)

// A host recording its shards (managed-worker --video always) keeps each
// shard's screen recording in the attempt's evidence: a playable MP4
// whose digest the attempt's manifest binds, shown by its report.html;
// the verdict is the one the shard earns without it.
func TestShardVideoLandsInTheAttemptEvidence(t *testing.T) {
	t.Parallel()
	d := phone(t, sim.Options{})
	h := hostOn(d)
	h.Video = video.ModeAlways
	a := &managed.Assignment{Serial: d.Serial(), Plan: fixturePlan(t, "counter-success"), Decisions: []byte(`{}`)}
	dir := filepath.Join(t.TempDir(), "attempt")
	v, err := h.ExecuteShard(context.Background(), worker.ShardRun{Assignment: a, ArtifactsDir: dir})
	if err != nil || v.Status != verify.Passed {
		t.Fatalf("shard %+v %v", v, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "video.mp4"))
	if err != nil {
		t.Fatalf("the shard's recording: %v", err)
	}
	if info, err := mp4check.Check(b); err != nil || info.Frames < 1 {
		t.Fatalf("the recording does not play: %+v %v", info, err)
	}
	mb, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m artifacts.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	bound := false
	for _, e := range m.Files {
		bound = bound || e.Path == "video.mp4" && e.SHA256 == hex.EncodeToString(sum[:])
	}
	if !bound {
		t.Fatalf("the manifest does not bind video.mp4: %s", mb)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "video.mp4") {
		t.Fatalf("the attempt's report.html does not show the recording: %v", err)
	}
}
