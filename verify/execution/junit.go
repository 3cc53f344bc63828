package execution

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

// jUnitSuites renders a report for CI (verify-run --junit): one suite per
// scenario, one testcase per checkpoint (a failed checkpoint is a
// <failure> naming its oracle, the expected and the actual value; a
// not_tested one is <skipped> with its reason, or an <error> when the
// reason is an infrastructure fault), plus a "cleanup" testcase when the
// scenario's cleanup ran or should have. Evidence files are
// attached to the testcases that refer to them. A checkpoint's time is
// the run time of the segments that judge it, the cleanup's that of the
// cleanup segments (times: segmentTimes). A testcase's <system-out> lists
// those segments' step timelines (tl), one line per step.
func jUnitSuites(r *verify.Report, plan *verify.Plan, times map[segmentKey]time.Duration, tl *Timeline) []artifacts.JUnitSuite {
	planned := map[string]*verify.Scenario{}
	if plan != nil {
		for _, sc := range plan.Scenarios {
			planned[sc.ID] = sc
		}
	}
	// spent is the time of the scenario's segments that match.
	spent := func(scenarioID string, match func(*verify.Segment) bool) time.Duration {
		var d time.Duration
		if sc := planned[scenarioID]; sc != nil {
			for i := range sc.Segments {
				if match(&sc.Segments[i]) {
					d += times[segmentKey{scenarioID, sc.Segments[i].ID}]
				}
			}
		}
		return d
	}
	// steps is the timeline of the scenario's segments that match.
	steps := func(scenarioID string, match func(*verify.Segment) bool) string {
		sc := planned[scenarioID]
		if sc == nil || tl == nil {
			return ""
		}
		var b strings.Builder
		for i := range sc.Segments {
			if match(&sc.Segments[i]) {
				for _, st := range tl.Segments {
					if st.ScenarioID == scenarioID && st.SegmentID == sc.Segments[i].ID {
						stepLines(&b, st)
					}
				}
			}
		}
		return b.String()
	}
	files := map[string]string{}
	for _, e := range r.Evidence {
		if e.Path != "" {
			files[e.ID] = e.Path
		}
	}
	attach := func(refs []string) []string {
		var out []string
		for _, ref := range refs {
			if p, ok := files[ref]; ok {
				out = append(out, p)
			}
		}
		return out
	}
	var suites []artifacts.JUnitSuite
	for _, s := range r.Scenarios {
		suite := artifacts.JUnitSuite{
			Name: s.ScenarioID,
			Properties: []artifacts.JUnitProperty{
				{Name: "requirementId", Value: r.RequirementID}, {Name: "route", Value: s.Route}, {Name: "status", Value: s.Status},
			},
		}
		if s.Failure != nil {
			suite.Properties = append(suite.Properties, artifacts.JUnitProperty{Name: "failureCategory", Value: s.Failure.Category})
		}
		classname := r.RequirementID + "." + s.ScenarioID
		for _, c := range s.Checkpoints {
			judges := func(seg *verify.Segment) bool { return slices.Contains(seg.CheckpointIDs, c.CheckpointID) }
			tc := artifacts.JUnitCase{
				Name: c.CheckpointID, Classname: classname, Attachments: attach(c.EvidenceRefs),
				Duration: spent(s.ScenarioID, judges), SystemOut: steps(s.ScenarioID, judges),
				Properties: []artifacts.JUnitProperty{{Name: "acceptanceCriteria", Value: strings.Join(c.AcceptanceCriteria, ",")}},
			}
			if c.Judge != "" {
				tc.Properties = append(tc.Properties, artifacts.JUnitProperty{Name: "judge", Value: c.Judge})
			}
			switch c.Status {
			case verify.Failed:
				tc.Failure = &artifacts.JUnitProblem{Message: checkpointFailure(c), Type: c.Reason, Text: c.Detail}
			case verify.NotTested:
				tc.Skipped, tc.Error = notTested("not tested: "+reasonText(c.Reason), c.Reason)
			}
			suite.Cases = append(suite.Cases, tc)
		}
		if s.Cleanup.Status != "not_required" {
			cleanup := func(seg *verify.Segment) bool { return seg.Phase == verify.PhaseCleanup }
			tc := artifacts.JUnitCase{Name: "cleanup", Classname: classname, Attachments: attach(s.Cleanup.EvidenceRefs),
				Duration: spent(s.ScenarioID, cleanup), SystemOut: steps(s.ScenarioID, cleanup)}
			switch s.Cleanup.Status {
			case verify.Failed:
				tc.Failure = &artifacts.JUnitProblem{Message: "required cleanup failed: the scenario fails even if every checkpoint passed", Type: verify.CategoryCleanupFailure}
			case verify.NotTested:
				reason := ""
				if s.Failure != nil {
					reason = s.Failure.Reason
				}
				tc.Skipped, tc.Error = notTested("cleanup did not run or gave no verdict: "+reasonText(reason), reason)
			}
			suite.Cases = append(suite.Cases, tc)
		}
		suites = append(suites, suite)
	}
	return suites
}

// writeJUnit writes the report's JUnit XML to path, every text passed
// through redact (the run's: owner tokens and the requirement's secrets).
// The testcases' times come from the run's events (eventsPath).
func writeJUnit(path string, r *verify.Report, plan *verify.Plan, eventsPath string, tl *Timeline, redact func(string) string) error {
	times, err := segmentTimes(eventsPath)
	if err != nil {
		return err
	}
	suites := jUnitSuites(r, plan, times, tl)
	for i := range suites {
		redactSuite(&suites[i], redact)
	}
	return artifacts.WriteJUnit(path, false, "verification "+r.RequirementID, suites...)
}

func redactSuite(s *artifacts.JUnitSuite, redact func(string) string) {
	props := func(ps []artifacts.JUnitProperty) {
		for i := range ps {
			ps[i].Value = redact(ps[i].Value)
		}
	}
	problem := func(p *artifacts.JUnitProblem) {
		if p != nil {
			p.Message, p.Text = redact(p.Message), redact(p.Text)
		}
	}
	props(s.Properties)
	for i := range s.Cases {
		c := &s.Cases[i]
		props(c.Properties)
		problem(c.Failure)
		problem(c.Error)
		problem(c.Skipped)
		c.SystemOut = redact(c.SystemOut)
	}
}

// stepLines writes a segment's timeline: the segment, then each step
// with its start after the run's, its duration, its message and, with a
// recording, its moment in the video.
func stepLines(b *strings.Builder, st SegmentTimeline) {
	fmt.Fprintf(b, "segment %s (%s) %s +%s %s", st.SegmentID, st.Phase, st.State, msText(st.OffsetMs), msText(st.DurationMs))
	if st.Reason != "" {
		fmt.Fprintf(b, " %s", st.Reason)
	}
	b.WriteString("\n")
	for _, s := range st.Steps {
		fmt.Fprintf(b, "  step %d %s %s %s +%s %s", s.Index, s.StepID, s.Action, s.Status, msText(s.OffsetMs), msText(s.DurationMs))
		if s.Message != "" {
			fmt.Fprintf(b, ": %s", s.Message)
		}
		if s.Video != nil {
			fmt.Fprintf(b, " [video %s#t=%.1f]", s.Video.File, s.Video.Seconds)
		}
		b.WriteString("\n")
	}
}

func msText(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) + "s" }

// notTested is a not-tested testcase: skipped, or an error when an
// infrastructure fault kept it from running (CI tells a broken phone from
// a test it did not reach).
func notTested(msg, reason string) (skipped, errored *artifacts.JUnitProblem) {
	p := &artifacts.JUnitProblem{Message: msg, Type: reason}
	if verify.Infrastructure(reason) {
		return nil, p
	}
	return p, nil
}

func reasonText(r string) string {
	if r == "" {
		return "no reason given"
	}
	return r
}

// checkpointFailure names the oracle, the expected and the actual value.
func checkpointFailure(c verify.CheckpointResult) string {
	o := c.Oracle
	if o["type"] == "vision" {
		return fmt.Sprintf("vision oracle %q was not seen on the final screen: %s", o["assertion"], c.Detail)
	}
	actual := "no single node matched the selector"
	if c.Actual != nil {
		actual = fmt.Sprintf("%q", *c.Actual)
	}
	if !c.Dynamic {
		actual = "the compiled ASSERT failed on the phone (see the replay evidence)"
	}
	return fmt.Sprintf("%s: ui oracle %s %v %s %q; actual %s", c.Reason, selectorText(o["selector"]), o["field"], o["operator"], o["expected"], actual)
}

func selectorText(v any) string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// segmentKey names one segment of one scenario.
type segmentKey struct{ scenario, segment string }

// segmentTimes reads the run's events.jsonl: each segment's time from its
// segment_started to its segment_finished event (their millisecond
// timestamps), summed when a segment ran more than once (on several
// phones). A segment that never finished has no time.
func segmentTimes(eventsPath string) (map[segmentKey]time.Duration, error) {
	b, err := os.ReadFile(eventsPath)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot read the run's events", err).With("file", eventsPath)
	}
	type event struct {
		Type      string `json:"type"`
		Timestamp int64  `json:"timestamp"`
		Scenario  string `json:"scenarioId"`
		Segment   string `json:"segmentId"`
		Serial    string `json:"serial"`
	}
	type run struct {
		segmentKey
		serial string
	}
	started := map[run]int64{}
	out := map[segmentKey]time.Duration{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev event
		if err := canonjson.Unmarshal(line, &ev); err != nil {
			return nil, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, fmt.Sprintf("line %d of the run's events is not JSON", i+1), err).With("file", eventsPath)
		}
		k := run{segmentKey{ev.Scenario, ev.Segment}, ev.Serial}
		switch ev.Type {
		case "segment_started":
			started[k] = ev.Timestamp
		case "segment_finished":
			if t0, ok := started[k]; ok {
				out[k.segmentKey] += time.Duration(max(ev.Timestamp-t0, 0)) * time.Millisecond
				delete(started, k)
			}
		}
	}
	return out, nil
}
