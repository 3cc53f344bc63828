package perfstats

// Performance budgets (`run --perf-budget`): limits on statistics of the
// series a run's performance session recorded. The grammar is
//
//	budgets := budget {"," budget}
//	budget  := metric "." stat op number
//	op      := "=" | "<=" | ">="
//	stat    := "min" | "max" | "avg" | "mean" | "median" | "p" 1..99
//
// "=" is the metric's natural limit: a ceiling (the value must be at most
// the number) for every metric but fps, whose limit is a floor. A metric
// is one of SoloPi's series, named in English (perfmetric); a budget on a
// metric no series measured is not_tested, never a pass.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats/perfmetric"
)

// maxBudgets bounds a --perf-budget list (it is typed by a person).
const maxBudgets = 64

// Budget is one parsed limit.
type Budget struct {
	Text   string  `json:"budget"` // as written, trimmed
	Metric string  `json:"metric"`
	Stat   string  `json:"stat"` // min, max, mean, p1..p99 (median is p50)
	Op     string  `json:"op"`   // <= or >=
	Limit  float64 `json:"limit"`
	// Item is the SoloPi performance item that records the metric.
	Item string `json:"item"`
}

// ParseBudgets reads a --perf-budget list; every error names the budget
// and what is wrong with it (invalid_perf_budget, exit 3).
func ParseBudgets(s string) ([]Budget, error) {
	var out []Budget
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		b, err := parseBudget(part)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.Metric == b.Metric && o.Stat == b.Stat && o.Op == b.Op {
				return nil, budgetError(part, "it repeats "+o.Text)
			}
		}
		out = append(out, b)
		if len(out) > maxBudgets {
			return nil, fault.Usagef(fault.CodeInvalidPerfBudget, "--perf-budget holds more than %d budgets", maxBudgets)
		}
	}
	if len(out) == 0 {
		return nil, fault.Usage(fault.CodeInvalidPerfBudget, "--perf-budget names no budget, e.g. cpu.max=80,memory.max=300,fps.p10=50")
	}
	return out, nil
}

func budgetError(b, why string) *fault.Error {
	shown := strings.ToValidUTF8(b, "\uFFFD")
	if len(shown) > 80 {
		// Cut on a rune boundary: half a character is invalid UTF-8,
		// which the error's message and JSON would show as garbage.
		cut := 80
		for !utf8.RuneStart(shown[cut]) {
			cut--
		}
		shown = shown[:cut] + "…"
	}
	return fault.Usagef(fault.CodeInvalidPerfBudget, "--perf-budget %q: %s", shown, why).With("budget", shown).
		WithUserAction("write budgets as metric.stat=number, e.g. cpu.max=80,memory.max=300,fps.p10=50 (metrics: " + strings.Join(perfmetric.Keys(), ", ") + "; stats: min, max, avg, mean, median, p1..p99)")
}

func parseBudget(s string) (Budget, error) {
	i := strings.IndexAny(s, "<>=")
	if i < 0 {
		return Budget{}, budgetError(s, "no limit: write metric.stat=number")
	}
	lhs, rest := strings.TrimSpace(s[:i]), s[i:]
	op := "="
	for _, o := range []string{"<=", ">="} {
		if strings.HasPrefix(rest, o) {
			op = o
		}
	}
	if op == "=" && rest[0] != '=' {
		return Budget{}, budgetError(s, "the operator must be =, <= or >=")
	}
	num := strings.TrimSpace(rest[len(op):])
	metric, stat, ok := strings.Cut(lhs, ".")
	if !ok || metric == "" || stat == "" {
		return Budget{}, budgetError(s, "the left side must be metric.stat, e.g. cpu.max")
	}
	d := perfmetric.Lookup(strings.ToLower(metric))
	if d == nil {
		return Budget{}, budgetError(s, fmt.Sprintf("unknown metric %q", metric))
	}
	st, ok := statName(strings.ToLower(stat))
	if !ok {
		return Budget{}, budgetError(s, fmt.Sprintf("unknown statistic %q", stat))
	}
	limit, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(limit) || math.IsInf(limit, 0) {
		return Budget{}, budgetError(s, fmt.Sprintf("the limit %q is not a finite number", num))
	}
	switch op {
	case "=":
		op = "<="
		if d.Floor {
			op = ">="
		}
	}
	return Budget{Text: s, Metric: d.Key, Stat: st, Op: op, Limit: limit, Item: d.Item}, nil
}

// statName is the canonical name of a statistic.
func statName(s string) (string, bool) {
	switch s {
	case "min", "max", "mean":
		return s, true
	case "avg":
		return "mean", true
	case "median":
		return "p50", true
	}
	n, ok := strings.CutPrefix(s, "p")
	// Digits only, no leading zero: Atoi alone would take "p+5" as p5.
	if !ok || n == "" || len(n) > 2 || n[0] < '1' || n[0] > '9' {
		return "", false
	}
	q, err := strconv.Atoi(n)
	if err != nil || q < 1 || q > 99 {
		return "", false
	}
	return s, true
}

// BudgetItems are the SoloPi items the budgets need, in order.
func BudgetItems(bs []Budget) []string {
	var out []string
	for _, b := range bs {
		if !slices.Contains(out, b.Item) {
			out = append(out, b.Item)
		}
	}
	return out
}

// Budget outcomes.
const (
	BudgetPassed    = "passed"
	BudgetExceeded  = "exceeded"
	BudgetNotTested = "not_tested"
)

// BudgetCheck is one budget held against the recording.
type BudgetCheck struct {
	Budget
	Status string   `json:"status"`
	Value  *float64 `json:"value,omitempty"`
	// Series is SoloPi's name of the series the value is from, File its
	// CSV (relative to the performance directory).
	Series      string `json:"series,omitempty"`
	File        string `json:"file,omitempty"`
	SampleCount int    `json:"sampleCount,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// CheckBudgets holds every budget against the analysed series. A metric
// several series record (one per process) is judged by its worst value.
func (a *PerfAnalysis) CheckBudgets(bs []Budget) []BudgetCheck {
	out := make([]BudgetCheck, 0, len(bs))
	for _, b := range bs {
		c := BudgetCheck{Budget: b, Status: BudgetNotTested}
		d := perfmetric.Lookup(b.Metric)
		for _, m := range a.Metrics {
			if !d.Matches(m.Name, m.Source) || len(m.ys) == 0 {
				continue
			}
			v := statOf(m.ys, b.Stat)
			worse := c.Value == nil || (b.Op == "<=" && v > *c.Value) || (b.Op == ">=" && v < *c.Value)
			if worse {
				c.Value, c.Series, c.File, c.SampleCount = ptr(v), m.Name, m.File, m.SampleCount
			}
		}
		switch {
		case c.Value == nil:
			c.Reason = fmt.Sprintf("no %s series (%s) was recorded", d.English, d.Item)
		case b.Op == "<=" && *c.Value > b.Limit, b.Op == ">=" && *c.Value < b.Limit:
			c.Status = BudgetExceeded
		default:
			c.Status = BudgetPassed
		}
		out = append(out, c)
	}
	return out
}

// statOf computes one statistic (nearest-rank percentiles, as p90 is).
func statOf(ys []float64, stat string) float64 {
	switch stat {
	case "min":
		return round6(slices.Min(ys))
	case "max":
		return round6(slices.Max(ys))
	case "mean":
		_, _, mean, _, _ := describeValues(ys)
		return mean
	}
	q, _ := strconv.Atoi(stat[1:])
	s := slices.Clone(ys)
	slices.Sort(s)
	rank := int(math.Ceil(float64(q) / 100 * float64(len(s))))
	return round6(s[max(rank, 1)-1])
}

// MetricFigures is one recorded series as a run reports it: SoloPi's name
// and unit, the budget metric it is (with its English name) and its
// statistics.
type MetricFigures struct {
	Metric      string  `json:"metric,omitempty"`
	English     string  `json:"english,omitempty"`
	Name        string  `json:"name"`
	Unit        string  `json:"unit"`
	Source      string  `json:"source,omitempty"`
	File        string  `json:"file"`
	SampleCount int     `json:"sampleCount"`
	Min         float64 `json:"min"`
	Median      float64 `json:"median"`
	P90         float64 `json:"p90"`
	Max         float64 `json:"max"`
	Mean        float64 `json:"mean"`
}

// Summaries are the analysis's series as a run reports them.
func (a *PerfAnalysis) Summaries() []MetricFigures {
	out := make([]MetricFigures, 0, len(a.Metrics))
	for _, m := range a.Metrics {
		key, en, _ := perfmetric.Of(m.Name, m.Source)
		out = append(out, MetricFigures{Metric: key, English: en, Name: m.Name, Unit: m.Unit, Source: m.Source, File: m.File,
			SampleCount: m.SampleCount, Min: m.Min, Median: m.Median, P90: m.P90, Max: m.Max, Mean: m.Mean})
	}
	return out
}
