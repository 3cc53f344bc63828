package report

import (
	"embed"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

// templates are parsed on first use, not at start-up: most invocations of
// solopi never render a report.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"size":     humanSize,
		"ms":       humanMillis,
		"num":      formatNumber,
		"verdict":  verdictClass,
		"shortsha": func(s string) string { return cut(s, 12) },
		"base":     filepath.Base,
	}).ParseFS(templateFiles, "templates/*.html"))
})

// page is everything one report shows; exactly one kind's body is set.
type page struct {
	Title  string
	Kind   Kind
	Banner banner
	Facts  []fact
	Run    *runView
	Batch  *batchView
	Suite  *suiteView
	Index  *indexView
	Verify *verifyView
	Agent  *agentView
	Perf   *perfView
	// Script is the page's one inline script (the suite report's name
	// search), ScriptSrc its hash source in the Content-Security-Policy;
	// every other page has none.
	Script    template.JS
	ScriptSrc string
	// Media lets the page play the run's recording (media-src in the
	// Content-Security-Policy); only a run page with a video sets it.
	Media bool
}

// banner is the verdict at the top of a report.
type banner struct {
	Verdict  string // passed, failed, not_tested, ...
	Headline string
	Detail   string
}

// fact is one labelled value under the banner.
type fact struct {
	Label, Value string
	Mono         bool
}

// image is one screenshot or chart linked by relative path. W and H are
// its pixel size when known (they reserve the layout and scale overlays).
type image struct {
	Src     string
	Caption string
	Mark    bool // the failure screenshot
	W, H    int
	Overlay *overlay
}

// fileRow is one file of a manifest or a segment's evidence.
type fileRow struct {
	Path, Href, SHA256, Source, Type string
	Size                             int64
}

func verdictClass(v string) string {
	switch strings.ToLower(v) {
	case "passed", "completed", "succeeded", "ok", "done", "fresh", "allow", "approved", "stopped", "dispatched":
		return "ok"
	case "failed", "exceeded", "error", "blocked", "block", "model_protocol_error", "model_error", "device_error", "calibration_failed",
		"repeated_action_loop", "declined", "rejected", "stale", "terminate", "not dispatched":
		return "bad"
	case "not_tested", "not_reached", "not_completed", "max_steps_exceeded", "max_duration_exceeded", "cancelled", "skipped",
		"confirm", "inconclusive", "running", "cancel_requested", "partial", "replan", "reobserve", "retry_safe_action",
		"ask_human_takeover":
		return "warn"
	}
	return "info"
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func humanMillis(ms int64) string {
	if ms < 0 {
		return ""
	}
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// formatNumber prints a statistic: integers as integers, others with at
// most three decimals, so tables stay readable and deterministic.
func formatNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// epochText prints an epoch-millisecond time in UTC (a report must not
// depend on the reader's time zone to be reproducible).
func epochText(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000 UTC")
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// clip shortens long free text for a table cell, on a rune boundary.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
