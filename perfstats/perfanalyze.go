package perfstats

// perf-analyze: local, descriptive statistics of a pulled performance
// directory (SoloPi CSVs: `RecordTime,<name>(<unit>),extra,SimpleTime`)
// and one SVG line chart per metric. It judges nothing: `stopped` on the
// device meant "saved", and these figures describe what was saved.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// Limits of perf-analyze and of a performance pull (upstream's).
const (
	PerfMaxFiles      = 512
	PerfMaxFileBytes  = 64 << 20
	perfMaxTotalBytes = 256 << 20
	perfMaxColumns    = 512
	fpsJankThreshold  = 30.0
)

// Encodings reported per file. GBK (SoloPi's default output charset) is
// recognised but not decoded: no GBK table ships with the binary, and the
// numbers are ASCII in every charset, so only the names stay undecoded.
const (
	encodingUTF8         = "utf-8"
	encodingUTF8BOM      = "utf-8-sig"
	encodingGBKUndecoded = "gbk-undecoded"
)

// PerfAnalyzeOptions configure AnalyzePerformance.
type PerfAnalyzeOptions struct {
	Input     string
	Output    string // charts directory; empty: no charts
	Overwrite bool
}

// columnStats describes one CSV column.
type columnStats struct {
	Index           int      `json:"index"`
	Name            string   `json:"name"`
	Kind            string   `json:"kind"` // numeric | skipped
	Reason          string   `json:"reason,omitempty"`
	MissingCount    int      `json:"missingCount"`
	NonBlankCount   int      `json:"nonBlankCount"`
	NonNumericCount int      `json:"nonNumericCount"`
	SampleCount     int      `json:"sampleCount"`
	Min             *pyFloat `json:"min,omitempty"`
	Max             *pyFloat `json:"max,omitempty"`
	Mean            *pyFloat `json:"mean,omitempty"`
	Median          *pyFloat `json:"median,omitempty"`
	P90             *pyFloat `json:"p90,omitempty"`
	values          []float64
}

// pyFloat is a statistic printed as Python prints a float (its repr:
// 1796156308082.0, 1e+16), the form solopi-ai's columns carry.
type pyFloat float64

// MarshalJSON writes the Python repr of f.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	// The 'e' form makes canonjson read the text as a float (Python's
	// json would), whose repr it writes.
	s, err := canonjson.NumberText(json.Number(strconv.FormatFloat(float64(f), 'e', -1, 64)))
	return []byte(s), err
}

// fpsFigures are frame-rate figures of an FPS series.
type fpsFigures struct {
	Threshold    float64 `json:"threshold"`
	SamplesBelow int     `json:"samplesBelow"`
	BelowShare   float64 `json:"belowShare"`
	Lowest       float64 `json:"lowest"`
}

// metricSummary is the value series of one CSV file.
type metricSummary struct {
	File        string      `json:"file"`
	Name        string      `json:"name"`
	Unit        string      `json:"unit"`
	Source      string      `json:"source,omitempty"`
	SampleCount int         `json:"sampleCount"`
	Min         float64     `json:"min"`
	Median      float64     `json:"median"`
	P90         float64     `json:"p90"`
	Max         float64     `json:"max"`
	Mean        float64     `json:"mean"`
	StartTime   *int64      `json:"startTime,omitempty"`
	EndTime     *int64      `json:"endTime,omitempty"`
	DurationMs  *int64      `json:"durationMs,omitempty"`
	FPS         *fpsFigures `json:"fps,omitempty"`
	Chart       string      `json:"chart,omitempty"`
	xs, ys      []float64
}

// fileAnalysis is one CSV file.
type fileAnalysis struct {
	Path        string         `json:"path"`
	Encoding    string         `json:"encoding"`
	SizeBytes   int64          `json:"sizeBytes"`
	RowCount    int            `json:"rowCount"`
	ColumnCount int            `json:"columnCount"`
	Columns     []*columnStats `json:"columns"`
	Metric      *metricSummary `json:"metric,omitempty"`
}

// JankFigures combine the FPS-related series of the directory.
type JankFigures struct {
	Available       bool     `json:"available"`
	FPSBelow30Share *float64 `json:"fpsBelow30Share,omitempty"`
	LowestFPS       *float64 `json:"lowestFps,omitempty"`
	LongestDelayMs  *float64 `json:"longestDelayMs,omitempty"`
	JankCount       *float64 `json:"jankCount,omitempty"`
	JankShareMean   *float64 `json:"jankShareMean,omitempty"`
}

// PerfAnalysis is perf-analyze's object.
type PerfAnalysis struct {
	Success          bool             `json:"success"`
	AnalysisMode     string           `json:"analysisMode"`
	SourceDirectory  string           `json:"sourceDirectory"`
	PercentileMethod string           `json:"percentileMethod"`
	Summary          map[string]int   `json:"summary"`
	Files            []*fileAnalysis  `json:"files"`
	Metrics          []*metricSummary `json:"metrics"`
	Jank             JankFigures      `json:"jank"`
	Charts           map[string]any   `json:"charts,omitempty"`
	Assessment       map[string]any   `json:"assessment"`
}

// round6 rounds as Python's round(f, 6) does: to the decimal with six
// fractional digits nearest the exact binary value (ties to even), read
// back as a float. Multiplying by 1e6 first would round twice and give
// 1796156308081.9998 where solopi-ai prints 1796156308082.0.
func round6(f float64) float64 {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 6, 64), 64)
	if err != nil {
		return f
	}
	return r
}

// fsum is Python's math.fsum: the correctly rounded sum of xs (Shewchuk's
// exact partial sums), so a mean agrees with solopi-ai's to the last bit.
func fsum(xs []float64) float64 {
	var partials []float64
	for _, x := range xs {
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = append(partials[:i], x)
	}
	n := len(partials)
	if n == 0 {
		return 0
	}
	hi := partials[n-1]
	lo := 0.0
	n--
	for n > 0 {
		x := hi
		y := partials[n-1]
		n--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even across the remaining partials, as CPython does.
	if n > 0 && ((lo < 0 && partials[n-1] < 0) || (lo > 0 && partials[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}

func ptr[T any](v T) *T { return &v }

// describe fills min, max, mean, median and the nearest-rank p90.
func describeValues(vals []float64) (lo, hi, mean, median, p90 float64) {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	// solopi-ai's arithmetic: the exact sum of v/n, and an even median as
	// a/2 + b/2 (neither overflows near the float limit).
	parts := make([]float64, n)
	for i, v := range s {
		parts[i] = v / float64(n)
	}
	lo, hi, mean = s[0], s[n-1], fsum(parts)
	if n%2 == 1 {
		median = s[n/2]
	} else {
		median = s[n/2-1]/2 + s[n/2]/2
	}
	rank := int(math.Ceil(0.9 * float64(n)))
	p90 = s[max(rank, 1)-1]
	return round6(lo), round6(hi), round6(mean), round6(median), round6(p90)
}

// AnalyzePerformance analyses every *.csv under o.Input.
func AnalyzePerformance(ctx context.Context, o PerfAnalyzeOptions) (*PerfAnalysis, error) {
	if o.Input == "" {
		return nil, fault.Usage(fault.CodeInvalidInput, "--input is required")
	}
	root, err := filepath.Abs(o.Input)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidInput, "the input path cannot be made absolute", err)
	}
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		e := fault.Usage(fault.CodeInvalidInput, "--input must be an existing directory (not a symbolic link)").With("input", root)
		if err != nil {
			e.With("reason", err.Error())
		}
		return nil, e
	}
	out := ""
	if o.Output != "" {
		if out, err = (artifacts.Output{Mode: artifacts.ModeOf(o.Overwrite)}).CheckDir(o.Output); err != nil {
			return nil, err
		}
	}
	paths, err := findCSVs(ctx, root)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		// Nothing to describe is a wrong --input, not an empty success
		// (solopi-ai exits 3 too).
		return nil, fault.Usage(fault.CodeNoCSVFiles, "the input directory holds no *.csv file").With("input", root)
	}
	res := &PerfAnalysis{Success: true, AnalysisMode: "descriptive-only", SourceDirectory: root, PercentileMethod: "nearest-rank",
		Files: []*fileAnalysis{}, Metrics: []*metricSummary{},
		Assessment: map[string]any{"performed": false, "reason": "descriptive statistics only: no thresholds were given, so nothing is judged pass or fail"}}
	numeric, skipped := 0, 0
	for _, p := range paths {
		if ctx.Err() != nil {
			return nil, fault.From(ctx.Err())
		}
		fa, err := analyzeCSV(root, p)
		if err != nil {
			return nil, err
		}
		for _, c := range fa.Columns {
			if c.Kind == "numeric" {
				numeric++
			} else {
				skipped++
			}
		}
		res.Files = append(res.Files, fa)
		if fa.Metric != nil {
			res.Metrics = append(res.Metrics, fa.Metric)
		}
	}
	res.Summary = map[string]int{"fileCount": len(res.Files), "numericColumnCount": numeric, "skippedColumnCount": skipped, "metricCount": len(res.Metrics)}
	res.Jank = jankFigures(res.Metrics)
	if out != "" {
		charts, err := writeCharts(res.Metrics, out, o.Overwrite)
		if err != nil {
			return nil, err
		}
		res.Charts = charts
	}
	return res, nil
}

// findCSVs walks root: symlinks anywhere are refused, and the file count,
// per-file and total sizes are bounded.
func findCSVs(ctx context.Context, root string) ([]string, error) {
	var out []string
	var total int64
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return fault.From(ctx.Err())
		}
		if de.Type()&fs.ModeSymlink != 0 {
			return fault.Usage(fault.CodeInvalidInput, "the input directory contains a symbolic link").With("path", p).With("file", p)
		}
		if de.IsDir() || !strings.EqualFold(filepath.Ext(p), ".csv") {
			return nil
		}
		if !de.Type().IsRegular() {
			return fault.Usage(fault.CodeInvalidInput, "a .csv entry is not a regular file").With("path", p).With("file", p)
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		if info.Size() > PerfMaxFileBytes {
			return fault.Usagef(fault.CodeInvalidInput, "%s is larger than 64 MiB", p).With("path", p).With("file", p).
				With("sizeBytes", info.Size()).With("maximumBytes", PerfMaxFileBytes)
		}
		total += info.Size()
		if total > perfMaxTotalBytes {
			return fault.Usage(fault.CodeInvalidInput, "the CSV files together are larger than 256 MiB").
				With("input", root).With("totalBytes", total).With("maximumBytes", perfMaxTotalBytes)
		}
		out = append(out, p)
		if len(out) > PerfMaxFiles {
			return fault.Usagef(fault.CodeInvalidInput, "the input directory holds more than %d CSV files", PerfMaxFiles).
				With("input", root).With("fileCount", len(out)).With("maximumFiles", PerfMaxFiles)
		}
		return nil
	})
	if err != nil {
		var oe *fault.Error
		if errors.As(err, &oe) {
			return nil, oe
		}
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidInput, "reading the input directory failed", err).
			With("input", root).With("reason", err.Error())
	}
	slices.Sort(out)
	return out, nil
}

var (
	csvNameNew    = lazyregexp.New(`^(.*)_([0-9a-f]{16})_(\d+)_(\d+)\.csv$`)
	csvNameLegacy = lazyregexp.New(`^(.*)_(\d+)_(\d+)\.csv$`)
	headerUnit    = lazyregexp.New(`^(.*)\(([^()]*)\)\s*$`)
)

// nameFromFile splits `<name>_<source>_[<16hex>_]<start>_<end>.csv`.
func nameFromFile(base string) (name, source string) {
	rest := ""
	if m := csvNameNew.FindStringSubmatch(base); m != nil {
		rest = m[1]
	} else if m := csvNameLegacy.FindStringSubmatch(base); m != nil {
		rest = m[1]
	} else {
		return strings.TrimSuffix(base, filepath.Ext(base)), ""
	}
	if i := strings.LastIndexByte(rest, '_'); i > 0 {
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

// csvFile is how one CSV of the input directory is read: the walk refused
// symlinks and large files, and the read holds to that if the file changed.
var csvFile = artifacts.Input{What: "CSV file", Code: fault.CodeInvalidInput, Max: PerfMaxFileBytes, NoSymlink: true}

func analyzeCSV(root, p string) (*fileAnalysis, error) {
	rel, _ := filepath.Rel(root, p)
	rel = filepath.ToSlash(rel)
	// path is ours (relative to --input), file solopi-ai's (absolute).
	bad := func(msg string) *fault.Error {
		return fault.Usage(fault.CodeInvalidCSV, rel+": "+msg).With("path", rel).With("file", p)
	}
	data, err := csvFile.Read(p)
	if err != nil {
		e := fault.From(err).With("path", rel).With("file", p)
		if _, ok := e.Details["reason"]; !ok {
			e.With("reason", e.Message)
		}
		return nil, e
	}
	fa := &fileAnalysis{Path: rel, SizeBytes: int64(len(data)), Columns: []*columnStats{}}
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		fa.Encoding = encodingUTF8BOM
		data = data[3:]
	case utf8.Valid(data):
		fa.Encoding = encodingUTF8
	default:
		fa.Encoding = encodingGBKUndecoded
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, bad("the file contains NUL bytes")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, bad("the file is empty")
	}
	if err != nil {
		return nil, bad("the header cannot be parsed: "+err.Error()).With("reason", err.Error())
	}
	if len(header) > perfMaxColumns {
		return nil, bad(fmt.Sprintf("more than %d columns", perfMaxColumns)).With("columnCount", len(header)).With("maximumColumns", perfMaxColumns)
	}
	seen := map[string]bool{}
	var dups []string
	for _, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, bad("the header has an empty column name")
		}
		if seen[h] && !slices.Contains(dups, h) {
			dups = append(dups, h)
		}
		seen[h] = true
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		return nil, bad("the header has a duplicate column name").With("duplicateHeaders", dups)
	}
	for i, h := range header {
		h = strings.TrimSpace(h)
		// Undecoded GBK bytes are shown as U+FFFD; the raw bytes stay in
		// the file, and the metric name comes from the (UTF-8) file name.
		fa.Columns = append(fa.Columns, &columnStats{Index: i, Name: strings.ToValidUTF8(h, "\uFFFD")})
	}
	fa.ColumnCount = len(header)
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("a row cannot be parsed: "+err.Error()).With("reason", err.Error())
		}
		if len(row) > len(header) {
			line, _ := r.FieldPos(0)
			return nil, bad(fmt.Sprintf("row %d has more cells than the header", line)).
				With("row", line).With("expectedColumns", len(header)).With("actualColumns", len(row))
		}
		blank := true
		for _, c := range row {
			if strings.TrimSpace(c) != "" {
				blank = false
			}
		}
		if blank {
			continue
		}
		fa.RowCount++
		for i, col := range fa.Columns {
			cell := ""
			if i < len(row) {
				cell = strings.TrimSpace(row[i])
			}
			if cell == "" {
				col.MissingCount++
				continue
			}
			col.NonBlankCount++
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				col.NonNumericCount++
				continue
			}
			col.values = append(col.values, v)
		}
	}
	for _, col := range fa.Columns {
		switch {
		case col.NonNumericCount > 0:
			col.Kind, col.Reason = "skipped", "contains_non_numeric_values"
		case len(col.values) == 0:
			col.Kind, col.Reason = "skipped", "no_values"
		default:
			col.Kind = "numeric"
			col.SampleCount = len(col.values)
			lo, hi, mean, med, p90 := describeValues(col.values)
			col.Min, col.Max, col.Mean, col.Median, col.P90 = ptr(pyFloat(lo)), ptr(pyFloat(hi)), ptr(pyFloat(mean)), ptr(pyFloat(med)), ptr(pyFloat(p90))
		}
		if col.Kind != "numeric" {
			col.values = nil
		}
	}
	fa.Metric = metricOf(fa, filepath.Base(p))
	return fa, nil
}
