package video_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

func newSim(t *testing.T) (*sim.Device, video.Device) {
	t.Helper()
	dev := sim.New(sim.Options{Serial: "sim-video", TimeScale: 100})
	t.Cleanup(func() { dev.Close() })
	d := device.NewDevice(dev, device.DeviceOptions{})
	return dev, adapter{dev: dev, d: d}
}

type adapter struct {
	dev *sim.Device
	d   *device.Device
}

func (a adapter) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	return a.dev.Shell(ctx, cmd)
}

func (a adapter) Pull(ctx context.Context, remote string, w io.Writer) error {
	_, err := a.d.Pull(ctx, remote, w)
	return err
}

func (a adapter) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	return a.dev.Stat(ctx, remote)
}

func (a adapter) Clock() clock.Clock { return a.d.Clock() }

func TestStopPullsAPlayablePartAndDeletesIt(t *testing.T) {
	t.Parallel()
	dev, d := newSim(t)
	rec, err := video.Start(context.Background(), d, video.Options{Size: "180x400"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	ev, err := artifacts.Open(filepath.Join(t.TempDir(), "ev"), artifacts.EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	res := rec.Stop(context.Background(), ev)
	if !res.Kept || res.Error != "" || res.Parts != 1 || len(res.Files) != 1 || res.Files[0].Path != "video.mp4" {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(ev.Root(), "video.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := mp4check.Check(b); err != nil || info.Frames < 1 || info.Width != 180 {
		t.Fatalf("info %+v err %v", info, err)
	}
	out, _, _, _ := dev.Shell(context.Background(), "ls /data/local/tmp")
	if strings.Contains(string(out), "solopi-video-") {
		t.Fatalf("left on the device: %s", out)
	}
}

// A device whose pkill never runs (stalled) cannot hold Stop past its
// budget: the shell stream is closed instead, which ends screenrecord
// there too, and what it wrote is still pulled.
func TestStopIsBoundedWhenTheInterruptHangs(t *testing.T) {
	t.Parallel()
	dev, d := newSim(t)
	rec, err := video.Start(context.Background(), d, video.Options{Size: "180x400", StopBudget: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Phone.StallCommand("pkill", 0); err != nil {
		t.Fatal(err)
	}
	defer dev.Phone.ReleaseCommand("pkill")
	ev, err := artifacts.Open(filepath.Join(t.TempDir(), "ev"), artifacts.EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	res := rec.Stop(context.Background(), ev)
	if !strings.Contains(res.Error, "did not finish in time after the interrupt") {
		t.Fatalf("result %+v", res)
	}
	if !res.Kept || len(res.Files) != 1 {
		t.Fatalf("the part was not pulled after the stream was closed: %+v", res)
	}
}

// An interrupt (ctx already cancelled) still stops, pulls and deletes.
func TestStopAfterAnInterruptKeepsTheRecording(t *testing.T) {
	t.Parallel()
	_, d := newSim(t)
	ctx, cancel := context.WithCancel(context.Background())
	rec, err := video.Start(ctx, d, video.Options{Size: "180x400"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	ev, err := artifacts.Open(filepath.Join(t.TempDir(), "ev"), artifacts.EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	if res := rec.Stop(ctx, ev); !res.Kept || res.Error != "" {
		t.Fatalf("result %+v", res)
	}
}

func TestParseModeAndKeep(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]video.Mode{"": video.ModeOff, "off": video.ModeOff, "on-failure": video.ModeOnFailure, "always": video.ModeAlways} {
		if m, ok := video.ParseMode(s); !ok || m != want {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, ok)
		}
	}
	if _, ok := video.ParseMode("sometimes"); ok {
		t.Error("sometimes accepted")
	}
	if video.ModeOnFailure.Keep(true) || !video.ModeOnFailure.Keep(false) || !video.ModeAlways.Keep(true) || video.ModeOff.Keep(false) {
		t.Error("Keep")
	}
}
