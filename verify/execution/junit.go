package execution

import (
	"fmt"
	"sort"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/verify"
)

// JUnitSuites renders a report for CI (verify-run --junit): one suite per
// scenario, one testcase per checkpoint (a failed checkpoint is a
// <failure> naming its oracle, the expected and the actual value; a
// not_tested one is <skipped> with its reason), plus a "cleanup" testcase
// when the scenario's cleanup ran or should have. Evidence files are
// attached to the testcases that refer to them.
func JUnitSuites(r *verify.Report) []artifacts.JUnitSuite {
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
				tc.Skipped = &artifacts.JUnitProblem{Message: "not tested: " + reasonText(c.Reason), Type: c.Reason}
			}
			suite.Cases = append(suite.Cases, tc)
		}
		if s.Cleanup.Status != "not_required" {
			tc := artifacts.JUnitCase{Name: "cleanup", Classname: classname, Attachments: attach(s.Cleanup.EvidenceRefs)}
			switch s.Cleanup.Status {
			case verify.Failed:
				tc.Failure = &artifacts.JUnitProblem{Message: "required cleanup failed: the scenario fails even if every checkpoint passed", Type: verify.CategoryCleanupFailure}
			case verify.NotTested:
				tc.Skipped = &artifacts.JUnitProblem{Message: "cleanup did not run (interrupted)", Type: verify.ReasonInterrupted}
			}
			suite.Cases = append(suite.Cases, tc)
		}
		suites = append(suites, suite)
	}
	return suites
}

// WriteJUnit writes the report's JUnit XML to path.
func WriteJUnit(path string, r *verify.Report) error {
	return artifacts.WriteJUnit(path, false, "verification "+r.RequirementID, JUnitSuites(r)...)
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
