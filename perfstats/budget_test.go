package perfstats

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func TestParseBudgets(t *testing.T) {
	t.Parallel()
	bs, err := ParseBudgets(" cpu.max=80, memory.MAX = 300 ,fps.p10=50,cpu_global.avg<=60.5,jank_max.median>=1e1,,temperature.min>=-5")
	if err != nil {
		t.Fatal(err)
	}
	want := []Budget{
		{Text: "cpu.max=80", Metric: "cpu", Stat: "max", Op: "<=", Limit: 80, Item: "CPU"},
		{Text: "memory.MAX = 300", Metric: "memory", Stat: "max", Op: "<=", Limit: 300, Item: "Memory"},
		{Text: "fps.p10=50", Metric: "fps", Stat: "p10", Op: ">=", Limit: 50, Item: "FPS"},
		{Text: "cpu_global.avg<=60.5", Metric: "cpu_global", Stat: "mean", Op: "<=", Limit: 60.5, Item: "CPU"},
		{Text: "jank_max.median>=1e1", Metric: "jank_max", Stat: "p50", Op: ">=", Limit: 10, Item: "FPS"},
		{Text: "temperature.min>=-5", Metric: "temperature", Stat: "min", Op: ">=", Limit: -5, Item: "Temperature"},
	}
	if len(bs) != len(want) {
		t.Fatalf("%+v", bs)
	}
	for i := range want {
		if bs[i] != want[i] {
			t.Errorf("budget %d: %+v, want %+v", i, bs[i], want[i])
		}
	}
	if items := BudgetItems(bs); strings.Join(items, ",") != "CPU,Memory,FPS,Temperature" {
		t.Errorf("items %v", items)
	}
}

func TestParseBudgetsRefusesWithClearErrors(t *testing.T) {
	t.Parallel()
	many := ""
	for i := 1; i <= 65; i++ {
		many += "cpu.p" + strconv.Itoa(i) + "=1,"
	}
	for _, c := range []struct{ in, want string }{
		{"", "names no budget"},
		{" , ", "names no budget"},
		{"cpu", "no limit"},
		{"cpu=80", "metric.stat"},
		{".max=80", "metric.stat"},
		{"cpu.=80", "metric.stat"},
		{"cpu.max<80", "operator"},
		{"cpu.max=", "not a finite number"},
		{"cpu.max=abc", `"abc" is not a finite number`},
		{"cpu.max=NaN", "not a finite number"},
		{"cpu.max=+Inf", "not a finite number"},
		{"gpu.max=1", `unknown metric "gpu"`},
		{"cpu.p0=1", `unknown statistic "p0"`},
		{"cpu.p100=1", `unknown statistic "p100"`},
		{"cpu.p05=1", `unknown statistic "p05"`},
		{"cpu.stddev=1", `unknown statistic "stddev"`},
		{"cpu.max=80,cpu.max=90", "repeats cpu.max=80"},
		{"cpu.max==80", "not a finite number"},
		{many, "more than 64"},
	} {
		_, err := ParseBudgets(c.in)
		if fault.CodeOf(err) != fault.CodeInvalidPerfBudget || fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	// The error names the budget and says how to write one.
	_, err := ParseBudgets("cpu.max=80,gpu.max=1")
	e := fault.From(err)
	if e.Details["budget"] != "gpu.max=1" || !strings.Contains(e.UserAction, "cpu.max=80") || !strings.Contains(e.UserAction, "fps") {
		t.Errorf("error %+v", e)
	}
}

func TestStatOfNearestRank(t *testing.T) {
	t.Parallel()
	ys := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	for stat, want := range map[string]float64{"min": 1, "max": 10, "mean": 5.5, "p10": 1, "p11": 2, "p50": 5, "p90": 9, "p99": 10} {
		if got := statOf(ys, stat); got != want {
			t.Errorf("%s = %v, want %v", stat, got, want)
		}
	}
}

// writeSeries writes one SoloPi CSV of values (a second apart).
func writeSeries(t *testing.T, dir, file, header string, vals ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("RecordTime," + header + ",extra,SimpleTime\n")
	for i, v := range vals {
		b.WriteString(strings.Join([]string{string(rune('1' + i)), v, "", string(rune('0' + i))}, ",") + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckBudgets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSeries(t, dir, "全局占用_CPU_0123456789abcdef_1_2.csv", "全局占用(%)", "20", "70", "40")
	writeSeries(t, dir, "Frame Rate_FPS_0123456789abcdef_1_2.csv", "Frame Rate(fps)", "60", "44", "58")
	writeSeries(t, dir, "PSS-123_Memory_0123456789abcdef_1_2.csv", "PSS-123(MB)", "100", "120")
	writeSeries(t, dir, "PSS-456_Memory_0123456789abcdef_1_2.csv", "PSS-456(MB)", "310", "90")
	a, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: dir})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseBudgets("cpu_global.max=80,cpu_global.max>=75,fps.p10=50,fps.max<=61,memory.max=300,cpu.max=50")
	if err != nil {
		t.Fatal(err)
	}
	checks := a.CheckBudgets(bs)
	type want struct {
		status string
		value  float64
	}
	exp := []want{{BudgetPassed, 70}, {BudgetExceeded, 70}, {BudgetExceeded, 44}, {BudgetPassed, 60}, {BudgetExceeded, 310}, {BudgetNotTested, 0}}
	for i, c := range checks {
		if c.Status != exp[i].status || (c.Value == nil) != (exp[i].status == BudgetNotTested) || c.Value != nil && *c.Value != exp[i].value {
			t.Errorf("%s: %+v", c.Text, c)
		}
	}
	// The worst of several processes judges; an unmeasured metric says why.
	if checks[4].Series != "PSS-456" || !strings.Contains(checks[5].Reason, "app CPU usage") {
		t.Errorf("checks %+v / %+v", checks[4], checks[5])
	}
	if d := checks[2].Describe(); d != "fps.p10 44 < limit 50 (frame rate)" {
		t.Errorf("describe %q", d)
	}
	if v := a.Assess(checks); v != "failed" || a.Assessment["performed"] != true || !strings.Contains(a.Assessment["reason"].(string), "memory.max 310 > limit 300") {
		t.Errorf("assess %s %v", v, a.Assessment)
	}
	if v := a.Assess(checks[5:]); v != BudgetNotTested {
		t.Errorf("only unmeasured: %s", v)
	}
	if v := a.Assess(checks[:1]); v != BudgetPassed {
		t.Errorf("only met: %s", v)
	}
	// Every series has its English name and budget metric.
	for _, s := range a.Summaries() {
		if s.Metric == "" || s.English == "" {
			t.Errorf("summary %+v", s)
		}
	}
}

// FuzzParseBudgets reads arbitrary --perf-budget text: it may refuse it
// (always with invalid_perf_budget), never panic; what it accepts reads
// back the same from each budget's own text.
func FuzzParseBudgets(f *testing.F) {
	for _, s := range []string{"cpu.max=80,memory.max=300,fps.p10=50", "fps.p99>=1e3", "cpu.max<=-0", "x", ".=", "cpu.p5=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := ParseBudgets(s)
		if err != nil {
			if fault.CodeOf(err) != fault.CodeInvalidPerfBudget {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		for _, b := range bs {
			again, err := ParseBudgets(b.Text)
			if err != nil || len(again) != 1 || again[0] != b {
				t.Fatalf("%q: %+v re-read as %+v, %v", s, b, again, err)
			}
		}
	})
}
