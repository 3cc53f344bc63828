package execution

import (
	"fmt"
	"sort"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/verify"
)

// jUnitSuites renders a report for CI (verify-run --junit): one suite per
// scenario, one testcase per checkpoint (a failed checkpoint is a
// <failure> naming its oracle, the expected and the actual value; a
// not_tested one is <skipped> with its reason, or an <error> when the
// reason is an infrastructure fault), plus a "cleanup" testcase when the
// scenario's cleanup ran or should have. Evidence files are
// attached to the testcases that refer to them.
func jUnitSuites(r *verify.Report) []artifacts.JUnitSuite {
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
			tc := artifacts.JUnitCase{
				Name: c.CheckpointID, Classname: classname, Attachments: attach(c.EvidenceRefs),
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
			tc := artifacts.JUnitCase{Name: "cleanup", Classname: classname, Attachments: attach(s.Cleanup.EvidenceRefs)}
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
func writeJUnit(path string, r *verify.Report, redact func(string) string) error {
	suites := jUnitSuites(r)
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
