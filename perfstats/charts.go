package perfstats

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
)

// chartFileName keeps letters (any script) and digits of the metric file.
func chartFileName(i int, file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var b strings.Builder
	for _, r := range base {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() > 120 {
			break
		}
	}
	name := strings.Trim(b.String(), "-.")
	if name == "" {
		name = "metric"
	}
	return fmt.Sprintf("%03d-%s.svg", i+1, name)
}

// writeCharts renders every metric into a temporary directory next to out
// and publishes the directory in one rename.
func writeCharts(ms []*metricSummary, out string, overwrite bool) (map[string]any, error) {
	var files []string
	_, err := artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.PublishDir(out, func(d *artifacts.Dir) error {
		for i, m := range ms {
			name := chartFileName(i, m.File)
			if _, err := d.WriteFile(name, "chart", renderChartSVG(m)); err != nil {
				return fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "writing a chart failed", err).With("output", out)
			}
			m.Chart = filepath.Join(out, name)
			files = append(files, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if files == nil {
		files = []string{}
	}
	return map[string]any{"directory": out, "files": files}, nil
}

// renderChartSVG draws one metric as a line chart: axes with ticks and
// labels, a title, and markers with labels at the minimum and maximum.
func renderChartSVG(m *metricSummary) []byte {
	const W, H = 880.0, 440.0
	const left, right, top, bottom = 80.0, 30.0, 50.0, 60.0
	pw, ph := W-left-right, H-top-bottom
	ys := m.ys
	xs := m.xs
	xLabel := "time since start (s)"
	if len(xs) != len(ys) {
		xs = make([]float64, len(ys))
		for i := range xs {
			xs[i] = float64(i)
		}
		xLabel = "sample"
	}
	xmin, xmax := slices.Min(xs), slices.Max(xs)
	ymin, ymax := slices.Min(ys), slices.Max(ys)
	if xmax == xmin {
		xmax = xmin + 1
	}
	pad := (ymax - ymin) * 0.05
	if pad == 0 {
		pad = math.Max(math.Abs(ymax)*0.1, 1)
	}
	ylo, yhi := ymin-pad, ymax+pad
	if ymin >= 0 && ylo < 0 {
		ylo = 0
	}
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return top + ph - (y-ylo)/(yhi-ylo)*ph }
	var b strings.Builder
	title := m.Name
	if m.Unit != "" {
		title += " (" + m.Unit + ")"
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, "<title>%s</title>\n", xmlText(title))
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%.1f" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", left, xmlText(title))
	fmt.Fprintf(&b, `<text x="%.1f" y="44" fill="#555555">%s · %d samples · min %s · median %s · p90 %s · max %s</text>`+"\n",
		left, xmlText(m.File), m.SampleCount, fnum(m.Min), fnum(m.Median), fnum(m.P90), fnum(m.Max))
	// Grid, ticks and tick labels.
	for i := 0; i <= 5; i++ {
		yv := ylo + (yhi-ylo)*float64(i)/5
		y := py(yv)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, fnum(yv))
		xv := xmin + (xmax-xmin)*float64(i)/5
		x := px(xv)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", x, top+ph, x, top+ph+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top+ph+18, fnum(xv))
	}
	// Axes and their labels.
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", left, top, left, top+ph)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", left, top+ph, left+pw, top+ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", left+pw/2, H-14, xmlText(xLabel))
	yl := "value"
	if m.Unit != "" {
		yl = m.Unit
	}
	fmt.Fprintf(&b, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">%s</text>`+"\n", top+ph/2, top+ph/2, xmlText(yl))
	// The series.
	var pts strings.Builder
	for i := range ys {
		fmt.Fprintf(&pts, "%.2f,%.2f ", px(xs[i]), py(ys[i]))
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="%s"/>`+"\n", strings.TrimSpace(pts.String()))
	// Min and max markers.
	imin, imax := 0, 0
	for i, v := range ys {
		if v < ys[imin] {
			imin = i
		}
		if v > ys[imax] {
			imax = i
		}
	}
	marker := func(i int, label, color string, dy float64) {
		x, y := px(xs[i]), py(ys[i])
		anchor := "start"
		if x > left+pw*0.8 {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<circle cx="%.2f" cy="%.2f" r="4" fill="%s"/>`+"\n", x, y, color)
		fmt.Fprintf(&b, `<text x="%.2f" y="%.2f" fill="%s" text-anchor="%s">%s %s @ %s</text>`+"\n", x+6, y+dy, color, anchor, label, fnum(ys[i]), fnum(xs[i]))
	}
	marker(imax, "max", "#d62728", -8)
	marker(imin, "min", "#2ca02c", 16)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func fnum(f float64) string { return strconv.FormatFloat(round6(f), 'g', 6, 64) }

// xmlText escapes text content and drops characters XML cannot carry.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r < 0x20 && r != '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
