package readiness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
)

// counterComp is the counter app's launcher activity as the device resolves it.
const counterComp = "com.example.counter/com.example.counter.MainActivity"

func coldBlock(total, wait int, this string) string {
	s := "Starting: Intent { cmp=" + counterComp + " }\nStatus: ok\nLaunchState: COLD\nActivity: " + counterComp + "\n"
	if this != "" {
		s += "ThisTime: " + this + "\n"
	}
	return s + fmt.Sprintf("TotalTime: %d\nWaitTime: %d\nComplete\n", total, wait)
}

// amStartWith makes the device's `am start -W` print outputs, one per
// launch, as a vendor build's am would.
func amStartWith(t *testing.T, dev *sim.Device, outputs ...string) {
	t.Helper()
	var outs []android.CommandOutput
	for _, o := range outputs {
		outs = append(outs, android.CommandOutput{Stdout: o})
	}
	if err := dev.Phone.OverrideCommand("am", []string{"start", "-W"}, outs...); err != nil {
		t.Fatal(err)
	}
}

func TestStartupColdStatistics(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	rep, err := MeasureStartup(context.Background(), dev, StartupOptions{TargetPackage: "com.example.counter", Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LauncherComponent != counterComp || rep.ValidSampleCount != 5 || rep.Unit != "ms" || rep.PercentileMethod != "nearest-rank" ||
		rep.Measurement.WarmPreparation == "" {
		t.Fatalf("%+v", rep)
	}
	if ran(dev, "am start -W -S -n "+counterComp) != 5 {
		t.Fatalf("calls %v", dev.Commands())
	}
	lo, hi := rep.Samples[0].TotalTime, rep.Samples[0].TotalTime
	for _, s := range rep.Samples {
		lo, hi = min(lo, s.TotalTime), max(hi, s.TotalTime)
		if s.LaunchState != "COLD" || s.TotalTime > s.WaitTime {
			t.Fatalf("sample %+v", s)
		}
	}
	tt := rep.Statistics["TotalTime"]
	if !tt.Available || tt.SampleCount != 5 || *tt.Min != lo || *tt.Max != hi || *tt.Median < float64(lo) || *tt.P90 > hi {
		t.Fatalf("TotalTime %+v over samples %+v", tt, rep.Samples)
	}
	if th := rep.Statistics["ThisTime"]; !th.Available {
		t.Fatalf("ThisTime %+v", th)
	}
}

func TestStartupStatisticsNearestRank(t *testing.T) {
	t.Parallel()
	var ss []startupSample
	for _, v := range []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110} {
		ss = append(ss, startupSample{TotalTime: v, WaitTime: v})
	}
	st := startupStatistics(ss)["TotalTime"]
	// n=11: rank ceil(9.9)=10 → 100; median 60; mean 60.
	if *st.P90 != 100 || *st.Median != 60 || *st.Mean != 60 {
		t.Fatalf("%+v", st)
	}
	st = startupStatistics([]startupSample{{TotalTime: 1, WaitTime: 1}, {TotalTime: 2, WaitTime: 2}, {TotalTime: 2, WaitTime: 2}})["TotalTime"]
	if *st.Mean != 1.667 || *st.Median != 2 {
		t.Fatalf("%+v", st)
	}
	th := startupStatistics(ss)["ThisTime"]
	if th.Available || th.SampleCount != 0 || th.Min != nil {
		t.Fatalf("ThisTime without samples: %+v", th)
	}
}

func TestStartupWarmMeasuresSecondBlock(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	warm := coldBlock(900, 950, "") + strings.Replace(coldBlock(120, 130, ""), "COLD", "WARM", 1)
	amStartWith(t, dev, warm)
	rep, err := MeasureStartup(context.Background(), dev, StartupOptions{TargetPackage: "com.example.counter", Mode: startupWarm, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Samples[0]; s.TotalTime != 120 || s.LaunchState != "WARM" || s.ThisTime != nil {
		t.Fatalf("%+v", s)
	}
	if ran(dev, "am start -W -R 2 -n "+counterComp) != 1 || rep.Measurement.WarmPreparation == "" {
		t.Fatalf("calls %v", dev.Commands())
	}
	if rep.Statistics["ThisTime"].Available {
		t.Error("ThisTime available without samples")
	}
}

func TestStartupParseFailures(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			dev := newSimDevice(t)
			amStartWith(t, dev, coldBlock(10, 20, ""), out)
			_, err := MeasureStartup(context.Background(), dev, StartupOptions{TargetPackage: "com.example.counter", Count: 3})
			e := wantCode(t, err, fault.CodeStartupOutputInvalid, fault.Transport)
			if e.Details["iteration"] != 2 || e.Details["validSampleCount"] != 1 {
				t.Fatalf("details %v", e.Details)
			}
		})
	}
}

func TestStartupResolveFallbackAndFailure(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	override := func(name string, args []string, outs ...android.CommandOutput) {
		t.Helper()
		if err := dev.Phone.OverrideCommand(name, args, outs...); err != nil {
			t.Fatal(err)
		}
	}
	// An old build without the package service's cmd: pm answers.
	override("cmd", []string{"package"}, android.CommandOutput{Stderr: "cmd: Can't find service: package", Exit: 255})
	comp, err := ResolveLauncher(context.Background(), dev, "com.example.counter")
	if err != nil || comp != counterComp {
		t.Fatalf("%q %v", comp, err)
	}
	override("cmd", []string{"package"}, android.CommandOutput{Stderr: "cmd: Can't find service: package", Exit: 255})
	override("pm", []string{"resolve-activity"}, android.CommandOutput{Stdout: "No activity found\n"})
	_, err = ResolveLauncher(context.Background(), dev, "com.example.counter")
	e := wantCode(t, err, fault.CodeLauncherNotResolved, fault.Transport)
	a, _ := e.Details["attempts"].([]map[string]any)
	if len(a) != 2 {
		t.Fatalf("attempts %v", e.Details["attempts"])
	}
	// solopi-ai's attempt: the first three words, returnCode, stdout, stderr.
	if cmd, _ := a[0]["command"].([]string); len(cmd) != 3 || cmd[0] != "cmd" || a[0]["returnCode"] != 255 ||
		a[0]["stderr"] != "cmd: Can't find service: package" || a[1]["stdout"] != "No activity found" {
		t.Errorf("attempts %v", a)
	}
	override("cmd", []string{"package"}, android.CommandOutput{Stdout: "com.other/.Main\n"})
	override("pm", []string{"resolve-activity"}, android.CommandOutput{Stdout: "com.other/.Main\n"})
	_, err = ResolveLauncher(context.Background(), dev, "com.example.counter")
	wantCode(t, err, fault.CodeLauncherNotResolved, fault.Transport)
}

func TestStartupInterruptedDuringSleep(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C during the pause after the first launch.
	pauses := clock.NewFake(time.Now())
	go func() {
		if pauses.WaitForSleepers(ctx, 1) == nil {
			cancel()
		}
	}()
	_, err := MeasureStartup(ctx, dev, StartupOptions{TargetPackage: "com.example.counter", Count: 2, Interval: 10 * time.Second, Clock: pauses})
	e := wantCode(t, err, fault.CodeInterrupted, fault.Interrupted)
	samples, _ := e.Details["completedSamples"].([]startupSample)
	if len(samples) != 1 || e.Details["validSampleCount"] != 1 {
		t.Fatalf("details %v", e.Details)
	}
}

func TestStartupLaunchTimeout(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	// am never comes back.
	if err := dev.Phone.StallCommand("am", 0); err != nil {
		t.Fatal(err)
	}
	_, err := MeasureStartup(context.Background(), dev, StartupOptions{TargetPackage: "com.example.counter", Count: 1, LaunchTimeout: 100 * time.Millisecond})
	wantCode(t, err, fault.CodeLaunchTimeout, fault.Timeout)
}

func TestStartupOptionValidation(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	for _, o := range []StartupOptions{
		{TargetPackage: "nodots"}, {TargetPackage: "com.x", Mode: "hot"}, {TargetPackage: "com.x", Count: -1},
		{TargetPackage: "com.x", Interval: -time.Second},
	} {
		_, err := MeasureStartup(context.Background(), dev, o)
		wantCode(t, err, "invalid_option", fault.Invalid)
	}
	if len(dev.Commands()) != 0 {
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
			s, err := parseLaunch(b, "com.example.counter")
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
