package perfstats

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
)

// The budgets' edges: a series that cannot be measured is not_tested (never
// a pass), a value exactly at its limit meets it, percentiles at p1 and p99
// are the nearest ranks, and a refused budget is shown readably.

func analysed(t *testing.T, files map[string]string) *PerfAnalysis {
	t.Helper()
	in := t.TempDir()
	writeFiles(t, in, files)
	a, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func checked(t *testing.T, a *PerfAnalysis, budgets string) []BudgetCheck {
	t.Helper()
	bs, err := ParseBudgets(budgets)
	if err != nil {
		t.Fatal(err)
	}
	return a.CheckBudgets(bs)
}

func TestBudgetsOnUnmeasurableSeriesAreNotTested(t *testing.T) {
	t.Parallel()
	a := analysed(t, map[string]string{
		// A NaN or an infinity makes the column non-numeric: no series.
		"帧率_FPS_0123456789abcdef_1_2.csv":       "RecordTime,帧率(fps),extra,SimpleTime\n1,60,,0\n2,NaN,,1\n",
		"PSS-1_Memory_0123456789abcdef_1_2.csv": "RecordTime,PSS-1(MB),extra,SimpleTime\n1,+Inf,,0\n2,120,,1\n",
		// A header without samples (a recording stopped at once).
		"全局占用_CPU_0123456789abcdef_1_2.csv": "RecordTime,全局占用(%),extra,SimpleTime\n",
	})
	if len(a.Metrics) != 0 || len(a.Files) != 3 {
		t.Fatalf("metrics %d files %d", len(a.Metrics), len(a.Files))
	}
	checks := checked(t, a, "fps.min=30,memory.max=300,cpu_global.p99=80")
	for i, english := range []string{"frame rate", "app memory (PSS)", "device CPU usage"} {
		c := checks[i]
		if c.Status != BudgetNotTested || c.Value != nil || !strings.Contains(c.Reason, "no "+english+" series") {
			t.Errorf("%s: %+v", c.Text, c)
		}
		if d := c.Describe(); d != c.Metric+"."+c.Stat+" not measured ("+english+")" {
			t.Errorf("describe %q", d)
		}
	}
	if v := a.Assess(checks); v != BudgetNotTested || a.Assessment["reason"] != "not measured: fps.min=30, memory.max=300, cpu_global.p99=80" {
		t.Fatalf("assess %s %v", v, a.Assessment)
	}
}

func TestBudgetLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	a := analysed(t, map[string]string{
		"帧率_FPS_0123456789abcdef_1_2.csv":   "RecordTime,帧率(fps),extra,SimpleTime\n1,60,,0\n",
		"帧率_FPS_fedcba9876543210_1_2.csv":   "RecordTime,帧率(fps),extra,SimpleTime\n1,45,,0\n2,50,,1\n",
		"全局占用_CPU_0123456789abcdef_1_2.csv": "RecordTime,全局占用(%),extra,SimpleTime\n1,70,,0\n",
	})
	checks := checked(t, a, "fps.min=45,fps.p99>=50.5,cpu_global.max=70,cpu_global.p1<=69.999")
	want := []struct {
		status string
		value  float64
	}{{BudgetPassed, 45}, {BudgetExceeded, 50}, {BudgetPassed, 70}, {BudgetExceeded, 70}}
	for i, w := range want {
		if c := checks[i]; c.Status != w.status || c.Value == nil || *c.Value != w.value {
			t.Errorf("%s: %+v, want %s %v", c.Text, c, w.status, w.value)
		}
	}
	// The floor is judged by the lower of the two frame-rate series.
	if checks[0].File != "帧率_FPS_fedcba9876543210_1_2.csv" || checks[0].SampleCount != 2 {
		t.Errorf("fps.min judged %+v", checks[0])
	}
	if d := checks[2].Describe(); d != "cpu_global.max 70 <= 70 (device CPU usage)" {
		t.Errorf("describe met %q", d)
	}
	if d := checks[3].Describe(); d != "cpu_global.p1 70 > limit 69.999 (device CPU usage)" {
		t.Errorf("describe exceeded %q", d)
	}
	if v := a.Assess(checks[2:3]); v != BudgetPassed || a.Assessment["reason"] != "1 budgets met" {
		t.Errorf("assess %s %v", v, a.Assessment)
	}
}

func TestBudgetPercentilesAtTheBounds(t *testing.T) {
	t.Parallel()
	// One sample: every statistic is that sample.
	for _, stat := range []string{"min", "max", "mean", "p1", "p50", "p99"} {
		if got := statOf([]float64{42.5}, stat); got != 42.5 {
			t.Errorf("one sample %s = %v", stat, got)
		}
	}
	// 1..n shuffled: the nearest rank of q is ceil(q/100*n).
	for n, want := range map[int][2]float64{100: {1, 99}, 101: {2, 100}, 2: {1, 2}, 199: {2, 198}} {
		ys := make([]float64, n)
		for i := range ys {
			ys[i] = float64(i + 1)
		}
		rand.Shuffle(n, func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
		if p1, p99 := statOf(ys, "p1"), statOf(ys, "p99"); p1 != want[0] || p99 != want[1] {
			t.Errorf("n=%d: p1 %v p99 %v, want %v", n, p1, p99, want)
		}
	}
	// The same through a recording of 101 samples.
	var b strings.Builder
	b.WriteString("RecordTime,帧率(fps),extra,SimpleTime\n")
	for i := range 101 {
		fmt.Fprintf(&b, "%d,%d,,%d\n", 1000+i*1000, 101-i, i)
	}
	a := analysed(t, map[string]string{"帧率_FPS_0123456789abcdef_1_2.csv": b.String()})
	checks := checked(t, a, "fps.p1=2,fps.p99>=100.5,fps.median<=51")
	if checks[0].Status != BudgetPassed || *checks[0].Value != 2 || checks[1].Status != BudgetExceeded || *checks[1].Value != 100 ||
		checks[2].Status != BudgetPassed || *checks[2].Value != 51 || checks[2].Stat != "p50" {
		t.Fatalf("checks %+v", checks)
	}
}

func TestBudgetStatisticsOutsideTheGrammar(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"p", "p1x", "p-1", "p+5", "p 5", "p123", "percentile"} {
		if _, err := ParseBudgets("cpu." + s + "=1"); fault.CodeOf(err) != fault.CodeInvalidPerfBudget ||
			!strings.Contains(err.Error(), "unknown statistic "+strconv.Quote(s)) {
			t.Errorf("%q: %v", s, err)
		}
	}
	bs, err := ParseBudgets("CPU.P99=1,Fps.Avg=30")
	if err != nil || bs[0].Metric != "cpu" || bs[0].Stat != "p99" || bs[1].Stat != "mean" || bs[1].Op != ">=" {
		t.Fatalf("mixed case: %+v %v", bs, err)
	}
}

// A long refused budget is shown cut, on a character boundary, and
// readable: the error's message and details are valid UTF-8.
func TestBudgetErrorShowsLongTextReadably(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"cpu" + strings.Repeat(" ", 76) + "帧帧帧.max=1",
		strings.Repeat("帧", 40) + ".max=1",
		"\xff" + strings.Repeat("x", 100) + ".max=1",
	} {
		_, err := ParseBudgets(in)
		e := fault.From(err)
		shown, _ := e.Details["budget"].(string)
		if e.Code != fault.CodeInvalidPerfBudget || !utf8.ValidString(shown) || !utf8.ValidString(e.Message) ||
			!strings.HasSuffix(shown, "…") || len(shown) > 80+len("…") || len(shown) < 78 {
			t.Errorf("%q: shown %q (%v)", in, shown, err)
		}
		if !strings.HasPrefix(strings.ToValidUTF8(in, "\uFFFD"), strings.TrimSuffix(shown, "…")) {
			t.Errorf("%q: shown %q is not its beginning", in, shown)
		}
	}
}
