package android

import (
	"context"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/internal/mp4check"
)

func readMP4(t *testing.T, p *Phone, path string) mp4check.Info {
	t.Helper()
	data := []byte(mustSh(t, p, "cat "+path))
	info, err := mp4check.Check(data)
	if err != nil {
		t.Fatalf("%s (%d bytes) is not a playable MP4: %v", path, len(data), err)
	}
	return info
}

func TestScreenrecordTimeLimitWritesPlayableMP4(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	r := sh(t, p, "screenrecord --time-limit 3 --size 360x640 /sdcard/a.mp4")
	if r.rc != 0 || r.err != "" {
		t.Fatalf("rc=%d stderr=%q", r.rc, r.err)
	}
	info := readMP4(t, p, "/sdcard/a.mp4")
	if info.Frames < 1 || info.Decoded != info.Frames || info.Width != 360 || info.Height != 640 || info.Codec != "mp4v" {
		t.Fatalf("info = %+v", info)
	}
	// The track lasts exactly the time limit: frames cover start to limit.
	if info.DurationMs != 3000 {
		t.Fatalf("duration = %d ms, want 3000", info.DurationMs)
	}
	if out := sh(t, p, "pidof screenrecord"); out.rc != 1 {
		t.Fatalf("screenrecord still listed after exit: %+v", out)
	}
}

func TestScreenrecordBadArguments(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	for cmd, want := range map[string]string{
		"screenrecord": "Must specify output file",
		"screenrecord --time-limit 181 /sdcard/x.mp4": "outside acceptable range [1,180]",
		"screenrecord --time-limit 0 /sdcard/x.mp4":   "outside acceptable range",
		"screenrecord --size 7x9 /sdcard/x.mp4":       "Invalid size",
		"screenrecord --bit-rate abc /sdcard/x.mp4":   "Invalid bit rate",
		"screenrecord --frobnicate /sdcard/x.mp4":     "unrecognized option",
		"screenrecord /system/x.mp4":                  "Unable to open",
	} {
		r := sh(t, p, cmd)
		if r.rc == 0 || !strings.Contains(r.err, want) {
			t.Errorf("%q: rc=%d stderr=%q, want %q", cmd, r.rc, r.err, want)
		}
	}
}

// startRecording runs screenrecord in the background and returns once it is
// listed by pidof, with a channel that receives its exit status.
func startRecording(t *testing.T, p *Phone, ctx context.Context, cmd string) (pid string, done <-chan int) {
	t.Helper()
	ch := make(chan int, 1)
	go func() { ch <- p.RunShell(ctx, cmd, nil, nil, nil) }()
	for {
		if r := sh(t, p, "pidof screenrecord"); r.rc == 0 {
			return strings.TrimSpace(r.out), ch
		}
		select {
		case rc := <-ch:
			t.Fatalf("screenrecord exited (%d) before it was listed", rc)
		default:
		}
		mustSh(t, p, "sleep 0.05")
	}
}

func TestScreenrecordSIGINTKeepsWhatWasRecorded(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"pkill -INT screenrecord", "pkill -l INT -f /sdcard/b.mp4", "kill -2 PID", "kill -s INT PID", "kill PID"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			p := New(Config{}, nil) // real time: the recording must still be running when it is stopped
			pid, done := startRecording(t, p, context.Background(), "screenrecord --size 180x320 /sdcard/b.mp4")
			if err := p.LaunchApp("com.android.settings"); err != nil {
				t.Fatal(err)
			}
			mustSh(t, p, "sleep 0.3")
			mustSh(t, p, strings.ReplaceAll(stop, "PID", pid))
			if rc := <-done; rc != 0 {
				t.Fatalf("screenrecord exited %d after SIGINT", rc)
			}
			info := readMP4(t, p, "/sdcard/b.mp4")
			if info.Frames < 2 || info.DurationMs <= 0 || info.DurationMs >= 180000 {
				t.Fatalf("info = %+v, want the launch recorded as a second frame", info)
			}
		})
	}
}

func TestScreenrecordStreamClosedKeepsFile(t *testing.T) {
	t.Parallel()
	p := New(Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, done := startRecording(t, p, ctx, "screenrecord --size 180x320 /sdcard/c.mp4")
	cancel()
	<-done
	if info := readMP4(t, p, "/sdcard/c.mp4"); info.Frames < 1 {
		t.Fatalf("info = %+v", info)
	}
}

func TestScreenrecordSIGKILLLeavesEmptyFile(t *testing.T) {
	t.Parallel()
	p := New(Config{}, nil)
	pid, done := startRecording(t, p, context.Background(), "screenrecord --size 180x320 /sdcard/d.mp4")
	mustSh(t, p, "kill -9 "+pid)
	if rc := <-done; rc != 137 {
		t.Fatalf("rc = %d, want 137", rc)
	}
	if out := mustSh(t, p, "wc -c /sdcard/d.mp4"); !strings.HasPrefix(strings.TrimSpace(out), "0") {
		t.Fatalf("wc -c = %q, want an empty file", out)
	}
}

func TestKillAndPkillErrors(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	if r := sh(t, p, "kill -2 99999"); r.rc != 1 || !strings.Contains(r.err, "No such process") {
		t.Errorf("kill unknown pid: %+v", r)
	}
	if r := sh(t, p, "kill -BOGUS 1"); r.rc != 1 || !strings.Contains(r.err, "unknown signal") {
		t.Errorf("kill bad signal: %+v", r)
	}
	if r := sh(t, p, "pkill -INT screenrecord"); r.rc != 1 {
		t.Errorf("pkill with nothing running: %+v", r)
	}
}
