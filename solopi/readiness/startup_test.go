package readiness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

const counterComp = "com.example.counter/.MainActivity"

func coldBlock(total, wait int, this string) string {
	s := "Starting: Intent { cmp=" + counterComp + " }\nStatus: ok\nLaunchState: COLD\nActivity: " + counterComp + "\n"
	if this != "" {
		s += "ThisTime: " + this + "\n"
	}
	return s + fmt.Sprintf("TotalTime: %d\nWaitTime: %d\nComplete\n", total, wait)
}

func startupTransport(t *testing.T, launches []string) *soloTransport {
	ft := newSoloTransport(t, newFakeSoloPi())
	ft.on("cmd package resolve-activity", func(string) shellReply {
		return shellReply{stdout: "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n" + counterComp + "\n"}
	})
	i := 0
	ft.on("am start -W ", func(cmd string) shellReply {
		if i >= len(launches) {
			t.Errorf("unexpected launch %q", cmd)
			return shellReply{code: 1}
		}
		i++
		return shellReply{stdout: launches[i-1]}
	})
	return ft
}

func TestStartupColdStatistics(t *testing.T) {
	totals := []int{500, 300, 400, 200, 100}
	var outs []string
	for _, v := range totals {
		outs = append(outs, coldBlock(v, v+10, fmt.Sprint(v-5)))
	}
	ft := startupTransport(t, outs)
	rep, err := MeasureStartup(context.Background(), ft, StartupOptions{TargetPackage: "com.example.counter", Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LauncherComponent != counterComp || rep.ValidSampleCount != 5 || rep.Unit != "ms" || rep.PercentileMethod != "nearest-rank" {
		t.Fatalf("%+v", rep)
	}
	if ft.ran("am start -W -S -n "+counterComp) != 5 {
		t.Fatalf("calls %v", ft.shellCalls())
	}
	tt := rep.Statistics["TotalTime"]
	if !tt.Available || tt.SampleCount != 5 || *tt.Min != 100 || *tt.Max != 500 || *tt.Mean != 300 || *tt.Median != 300 || *tt.P90 != 500 {
		t.Fatalf("TotalTime %+v", tt)
	}
	if w := rep.Statistics["WaitTime"]; *w.Min != 110 || *w.P90 != 510 {
		t.Fatalf("WaitTime %+v", w)
	}
	if th := rep.Statistics["ThisTime"]; !th.Available || *th.Min != 95 {
		t.Fatalf("ThisTime %+v", th)
	}
}

func TestStartupStatisticsNearestRank(t *testing.T) {
	var ss []StartupSample
	for _, v := range []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110} {
		ss = append(ss, StartupSample{TotalTime: v, WaitTime: v})
	}
	st := StartupStatistics(ss)["TotalTime"]
	// n=11: rank ceil(9.9)=10 → 100; median 60; mean 60.
	if *st.P90 != 100 || *st.Median != 60 || *st.Mean != 60 {
		t.Fatalf("%+v", st)
	}
	st = StartupStatistics([]StartupSample{{TotalTime: 1, WaitTime: 1}, {TotalTime: 2, WaitTime: 2}, {TotalTime: 2, WaitTime: 2}})["TotalTime"]
	if *st.Mean != 1.667 || *st.Median != 2 {
		t.Fatalf("%+v", st)
	}
	th := StartupStatistics(ss)["ThisTime"]
	if th.Available || th.SampleCount != 0 || th.Min != nil {
		t.Fatalf("ThisTime without samples: %+v", th)
	}
}

func TestStartupWarmMeasuresSecondBlock(t *testing.T) {
	warm := coldBlock(900, 950, "") + strings.Replace(coldBlock(120, 130, ""), "COLD", "WARM", 1)
	ft := startupTransport(t, []string{warm})
	rep, err := MeasureStartup(context.Background(), ft, StartupOptions{TargetPackage: "com.example.counter", Mode: StartupWarm, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Samples[0]; s.TotalTime != 120 || s.LaunchState != "WARM" || s.ThisTime != nil {
		t.Fatalf("%+v", s)
	}
	if ft.ran("am start -W -R 2 -n "+counterComp) != 1 || rep.Measurement.WarmPreparation == "" {
		t.Fatalf("calls %v", ft.shellCalls())
	}
	if rep.Statistics["ThisTime"].Available {
		t.Error("ThisTime available without samples")
	}
}

func TestStartupParseFailures(t *testing.T) {
	bad := map[string]string{
		"status":          strings.Replace(coldBlock(1, 2, ""), "Status: ok", "Status: timeout", 1),
		"launch state":    strings.Replace(coldBlock(1, 2, ""), "COLD", "UNKNOWN (0)", 1),
		"other package":   strings.Replace(coldBlock(1, 2, ""), "Activity: "+counterComp, "Activity: com.other/.X", 1),
		"no total":        strings.Replace(coldBlock(1, 2, ""), "TotalTime: 1\n", "", 1),
		"float total":     strings.Replace(coldBlock(1, 2, ""), "TotalTime: 1", "TotalTime: 1.5", 1),
		"duplicate":       strings.Replace(coldBlock(1, 2, ""), "WaitTime: 2", "WaitTime: 2\nWaitTime: 3", 1),
		"no complete":     strings.Replace(coldBlock(1, 2, ""), "Complete\n", "", 1),
		"total > wait":    coldBlock(5, 2, ""),
		"this > total":    coldBlock(5, 9, "6"),
		"two blocks cold": coldBlock(1, 2, "") + coldBlock(1, 2, ""),
		"error line":      "Error: Activity not started, unable to resolve Intent\n",
	}
	for name, out := range bad {
		t.Run(name, func(t *testing.T) {
			ft := startupTransport(t, []string{coldBlock(10, 20, ""), out})
			_, err := MeasureStartup(context.Background(), ft, StartupOptions{TargetPackage: "com.example.counter", Count: 3})
			e := wantCode(t, err, CodeStartupParseFailed, fault.Transport)
			if e.Details["iteration"] != 2 || e.Details["validSampleCount"] != 1 {
				t.Fatalf("details %v", e.Details)
			}
		})
	}
}

func TestStartupResolveFallbackAndFailure(t *testing.T) {
	ft := newSoloTransport(t, newFakeSoloPi())
	ft.on("cmd package", func(string) shellReply { return shellReply{stderr: "cmd: Can't find service: package", code: 255} })
	ft.on("pm resolve-activity", func(string) shellReply { return shellReply{stdout: counterComp + "\n"} })
	comp, err := ResolveLauncher(context.Background(), ft, "com.example.counter")
	if err != nil || comp != counterComp {
		t.Fatalf("%q %v", comp, err)
	}
	ft.on("pm resolve-activity", func(string) shellReply { return shellReply{stdout: "No activity found\n"} })
	_, err = ResolveLauncher(context.Background(), ft, "com.example.counter")
	e := wantCode(t, err, CodeLauncherNotResolved, fault.Transport)
	if a, _ := e.Details["attempts"].([]map[string]any); len(a) != 2 {
		t.Fatalf("attempts %v", e.Details["attempts"])
	}
	ft.on("cmd package", func(string) shellReply { return shellReply{stdout: "com.other/.Main\n"} })
	_, err = ResolveLauncher(context.Background(), ft, "com.example.counter")
	wantCode(t, err, CodeLauncherNotResolved, fault.Transport)
}

func TestStartupInterruptedDuringSleep(t *testing.T) {
	ft := startupTransport(t, []string{coldBlock(10, 20, ""), coldBlock(10, 20, "")})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := MeasureStartup(ctx, ft, StartupOptions{TargetPackage: "com.example.counter", Count: 2, Interval: 10 * time.Second})
	e := wantCode(t, err, device.CodeInterrupted, fault.Interrupted)
	if time.Since(start) > 2*time.Second {
		t.Error("the sleep did not stop on interrupt")
	}
	samples, _ := e.Details["completedSamples"].([]StartupSample)
	if len(samples) != 1 || e.Details["validSampleCount"] != 1 {
		t.Fatalf("details %v", e.Details)
	}
}

func TestStartupLaunchTimeout(t *testing.T) {
	ft := newSoloTransport(t, newFakeSoloPi())
	ft.on("cmd package", func(string) shellReply { return shellReply{stdout: counterComp + "\n"} })
	block := make(chan struct{})
	defer close(block)
	ft.on("am start", func(string) shellReply {
		<-block
		return shellReply{}
	})
	// The scripted shell ignores ctx once inside a rule, like a hung adb
	// call would without deadlines; wrap it to honour ctx as the adb client does.
	tr := ctxShell{ft}
	_, err := MeasureStartup(context.Background(), tr, StartupOptions{TargetPackage: "com.example.counter", Count: 1, LaunchTimeout: 100 * time.Millisecond})
	wantCode(t, err, CodeLaunchTimeout, fault.Timeout)
}

// ctxShell makes Shell return when ctx ends, as the adb client does.
type ctxShell struct{ *soloTransport }

func (c ctxShell) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	type res struct {
		o, e []byte
		c    int
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		o, e, code, err := c.soloTransport.Shell(ctx, cmd)
		ch <- res{o, e, code, err}
	}()
	select {
	case r := <-ch:
		return r.o, r.e, r.c, r.err
	case <-ctx.Done():
		return nil, nil, 0, ctx.Err()
	}
}

func TestStartupOptionValidation(t *testing.T) {
	ft := newSoloTransport(t, newFakeSoloPi())
	for _, o := range []StartupOptions{
		{TargetPackage: "nodots"}, {TargetPackage: "com.x", Mode: "hot"}, {TargetPackage: "com.x", Count: -1},
		{TargetPackage: "com.x", Interval: -time.Second},
	} {
		_, err := MeasureStartup(context.Background(), ft, o)
		wantCode(t, err, "invalid_option", fault.Invalid)
	}
	if len(ft.shellCalls()) != 0 {
		t.Error("invalid options reached the device")
	}
}

// FuzzParseAmStart: whatever am prints, a sample that parses keeps the
// documented ordering and belongs to the target package.
func FuzzParseAmStart(f *testing.F) {
	f.Add(coldBlock(100, 120, "90"))
	f.Add(coldBlock(100, 120, "") + coldBlock(50, 60, ""))
	f.Add("Status: ok\nLaunchState: HOT\nActivity: com.example.counter/.A\nTotalTime: 1\nWaitTime: 1\nComplete\n")
	f.Add("Error: Activity not started\n")
	f.Fuzz(func(t *testing.T, out string) {
		blocks, err := ParseAmStart(out)
		if err != nil {
			return
		}
		for _, b := range blocks {
			s, err := ParseLaunch(b, "com.example.counter")
			if err != nil {
				continue
			}
			if s.TotalTime > s.WaitTime || (s.ThisTime != nil && *s.ThisTime > s.TotalTime) ||
				!strings.HasPrefix(s.Activity, "com.example.counter/") {
				t.Fatalf("accepted an inconsistent sample %+v from %q", s, out)
			}
		}
	})
}
