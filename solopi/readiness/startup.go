package readiness

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Startup modes.
const (
	StartupCold = "cold"
	startupWarm = "warm"
)

// StartupOptions configure MeasureStartup.
type StartupOptions struct {
	TargetPackage string
	Mode          string        // cold (default) or warm
	Count         int           // iterations, default 5
	Interval      time.Duration // pause between iterations (>= 0)
	LaunchTimeout time.Duration // per am start, default 30 s
	Clock         clock.Clock   // the pauses (nil: the real clock)
}

// startupSample is one measured launch, with upstream's field names.
type startupSample struct {
	Iteration   int    `json:"iteration"`
	LaunchState string `json:"LaunchState"`
	Activity    string `json:"Activity"`
	ThisTime    *int64 `json:"ThisTime"`
	TotalTime   int64  `json:"TotalTime"`
	WaitTime    int64  `json:"WaitTime"`
}

// metricStats summarises one metric over the valid samples.
type metricStats struct {
	Available   bool     `json:"available"`
	SampleCount int      `json:"sampleCount"`
	Min         *int64   `json:"min"`
	Max         *int64   `json:"max"`
	Mean        *float64 `json:"mean"`
	Median      *float64 `json:"median"`
	P90         *int64   `json:"p90"`
}

// startupMeasurement says what the numbers mean.
type startupMeasurement struct {
	Source           string `json:"source"`
	Command          string `json:"command"`
	WarmPreparation  string `json:"warmPreparation"`
	VisualCompletion bool   `json:"visualCompletion"`
	Note             string `json:"note"`
}

// startupReport is the startup-time command's object.
type startupReport struct {
	Success              bool                   `json:"success"`
	TargetPackage        string                 `json:"targetPackage"`
	LauncherComponent    string                 `json:"launcherComponent"`
	Mode                 string                 `json:"mode"`
	Iterations           int                    `json:"iterations"`
	IntervalSeconds      float64                `json:"intervalSeconds"`
	LaunchTimeoutSeconds float64                `json:"launchTimeoutSeconds"`
	ValidSampleCount     int                    `json:"validSampleCount"`
	Unit                 string                 `json:"unit"`
	Measurement          startupMeasurement     `json:"measurement"`
	Samples              []startupSample        `json:"samples"`
	Statistics           map[string]metricStats `json:"statistics"`
	PercentileMethod     string                 `json:"percentileMethod"`
}

var launcherComponentLine = lazyregexp.New(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+/[A-Za-z0-9_.$]+$`)

// ResolveLauncher finds the launcher activity of pkg with `cmd package
// resolve-activity --brief`, falling back to `pm resolve-activity` (older
// Android has no `cmd package`).
func ResolveLauncher(ctx context.Context, t device.Transport, pkg string) (string, error) {
	args := []string{"resolve-activity", "--brief", "-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER", pkg}
	var attempts []map[string]any
	for _, prefix := range [][]string{{"cmd", "package"}, {"pm"}} {
		argv := append(slices.Clone(prefix), args...)
		cmd := device.ShellJoin(argv...)
		stdout, stderr, code, err := t.Shell(ctx, cmd)
		if err != nil {
			if ie := device.CtxErr(ctx, err); ie != nil {
				return "", ie
			}
			return "", fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while resolving the launcher activity", err)
		}
		comp, why := parseResolved(string(stdout), pkg)
		if code == 0 && comp != "" {
			return comp, nil
		}
		if code != 0 && why == "" {
			why = fmt.Sprintf("exit code %d", code)
		}
		// solopi-ai's fields (command: the first three words, returnCode,
		// stdout, stderr) beside ours (the whole command line, exitCode,
		// reason, the combined output).
		attempts = append(attempts, map[string]any{"command": argv[:3], "returnCode": code,
			"stdout": device.Truncate(strings.TrimSpace(string(stdout)), 2000), "stderr": device.Truncate(strings.TrimSpace(string(stderr)), 2000),
			"commandLine": cmd, "exitCode": code, "reason": why,
			"output": device.Truncate(strings.TrimSpace(string(stdout)+"\n"+string(stderr)), 500)})
	}
	return "", fault.Newf(fault.Transport, fault.CodeLauncherNotResolved, "no launcher activity of %s could be resolved", pkg).
		With("targetPackage", pkg).With("attempts", attempts).
		WithUserAction("Check that " + pkg + " is installed on the device and has a launcher icon.")
}

// parseResolved requires exactly one pkg/cls line, of the same package.
func parseResolved(out, pkg string) (string, string) {
	var comps []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if launcherComponentLine.MatchString(line) {
			comps = append(comps, line)
		}
	}
	switch {
	case len(comps) == 0:
		return "", "no component in the output"
	case len(comps) > 1:
		return "", "more than one component in the output"
	case !strings.HasPrefix(comps[0], pkg+"/"):
		return "", "the component " + comps[0] + " belongs to another package"
	}
	return comps[0], ""
}

// amResultBlock is one result block of `am start -W`.
type amResultBlock struct {
	fields   map[string]string
	complete bool
}

// ParseAmStart splits `am start -W` output into its blocks; each block ends
// at its "Complete" line. Duplicate fields within a block are an error.
func ParseAmStart(out string) ([]map[string]string, error) {
	var blocks []map[string]string
	cur := amResultBlock{fields: map[string]string{}}
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case line == "Complete":
			cur.complete = true
			blocks = append(blocks, cur.fields)
			cur = amResultBlock{fields: map[string]string{}}
			continue
		case strings.HasPrefix(line, "Starting:"), strings.HasPrefix(line, "Warning:"):
			continue
		case strings.HasPrefix(line, "Error:") || strings.HasPrefix(line, "Error type"):
			return nil, fmt.Errorf("am start reported %q", line)
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := cur.fields[k]; dup {
			return nil, fmt.Errorf("field %s appears twice in one result block", k)
		}
		cur.fields[k] = v
	}
	if len(cur.fields) > 0 {
		return nil, fmt.Errorf("a result block has no Complete line")
	}
	return blocks, nil
}

// parseLaunch validates one block strictly and returns its sample.
func parseLaunch(f map[string]string, pkg string) (startupSample, error) {
	var s startupSample
	if st := f["Status"]; st != "ok" {
		return s, fmt.Errorf("Status is %q, not ok", st)
	}
	switch f["LaunchState"] {
	case "COLD", "WARM", "HOT":
		s.LaunchState = f["LaunchState"]
	default:
		return s, fmt.Errorf("LaunchState %q is not COLD, WARM or HOT", f["LaunchState"])
	}
	act := f["Activity"]
	if !strings.HasPrefix(act, pkg+"/") || len(act) == len(pkg)+1 {
		return s, fmt.Errorf("Activity %q is not in package %s", act, pkg)
	}
	s.Activity = act
	num := func(name string) (int64, bool, error) {
		v, ok := f[name]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, true, fmt.Errorf("%s %q is not a non-negative integer", name, v)
		}
		return n, true, nil
	}
	var ok bool
	var err error
	if s.TotalTime, ok, err = num("TotalTime"); err != nil {
		return s, err
	} else if !ok {
		return s, fmt.Errorf("TotalTime is missing")
	}
	if s.WaitTime, ok, err = num("WaitTime"); err != nil {
		return s, err
	} else if !ok {
		return s, fmt.Errorf("WaitTime is missing")
	}
	this, ok, err := num("ThisTime")
	if err != nil {
		return s, err
	}
	if ok {
		// Android 16 no longer prints ThisTime; when present it is bounded.
		if this > s.TotalTime {
			return s, fmt.Errorf("ThisTime %d exceeds TotalTime %d", this, s.TotalTime)
		}
		s.ThisTime = &this
	}
	if s.TotalTime > s.WaitTime {
		return s, fmt.Errorf("TotalTime %d exceeds WaitTime %d", s.TotalTime, s.WaitTime)
	}
	return s, nil
}

// Normalize fills the defaults and validates the options (exit 3), so a
// caller can refuse bad options before selecting a device.
func (o *StartupOptions) Normalize() error {
	if o.Mode == "" {
		o.Mode = StartupCold
	}
	if o.Count == 0 {
		o.Count = 5
	}
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 30 * time.Second
	}
	switch {
	case !protocol.ValidPackageName(o.TargetPackage):
		return fault.Usage(fault.CodeInvalidOption, "--target-package must look like com.example.app").With("targetPackage", o.TargetPackage)
	case o.Mode != StartupCold && o.Mode != startupWarm:
		return fault.Usage(fault.CodeInvalidOption, "--mode must be cold or warm")
	case o.Count < 1 || o.Count > 1000:
		return fault.Usage(fault.CodeInvalidOption, "--count must be between 1 and 1000")
	case o.Interval < 0:
		return fault.Usage(fault.CodeInvalidOption, "--interval must not be negative")
	}
	return nil
}

// startupLaunchCommand is the am start line of one iteration.
func startupLaunchCommand(mode, comp string) string {
	if mode == startupWarm {
		// -R 2: am backs out of the first launch and starts again while the
		// process lives; the second block is the warm launch.
		return device.ShellJoin("am", "start", "-W", "-R", "2", "-n", comp)
	}
	return device.ShellJoin("am", "start", "-W", "-S", "-n", comp)
}

// MeasureStartup measures launch times with the Activity Manager over ADB
// only (no SoloPi session). Any failed iteration fails the whole command:
// partial statistics would misrepresent the app.
func MeasureStartup(ctx context.Context, t device.Transport, o StartupOptions) (*startupReport, error) {
	if err := o.Normalize(); err != nil {
		return nil, err
	}
	comp, err := ResolveLauncher(ctx, t, o.TargetPackage)
	if err != nil {
		return nil, err
	}
	cmd := startupLaunchCommand(o.Mode, comp)
	rep := &startupReport{
		TargetPackage: o.TargetPackage, LauncherComponent: comp, Mode: o.Mode, Iterations: o.Count,
		IntervalSeconds: o.Interval.Seconds(), LaunchTimeoutSeconds: o.LaunchTimeout.Seconds(), Unit: "ms",
		Measurement: startupMeasurement{
			Source: "Android Activity Manager", Command: cmd, VisualCompletion: false,
			Note: "TotalTime/WaitTime are the Activity Manager's launch times up to the first drawn frame; they do not prove the screen finished loading its content.",
		},
		Samples: []startupSample{}, PercentileMethod: "nearest-rank",
	}
	// Always present, as solopi-ai prints it: what the warm mode does
	// before the launch it measures.
	rep.Measurement.WarmPreparation = "warm mode: am start -W -R 2, the first launch warms the process, am presses back, the second launch is measured"
	if o.Mode == StartupCold {
		rep.Measurement.WarmPreparation = "none in cold mode (am start -W -S stops the app first); " + rep.Measurement.WarmPreparation
	}
	fail := func(e *fault.Error, i int) error {
		return e.With("iteration", i).With("validSampleCount", len(rep.Samples)).With("completedSamples", rep.Samples).
			With("targetPackage", o.TargetPackage).With("launcherComponent", comp).With("component", comp).With("mode", o.Mode)
	}
	// out is solopi-ai's stdout/stderr of a failed launch.
	out := func(e *fault.Error, stdout, stderr []byte) *fault.Error {
		return e.With("stdout", device.Truncate(strings.TrimSpace(string(stdout)), 2000)).
			With("stderr", device.Truncate(strings.TrimSpace(string(stderr)), 2000))
	}
	for i := 1; i <= o.Count; i++ {
		if i > 1 {
			if err := device.Pause(ctx, o.Clock, o.Interval); err != nil {
				return nil, fail(fault.From(err), i)
			}
		}
		lctx, cancel := context.WithTimeout(ctx, o.LaunchTimeout)
		stdout, stderr, code, err := t.Shell(lctx, cmd)
		timedOut := lctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil, fail(fault.From(device.Interrupted(ctx)), i)
		case timedOut:
			return nil, fail(fault.Newf(fault.Timeout, fault.CodeLaunchTimeout, "am start did not finish within --launch-timeout (%s)", o.LaunchTimeout), i)
		case err != nil:
			return nil, fail(fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while launching the app", err), i)
		case code != 0:
			return nil, fail(out(fault.Newf(fault.Transport, fault.CodeLaunchFailed, "am start exited with code %d: %s", code, device.FirstLine(string(stderr)+string(stdout))), stdout, stderr).
				With("returnCode", code), i)
		}
		s, err := startupSampleOf(string(stdout), o)
		if err != nil {
			return nil, fail(out(fault.Wrap(fault.Transport, fault.CodeStartupOutputInvalid, "the am start output cannot be used as a measurement: "+err.Error(), err).
				With("output", device.Truncate(string(stdout), 2000)), stdout, stderr), i)
		}
		s.Iteration = i
		rep.Samples = append(rep.Samples, s)
	}
	rep.ValidSampleCount = len(rep.Samples)
	rep.Statistics = startupStatistics(rep.Samples)
	rep.Success = true
	return rep, nil
}

func startupSampleOf(out string, o StartupOptions) (startupSample, error) {
	blocks, err := ParseAmStart(out)
	if err != nil {
		return startupSample{}, err
	}
	want := 1
	if o.Mode == startupWarm {
		want = 2
	}
	if len(blocks) != want {
		return startupSample{}, fmt.Errorf("expected %d complete result block(s), got %d", want, len(blocks))
	}
	return parseLaunch(blocks[want-1], o.TargetPackage)
}

// startupStatistics computes min, max, mean (3 decimals), median and the
// nearest-rank p90 of each metric.
func startupStatistics(samples []startupSample) map[string]metricStats {
	pick := map[string]func(startupSample) (int64, bool){
		"ThisTime": func(s startupSample) (int64, bool) {
			if s.ThisTime == nil {
				return 0, false
			}
			return *s.ThisTime, true
		},
		"TotalTime": func(s startupSample) (int64, bool) { return s.TotalTime, true },
		"WaitTime":  func(s startupSample) (int64, bool) { return s.WaitTime, true },
	}
	out := map[string]metricStats{}
	for name, f := range pick {
		var vals []int64
		for _, s := range samples {
			if v, ok := f(s); ok {
				vals = append(vals, v)
			}
		}
		out[name] = describeMetric(vals)
	}
	return out
}

func describeMetric(vals []int64) metricStats {
	st := metricStats{SampleCount: len(vals)}
	if len(vals) == 0 {
		return st
	}
	st.Available = true
	s := slices.Clone(vals)
	slices.Sort(s)
	lo, hi := s[0], s[len(s)-1]
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	mean := math.Round(sum/float64(len(s))*1000) / 1000
	var median float64
	if n := len(s); n%2 == 1 {
		median = float64(s[n/2])
	} else {
		median = float64(s[n/2-1]+s[n/2]) / 2
	}
	rank := int(math.Ceil(0.9 * float64(len(s))))
	p90 := s[max(rank, 1)-1]
	st.Min, st.Max, st.Mean, st.Median, st.P90 = &lo, &hi, &mean, &median, &p90
	return st
}
