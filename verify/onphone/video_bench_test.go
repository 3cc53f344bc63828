package onphone

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// cpuTime is the process's user and system CPU time so far: the host's
// and, the simulator being in process, the simulated phone's (its
// screenrecord encodes the frames).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkVerifyRunVideo runs the outcome matrix (which fails, so
// on-failure keeps the recording) on the simulator at time scale 20
// without a recording and with one, and reports per run the wall time,
// the process's CPU time, the recording's size and how long its start
// delayed the first segment.
func BenchmarkVerifyRunVideo(b *testing.B) {
	for _, mode := range []video.Mode{video.ModeOff, video.ModeOnFailure} {
		b.Run(string(mode), func(b *testing.B) {
			_, phone := newPhone(b, 20)
			root := b.TempDir()
			plan, err := verify.MarshalPlan(compile(b, readFixture(b, "counter-outcome-matrix")))
			if err != nil {
				b.Fatal(err)
			}
			var wall, cpu time.Duration
			var bytes, startMs int64
			runs := 0
			for b.Loop() {
				runs++
				p, err := execution.Prepare(execution.RunOptions{Plan: plan, Artifacts: filepath.Join(root, strconv.Itoa(runs)),
					DecisionsFile: fixtures + "counter-agent-decisions.json", Video: mode})
				if err != nil {
					b.Fatal(err)
				}
				start, c0 := time.Now(), cpuTime(b)
				s, err := p.Run(context.Background(), execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: phone, Screen: phone.dev.RecorderView()}}})
				wall, cpu = wall+time.Since(start), cpu+cpuTime(b)-c0
				if err != nil || s.OutcomeFingerprint != outcomeMatrixDecisions {
					b.Fatalf("run %+v %v", s, err)
				}
				for _, v := range s.Video {
					if !v.Kept || v.Error != "" || len(v.Files) == 0 {
						b.Fatalf("recording %+v", v)
					}
					startMs += v.OffsetMs
					for _, f := range v.Files {
						bytes += f.Size
					}
				}
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(runs), "wall-ms/run")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(runs), "cpu-ms/run")
			b.ReportMetric(float64(bytes)/float64(runs)/1024, "mp4-KiB/run")
			b.ReportMetric(float64(startMs)/float64(runs), "video-start-ms/run")
		})
	}
}
