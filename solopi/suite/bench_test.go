package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// benchScale runs the phones' clocks 20 times faster: a case of 1–3 s of
// device time (plus SoloPi's 2 s auto-start delay) takes 150–250 ms.
const benchScale = 20

// BenchmarkQueue runs a 100-case suite (each case a 1–3 s sleep of device
// time, in a fixed random order) on 1, 2, 4 and 8 phones, with the dynamic
// queue (longest first from a history) and with a static round-robin
// split (phone i runs cases i, i+N, … in suite order, as Maestro's
// --shard-split does). Reported: the wall time, the ideal (the device time
// of all cases / N, at the time scale), their ratio, the set-up (lock,
// session, readiness and every phone's check of every case, before the
// first case starts) and the ratio without it, the ratio to the busy
// ideal (the phones' measured busy time / N: what the queue itself
// loses), host CPU per sub-run and the peak RSS.
func BenchmarkQueue(b *testing.B) {
	rng := rand.New(rand.NewPCG(22, 100))
	ms := make([]int, 100)
	for i := range ms {
		ms[i] = 1000 + rng.IntN(2001)
	}
	for _, n := range []int{1, 2, 4, 8} {
		r := benchRig(b, n, ms)
		for _, mode := range []string{"dynamic", "static"} {
			b.Run(fmt.Sprintf("phones=%d/%s", n, mode), func(b *testing.B) {
				for range b.N {
					r.once(b, mode, ms)
				}
			})
		}
	}
}

type benchPhones struct {
	*rig
	items []Item
	hist  *history.Store
}

// benchRig starts n phones with the suite's cases imported, and a history
// that knows each case's duration (a previous run).
func benchRig(b *testing.B, n int, ms []int) *benchPhones {
	b.Helper()
	r := newRigScale(b, n, false, benchScale)
	its := make([]Item, len(ms))
	h, err := history.Open(context.Background(), b.TempDir()+"/history.sqlite", history.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	for i, d := range ms {
		name := fmt.Sprintf("bench-%03d", i+1)
		its[i] = Item{Name: name, Case: caseOf(b, name, d)}
		if err := h.Append(context.Background(), history.Record{BatchID: "previous", CaseName: name, Serial: "sim-0001", Attempt: 1,
			Verdict: suitereport.Passed, Duration: time.Duration(d+protocol.ReplayAutoStartDelayMs) * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, d := range r.local {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, it := range its {
				if _, err := replay.ImportCase(context.Background(), d, it.Case, replay.ImportOptions{Replace: true, Timeout: 2 * time.Minute, PollInterval: 20 * time.Millisecond}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return &benchPhones{rig: r, items: its, hist: h}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss // KiB on Linux
}

// once runs the suite one way and reports its figures.
func (r *benchPhones) once(b *testing.B, mode string, ms []int) {
	n := len(r.phones)
	o := r.options(r.items)
	var device time.Duration
	for _, d := range ms {
		device += time.Duration(d+protocol.ReplayAutoStartDelayMs) * time.Millisecond
	}
	cpu0 := cpuTime()
	start := time.Now()
	var reps []*suitereport.Report
	if mode == "dynamic" {
		o.History = r.hist
		rep, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		reps = append(reps, rep)
	} else {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			var mine []Item
			for k := i; k < len(r.items); k += n {
				mine = append(mine, r.items[k])
			}
			po := o
			po.Items, po.Phones = mine, r.phones[i:i+1]
			wg.Add(1)
			go func() {
				defer wg.Done()
				rep, err := Run(context.Background(), po)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				reps = append(reps, rep)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	var busy, setup time.Duration
	attempts := 0
	for _, rep := range reps {
		for _, d := range rep.Devices {
			if len(d.Timeline) > 0 {
				setup = max(setup, d.Timeline[0].StartedAt.Sub(rep.StartedAt))
			}
		}
		if f := rep.Failure(); f != nil {
			b.Fatalf("%s: %v", mode, f)
		}
		attempts += rep.Counts.Attempts
		for _, d := range rep.Devices {
			for _, s := range d.Timeline {
				busy += s.FinishedAt.Sub(s.StartedAt)
			}
		}
	}
	ideal := time.Duration(float64(device) / benchScale / float64(n))
	busyIdeal := busy / time.Duration(n)
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(setup.Seconds(), "setup-s")
	b.ReportMetric(ideal.Seconds(), "ideal-s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	b.ReportMetric(wall.Seconds()/busyIdeal.Seconds(), "x-busy-ideal")
	b.ReportMetric((wall-setup).Seconds()/ideal.Seconds(), "x-ideal-after-setup")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(attempts), "cpu-ms/run")
	b.ReportMetric(float64(peakRSS())/1024, "peak-rss-MiB")
}
