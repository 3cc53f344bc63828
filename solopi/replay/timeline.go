package replay

// The step timeline of a run: every step's start, end, status and
// duration, read from the device's own log of the run (the result's
// running.log, pulled into device/ with the evidence). It is written to
// steps.json beside result.json, printed as the output's steps[] and
// rendered in JUnit and report.html. It exists only when the evidence was
// collected (--artifacts): the log is not pulled otherwise.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// ArtifactSteps is the timeline file of a run's evidence.
const ArtifactSteps = "steps.json"

// Step statuses of the timeline.
const (
	StepPassed = "passed"
	StepFailed = "failed"
	// StepUnfinished is a step the log shows started but never ended (the
	// run was cancelled, timed out or lost while it ran).
	StepUnfinished = "unfinished"
)

// Step is one step of the timeline.
type Step struct {
	// Index is the step's position in the case (0-based, as exceptionStep).
	Index  int    `json:"index"`
	StepID string `json:"stepId,omitempty"`
	Action string `json:"action,omitempty"`
	Status string `json:"status"`
	// Start and End are UTC times (RFC 3339, milliseconds); End is empty
	// for an unfinished step.
	Start string `json:"start"`
	End   string `json:"end,omitempty"`
	// OffsetMs is the step's start after the replay's start (the
	// result's startTime).
	OffsetMs   int64  `json:"offsetMs"`
	DurationMs int64  `json:"durationMs"`
	Message    string `json:"message,omitempty"`
	// Screenshot is the evidence path (relative) of the failure's
	// screenshot, when the device took one and it was collected.
	Screenshot string `json:"screenshot,omitempty"`
}

// Timeline is the content of steps.json.
type Timeline struct {
	// Source is the evidence path of the log the steps were read from.
	Source string `json:"source"`
	// ReplayStart is the result's startTime (UTC, RFC 3339).
	ReplayStart string `json:"replayStart"`
	// VideoLeadMs is how long the screen recording ran before the replay
	// was started (host clock); a step's moment in video.mp4 is
	// VideoLeadMs + OffsetMs. Absent without a recording.
	VideoLeadMs *int64 `json:"videoLeadMs,omitempty"`
	Steps       []Step `json:"steps"`
}

var (
	logLine     = lazyregexp.New(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) [A-Z]/[^:]*: (.*)$`)
	logStart    = lazyregexp.New(`^start replay of case `)
	logStep     = lazyregexp.New(`^step (\d+) \(([^)]*)\) (\S+)$`)
	logStepFail = lazyregexp.New(`^step (\d+) failed: (.*)$`)
	logPassed   = lazyregexp.New(`^replay passed$`)
	logFailed   = lazyregexp.New(`^replay failed at step (-?\d+): (.*)$`)
)

const logTimeLayout = "2006-01-02 15:04:05.000"

// parseTimeline reads the steps from a running.log. The log's times are
// the device's local wall clock without a zone; they are placed on the
// UTC timeline by the result's startTime (epoch ms), which the device
// takes as it writes the log's first line. A log without that line, or a
// result without a startTime, gives no timeline (nil).
func parseTimeline(log string, startTimeMs int64) []Step {
	if startTimeMs <= 0 {
		return nil
	}
	var (
		steps  = []Step{}
		anchor time.Time
		shift  time.Duration
		open   = -1 // index in steps of the step still running
	)
	at := func(t time.Time) time.Time { return t.Add(shift).UTC() }
	closeAt := func(t time.Time, status string) {
		if open < 0 {
			return
		}
		s := &steps[open]
		start, _ := time.Parse(time.RFC3339Nano, s.Start)
		end := at(t)
		s.End = end.Format(time.RFC3339Nano)
		s.DurationMs = end.Sub(start).Milliseconds()
		if s.Status == StepUnfinished {
			s.Status = status
		}
		open = -1
	}
	for _, line := range strings.Split(log, "\n") {
		m := logLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		t, err := time.Parse(logTimeLayout, m[1])
		if err != nil {
			continue
		}
		msg := m[2]
		if anchor.IsZero() {
			if !logStart.MatchString(msg) {
				continue
			}
			anchor = t
			shift = time.UnixMilli(startTimeMs).UTC().Sub(t)
			continue
		}
		switch {
		case logStep.MatchString(msg):
			sm := logStep.FindStringSubmatch(msg)
			closeAt(t, StepPassed)
			i, _ := strconv.Atoi(sm[1])
			start := at(t)
			steps = append(steps, Step{Index: i, StepID: sm[2], Action: sm[3], Status: StepUnfinished,
				Start: start.Format(time.RFC3339Nano), OffsetMs: start.Sub(at(anchor)).Milliseconds()})
			open = len(steps) - 1
		case logStepFail.MatchString(msg):
			sm := logStepFail.FindStringSubmatch(msg)
			if open >= 0 && strconv.Itoa(steps[open].Index) == sm[1] {
				steps[open].Status = StepFailed
				steps[open].Message = sm[2]
				closeAt(t, StepFailed)
			}
		case logPassed.MatchString(msg):
			closeAt(t, StepPassed)
		case logFailed.MatchString(msg):
			sm := logFailed.FindStringSubmatch(msg)
			closeAt(t, StepFailed)
			i, _ := strconv.Atoi(sm[1])
			if i >= 0 && !hasStep(steps, i) {
				// The replay failed before the step began (the target
				// app did not launch): the step is there, with no time.
				start := at(t)
				steps = append(steps, Step{Index: i, Status: StepFailed, Message: sm[2],
					Start: start.Format(time.RFC3339Nano), End: start.Format(time.RFC3339Nano), OffsetMs: start.Sub(at(anchor)).Milliseconds()})
			}
		}
	}
	if anchor.IsZero() {
		return nil
	}
	return steps
}

func hasStep(steps []Step, i int) bool {
	for _, s := range steps {
		if s.Index == i {
			return true
		}
	}
	return false
}

// FailedStep is the timeline's failed step, nil when none failed.
func FailedStep(steps []Step) *Step {
	for i := range steps {
		if steps[i].Status == StepFailed {
			return &steps[i]
		}
	}
	return nil
}

// junitLines renders the timeline for a testcase's <system-out>: one line
// per step with its name, status and duration.
func junitLines(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		name := s.Action
		if s.StepID != "" {
			name += " " + s.StepID
		}
		fmt.Fprintf(&b, "step %d %s: %s %.3fs", s.Index, strings.TrimSpace(name), s.Status, float64(s.DurationMs)/1000)
		if s.Message != "" {
			fmt.Fprintf(&b, " (%s)", s.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// failureShot is the screenshotFiles key of the failure screenshot of step
// i (as the device names it).
func failureShot(i int) string { return fmt.Sprintf("failure-step-%d", i) }
