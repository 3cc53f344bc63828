package report

import (
	"fmt"
	"path"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats/perfmetric"
)

// PerfAnalysisFile is perf-analyze's JSON object written into a
// performance evidence directory; the report's statistics come from it
// and its charts are the SVG files it names.
const PerfAnalysisFile = "analysis.json"

// CodePerfAnalysisMissing: a directory of performance CSVs without the
// analysis; `solopi report` computes it first.

func isPerf(e *evidence) bool {
	if e.isFile(PerfAnalysisFile) {
		var m obj
		return e.readJSON(PerfAnalysisFile, &m) == nil && m.Display("analysisMode") != ""
	}
	return len(perfCSVs(e.dir)) > 0
}

// perfCSVs lists the CSV files directly in dir (a perf-stop --output
// directory); empty when dir cannot be read.
func perfCSVs(dir string) []string {
	e, err := openEvidence(dir)
	if err != nil {
		return nil
	}
	defer e.close()
	var out []string
	for _, de := range e.entries(".") {
		if strings.EqualFold(path.Ext(de.Name()), ".csv") && e.isFile(de.Name()) {
			out = append(out, de.Name())
		}
	}
	return out
}

type perfView struct {
	Source  string
	Metrics []perfMetric
	Jank    []fact
	Files   []perfFile
	Charts  []image
	Verdict string
	// Assessment says what judged the figures: the budgets' verdict, or
	// that none was given (and how to give one).
	Assessment string
	Budgets    []perfBudget
}

type perfMetric struct {
	// Name is SoloPi's; English the budget metric's name beside it (Key
	// in --perf-budget), Label the one shown first.
	Name, English, Key, Label, Unit, Source, File string
	Samples                                       int64
	Min, Median, P90, Max, Mean                   string
	Duration                                      string
	FPSBelow, FPSLowest, FPSThreshold             string
	Chart                                         string
}

type perfFile struct {
	Path, Href, Encoding string
	Size, Rows, Columns  int64
}

// perfBudget is one --perf-budget check of the recording.
type perfBudget struct {
	Budget, Metric, Status, Value, Limit, Op, Series, Reason string
}

func perfPage(e *evidence) (*page, error) {
	v, a, err := readPerf(e)
	if err != nil {
		return nil, err
	}
	sum := a.Object("summary")
	files, _ := sum.Integer("fileCount")
	return &page{Kind: KindPerf, Perf: v, Title: "Performance " + path.Base(firstNonEmpty(v.Source, e.dir)),
		Banner: banner{Verdict: v.Verdict, Headline: fmt.Sprintf("%d metrics from %d files", len(v.Metrics), files),
			Detail: v.Assessment},
		Facts: []fact{{Label: "source", Value: v.Source, Mono: true}, {Label: "mode", Value: a.Display("analysisMode")},
			{Label: "percentiles", Value: a.Display("percentileMethod")}}}, nil
}

// readPerf reads a performance directory's analysis.json; links are
// relative to that directory.
func readPerf(e *evidence) (*perfView, obj, error) {
	if !e.isFile(PerfAnalysisFile) {
		return nil, nil, fault.Usage(fault.CodePerfAnalysisMissing, "the performance directory has no "+PerfAnalysisFile).
			With("dir", e.dir).WithUserAction("run `solopi report DIR` (it analyses the CSV files) or `solopi perf-analyze --input DIR`")
	}
	var a obj
	if err := e.readJSON(PerfAnalysisFile, &a); err != nil {
		return nil, nil, err
	}
	v := &perfView{Source: a.Display("sourceDirectory")}
	for _, m := range a.Objects("metrics") {
		pm := perfMetric{Name: m.Display("name"), Unit: m.Display("unit"), Source: m.Display("source"), File: m.Display("file")}
		pm.Key, pm.English, _ = perfmetric.Of(pm.Name, pm.Source)
		pm.Label = firstNonEmpty(pm.English, pm.Name)
		pm.Samples, _ = m.Integer("sampleCount")
		for _, f := range []struct {
			dst *string
			key string
		}{{&pm.Min, "min"}, {&pm.Median, "median"}, {&pm.P90, "p90"}, {&pm.Max, "max"}, {&pm.Mean, "mean"}} {
			if x, ok := m.Number(f.key); ok {
				*f.dst = formatNumber(x)
			}
		}
		if d, ok := m.Integer("durationMs"); ok {
			pm.Duration = humanMillis(d)
		}
		if fps := m.Object("fps"); fps != nil {
			if x, ok := fps.Number("belowShare"); ok {
				pm.FPSBelow = formatNumber(x*100) + " %"
			}
			if x, ok := fps.Number("lowest"); ok {
				pm.FPSLowest = formatNumber(x)
			}
			if x, ok := fps.Number("threshold"); ok {
				pm.FPSThreshold = formatNumber(x)
			}
		}
		if rel, ok := chartOf(e, m.Display("chart")); ok {
			pm.Chart = href(rel)
			caption := pm.Name
			if pm.English != "" {
				caption = pm.English + " · " + pm.Name
			}
			if pm.Unit != "" {
				caption += " (" + pm.Unit + ")"
			}
			v.Charts = append(v.Charts, image{Src: href(rel), Caption: caption})
		}
		v.Metrics = append(v.Metrics, pm)
	}
	jank := a.Object("jank")
	for _, k := range []struct{ key, label string }{{"fpsBelow30Share", "share of FPS samples below 30"}, {"lowestFps", "lowest FPS"},
		{"longestDelayMs", "longest frame delay (ms)"}, {"jankCount", "jank count"}, {"jankShareMean", "mean jank share"}} {
		if x, ok := jank.Number(k.key); ok {
			v.Jank = append(v.Jank, fact{Label: k.label, Value: formatNumber(x)})
		}
	}
	for _, f := range a.Objects("files") {
		pf := perfFile{Path: f.Display("path"), Encoding: f.Display("encoding")}
		pf.Size, _ = f.Integer("sizeBytes")
		pf.Rows, _ = f.Integer("rowCount")
		pf.Columns, _ = f.Integer("columnCount")
		if rel, ok := e.local(pf.Path); ok {
			pf.Href = href(rel)
		}
		v.Files = append(v.Files, pf)
	}
	assess := a.Object("assessment")
	v.Verdict, v.Assessment = "descriptive", assess.Display("reason")
	if ok, _ := assess.Flag("performed"); ok {
		v.Verdict = firstNonEmpty(assess.Display("verdict"), "descriptive")
		for _, b := range assess.Objects("budgets") {
			pb := perfBudget{Budget: b.Display("budget"), Metric: b.Display("metric"), Status: b.Display("status"),
				Op: b.Display("op"), Series: b.Display("series"), Reason: b.Display("reason")}
			if x, ok := b.Number("limit"); ok {
				pb.Limit = formatNumber(x)
			}
			if x, ok := b.Number("value"); ok {
				pb.Value = formatNumber(x)
			}
			v.Budgets = append(v.Budgets, pb)
		}
	} else {
		// perf-analyze's own words (solopi-ai's) say no thresholds were
		// given; the report says where they are given.
		v.Assessment = "Descriptive statistics only: no budget judged these figures. Give one with run --perf-budget (e.g. cpu.max=80,fps.p10=50)."
	}
	return v, a, nil
}

// runPerf is the run's recording (perf/ of its evidence), its links
// relative to the run directory; nil without one.
func runPerf(e *evidence) (*perfView, string) {
	if !e.isDir(runPerfDir) {
		return nil, ""
	}
	sub, err := e.sub(runPerfDir)
	if err != nil {
		return nil, "The performance recording cannot be read: " + err.Error()
	}
	defer sub.close()
	v, _, err := readPerf(sub)
	if err != nil {
		return nil, "The performance recording cannot be read: " + err.Error()
	}
	p := href(runPerfDir) + "/"
	for i := range v.Metrics {
		if v.Metrics[i].Chart != "" {
			v.Metrics[i].Chart = p + v.Metrics[i].Chart
		}
	}
	for i := range v.Charts {
		v.Charts[i].Src = p + v.Charts[i].Src
	}
	for i := range v.Files {
		if v.Files[i].Href != "" {
			v.Files[i].Href = p + v.Files[i].Href
		}
	}
	return v, ""
}

// chartOf finds a chart perf-analyze named (an absolute path when it
// wrote it) inside the evidence directory: as recorded, or by its file
// name directly in the directory or in charts/.
func chartOf(e *evidence, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if rel, ok := e.local(p); ok {
		return rel, true
	}
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	for _, rel := range []string{base, "charts/" + base} {
		if e.isFile(rel) {
			return rel, true
		}
	}
	return "", false
}
