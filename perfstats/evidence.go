package perfstats

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/perfstats/perfmetric"
)

// AnalysisFile is the analysis written beside a recording's CSV files
// (report.PerfAnalysisFile reads it).
const AnalysisFile = "analysis.json"

// Assess records the budget checks as the analysis's assessment: passed,
// failed (a budget exceeded) or not_tested (a budget no series measured,
// and none exceeded). It returns that verdict.
func (a *PerfAnalysis) Assess(checks []BudgetCheck) string {
	verdict := BudgetPassed
	var exceeded, untested []string
	for _, c := range checks {
		switch c.Status {
		case BudgetExceeded:
			exceeded = append(exceeded, c.Describe())
		case BudgetNotTested:
			untested = append(untested, c.Text)
		}
	}
	reason := fmt.Sprintf("%d budgets met", len(checks))
	switch {
	case len(exceeded) > 0:
		verdict, reason = "failed", "budget exceeded: "+strings.Join(exceeded, "; ")
	case len(untested) > 0:
		verdict, reason = BudgetNotTested, "not measured: "+strings.Join(untested, ", ")
	}
	a.Assessment = map[string]any{"performed": true, "verdict": verdict, "reason": reason, "budgets": checks}
	return verdict
}

// Describe says what a check found, e.g. "cpu.max 91.2 > 80 (app CPU usage)".
func (c BudgetCheck) Describe() string {
	d := perfmetric.Lookup(c.Metric)
	if c.Value == nil {
		return fmt.Sprintf("%s.%s not measured (%s)", c.Metric, c.Stat, d.English)
	}
	rel := "within"
	switch {
	case c.Op == "<=" && *c.Value > c.Limit:
		rel = ">"
	case c.Op == ">=" && *c.Value < c.Limit:
		rel = "<"
	}
	if rel == "within" {
		return fmt.Sprintf("%s.%s %s %s %s (%s)", c.Metric, c.Stat, fnum(*c.Value), c.Op, fnum(c.Limit), d.English)
	}
	return fmt.Sprintf("%s.%s %s %s limit %s (%s)", c.Metric, c.Stat, fnum(*c.Value), rel, fnum(c.Limit), d.English)
}

// WriteEvidence writes the charts (sub/charts/NNN-name.svg) and
// sub/analysis.json into an evidence directory, each in its manifest.
func (a *PerfAnalysis) WriteEvidence(dir *artifacts.Dir, sub string) error {
	var files []string
	for i, m := range a.Metrics {
		name := chartFileName(i, m.File)
		rel := sub + "/charts/" + name
		if _, err := dir.WriteFile(rel, "chart", renderChartSVG(m)); err != nil {
			return err
		}
		m.Chart, _ = dir.Abs(rel)
		files = append(files, name)
	}
	if files == nil {
		files = []string{}
	}
	charts, _ := dir.Abs(sub + "/charts")
	a.Charts = map[string]any{"directory": filepath.Clean(charts), "files": files}
	_, err := dir.WriteJSON(sub+"/"+AnalysisFile, "perf-analyze", a)
	return err
}
