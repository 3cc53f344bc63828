package perfstats

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gbkFPS is a SoloPi FPS CSV in GBK: the header "帧率(帧)" is D6A1 C2CA (D6A1).
const gbkFPS = "RecordTime,\xd6\xa1\xc2\xca(\xd6\xa1),extra,SimpleTime\r\n1700000000000,58,,0\r\n1700000001000,24,,1\r\n\r\n1700000002000,60,,2\r\n1700000003000,20,,3\r\n"

func TestPerfAnalyzeStatisticsEncodingsAndCharts(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	writeFiles(t, in, map[string]string{
		"全局占用_CPU_0123456789abcdef_1700000000000_1700000002000.csv":   "RecordTime,全局占用(%),extra,SimpleTime\n1700000000000,10,,0\n1700000001000,30,,1\n1700000002000,20,,2\n",
		"sub/PSS-123_Memory_1700000000000_1700000001000.csv":          "\xef\xbb\xbfRecordTime,PSS-123(MB),extra,SimpleTime\n1700000000000,100.5,note,0\n1700000001000,101.5,,1\n",
		"sub/帧率_FPS_fedcba9876543210_1700000000000_1700000003000.csv": gbkFPS,
		"sub/最长延迟时间_FPS_1700000000000_1700000001000.csv":              "RecordTime,最长延迟时间(ms),extra,SimpleTime\n1700000000000,16,,0\n1700000001000,250,,1\n",
		"notes.txt": "ignored",
	})
	out := filepath.Join(t.TempDir(), "charts")
	res, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "perf-analyze", b)
	if len(res.Files) != 4 || len(res.Metrics) != 4 || res.Summary["metricCount"] != 4 {
		t.Fatalf("files %d metrics %d", len(res.Files), len(res.Metrics))
	}
	byName := map[string]*metricSummary{}
	enc := map[string]string{}
	for _, f := range res.Files {
		enc[filepath.Base(f.Path)] = f.Encoding
		if f.Metric != nil {
			byName[f.Metric.Name] = f.Metric
		}
	}
	if enc["帧率_FPS_fedcba9876543210_1700000000000_1700000003000.csv"] != encodingGBKUndecoded ||
		enc["PSS-123_Memory_1700000000000_1700000001000.csv"] != encodingUTF8BOM {
		t.Fatalf("encodings = %v", enc)
	}
	fps := byName["帧率"]
	if fps == nil || fps.SampleCount != 4 || fps.Min != 20 || fps.Max != 60 || fps.Median != 41 || fps.P90 != 60 || fps.Mean != 40.5 ||
		fps.Source != "FPS" || fps.FPS == nil || fps.FPS.SamplesBelow != 2 || fps.FPS.BelowShare != 0.5 || *fps.DurationMs != 3000 {
		t.Fatalf("FPS metric = %+v", fps)
	}
	cpu := byName["全局占用"]
	if cpu == nil || cpu.Unit != "%" || cpu.Median != 20 || cpu.P90 != 30 {
		t.Fatalf("CPU metric = %+v", cpu)
	}
	if res.Jank.LongestDelayMs == nil || *res.Jank.LongestDelayMs != 250 || *res.Jank.FPSBelow30Share != 0.5 || !res.Jank.Available {
		t.Fatalf("jank = %+v", res.Jank)
	}
	mem := byName["PSS-123"]
	for _, f := range res.Files {
		if f.Metric == mem && (f.Columns[2].Kind != "skipped" || f.Columns[2].Reason != "contains_non_numeric_values") {
			t.Fatalf("the extra column with text is not skipped: %+v", f.Columns[2])
		}
	}
	// Charts: one per metric, each a well-formed SVG with both markers.
	files, _ := os.ReadDir(out)
	if len(files) != 4 {
		t.Fatalf("%d charts", len(files))
	}
	for _, f := range files {
		svg, _ := os.ReadFile(filepath.Join(out, f.Name()))
		if err := wellFormedXML(svg); err != nil {
			t.Fatalf("%s is not well-formed XML: %v", f.Name(), err)
		}
		for _, want := range []string{"<svg", "<polyline", ">max ", ">min ", "time since start (s)"} {
			if !bytes.Contains(svg, []byte(want)) {
				t.Fatalf("%s lacks %q", f.Name(), want)
			}
		}
	}
	// An existing output is refused unless --overwrite.
	_, err = AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in, Output: out})
	if e := fault.From(err); e.Code != fault.CodeOutputExists || e.Kind != fault.Invalid {
		t.Fatalf("existing output: %v", err)
	}
	if _, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in, Output: out, Overwrite: true}); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
}

func TestPerfAnalyzeRejections(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]string{
		"nul":           {"a.csv": "RecordTime,x\n1,\x00\n"},
		"duplicate":     {"a.csv": "RecordTime,x,x\n1,2,3\n"},
		"empty header":  {"a.csv": "RecordTime,,x\n1,2,3\n"},
		"long row":      {"a.csv": "RecordTime,x\n1,2,3\n"},
		"empty file":    {"a.csv": ""},
		"too many cols": {"a.csv": strings.Repeat("c,", 513) + "z\n"},
	}
	for name, files := range cases {
		in := t.TempDir()
		writeFiles(t, in, files)
		if _, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in}); fault.KindOf(err) != fault.Invalid || err == nil {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	// A directory without any CSV file is refused, not an empty analysis.
	empty := t.TempDir()
	writeFiles(t, empty, map[string]string{"notes.txt": "x"})
	if _, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: empty}); fault.CodeOf(err) != fault.CodeNoCSVFiles || fault.KindOf(err) != fault.Invalid {
		t.Errorf("no CSV: %v", err)
	}
	in := t.TempDir()
	writeFiles(t, in, map[string]string{"a.csv": "RecordTime,x(ms)\n1,2\n"})
	os.Symlink(filepath.Join(in, "a.csv"), filepath.Join(in, "b.csv"))
	if _, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in}); err == nil {
		t.Errorf("a symlink was followed")
	}
	link := filepath.Join(t.TempDir(), "dir")
	os.Symlink(in, link)
	if _, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: link}); err == nil {
		t.Errorf("a symlinked input directory was accepted")
	}
	// Short rows are padded and blank rows skipped; a text column is skipped.
	ok := t.TempDir()
	writeFiles(t, ok, map[string]string{"a.csv": "RecordTime,v(ms),extra,SimpleTime\n1,5\n\n2,7,x,1\n"})
	res, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: ok})
	if err != nil || res.Files[0].RowCount != 2 || res.Files[0].Columns[1].SampleCount != 2 || res.Files[0].Columns[3].MissingCount != 1 {
		t.Fatalf("padded rows: %v %+v", err, res)
	}
}

func TestDescribeValuesNearestRank(t *testing.T) {
	t.Parallel()
	lo, hi, mean, med, p90 := describeValues([]float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	if lo != 1 || hi != 10 || mean != 5.5 || med != 5.5 || p90 != 9 {
		t.Fatalf("got %v %v %v %v %v", lo, hi, mean, med, p90)
	}
	_, _, _, med, p90 = describeValues([]float64{3})
	if med != 3 || p90 != 3 {
		t.Fatalf("single value: %v %v", med, p90)
	}
	if n, s := nameFromFile("a_b_c_0123456789abcdef_1_2.csv"); n != "a_b" || s != "c" {
		t.Fatalf("nameFromFile = %q %q", n, s)
	}
}

func TestRenderChartEdgeCases(t *testing.T) {
	t.Parallel()
	for _, m := range []*metricSummary{
		{File: "one.csv", Name: "one", SampleCount: 1, ys: []float64{5}, xs: []float64{0}},
		{File: "flat.csv", Name: "a<b&c", Unit: "ms", SampleCount: 3, ys: []float64{0, 0, 0}},
		{File: "neg.csv", Name: "neg", SampleCount: 2, ys: []float64{-5, 3}, xs: []float64{1, 2}},
	} {
		svg := renderChartSVG(m)
		if err := wellFormedXML(svg); err != nil {
			t.Fatalf("%s: not well-formed: %v\n%s", m.File, err, svg)
		}
		if bytes.Contains(svg, []byte("NaN")) || bytes.Contains(svg, []byte("Inf")) {
			t.Fatalf("%s: non-finite coordinates:\n%s", m.File, svg)
		}
	}
}

// FuzzAnalyzeCSV parses arbitrary CSV bytes: it may refuse them, never panic.
func FuzzAnalyzeCSV(f *testing.F) {
	f.Add([]byte(gbkFPS))
	f.Add([]byte("RecordTime,a(b)\n1,2\n3\n\"x,\"y\n"))
	f.Add([]byte("\xef\xbb\xbf,\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "x_y_1_2.csv")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fa, err := analyzeCSV(dir, p)
		if err == nil && fa.Metric != nil {
			renderChartSVG(fa.Metric)
		}
	})
}

// wellFormedXML reads b token by token and returns the first XML error.
func wellFormedXML(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
