package perfstats

import (
	"slices"
	"strings"
)

// SoloPi's performance series: a CSV's metric and the jank figures of a
// directory's FPS and delay series.

// metricOf reads SoloPi's layout: column 0 RecordTime (epoch ms), column 1
// the value `<name>(<unit>)`, column 3 SimpleTime (seconds since start).
func metricOf(fa *fileAnalysis, base string) *metricSummary {
	if len(fa.Columns) < 2 || fa.Columns[1].Kind != "numeric" {
		return nil
	}
	val := fa.Columns[1]
	fileName, source := nameFromFile(base)
	name, unit := fileName, ""
	if m := headerUnit.FindStringSubmatch(val.Name); m != nil {
		if fa.Encoding != encodingGBKUndecoded {
			name = strings.TrimSpace(m[1])
		}
		if fa.Encoding != encodingGBKUndecoded || isASCII(m[2]) {
			unit = strings.TrimSpace(m[2])
		}
	} else if fa.Encoding != encodingGBKUndecoded {
		name = val.Name
	}
	ms := &metricSummary{File: fa.Path, Name: name, Unit: unit, Source: source, SampleCount: val.SampleCount,
		Min: float64(*val.Min), Median: float64(*val.Median), P90: float64(*val.P90), Max: float64(*val.Max), Mean: float64(*val.Mean), ys: val.values}
	// Times and the x axis only when the time columns are fully numeric and
	// aligned with the value column; otherwise the chart uses sample order.
	if t := fa.Columns[0]; t.Kind == "numeric" && len(t.values) == len(val.values) {
		lo, hi := slices.Min(t.values), slices.Max(t.values)
		ms.StartTime, ms.EndTime, ms.DurationMs = ptr(int64(lo)), ptr(int64(hi)), ptr(int64(hi-lo))
		ms.xs = make([]float64, len(t.values))
		for i, x := range t.values {
			ms.xs[i] = (x - lo) / 1000
		}
	}
	if len(fa.Columns) >= 4 {
		if s := fa.Columns[3]; s.Kind == "numeric" && len(s.values) == len(val.values) {
			ms.xs = s.values
		}
	}
	if isFPS(ms) {
		below := 0
		for _, v := range ms.ys {
			if v < fpsJankThreshold {
				below++
			}
		}
		ms.FPS = &fpsFigures{Threshold: fpsJankThreshold, SamplesBelow: below, BelowShare: round6(float64(below) / float64(len(ms.ys))), Lowest: ms.Min}
	}
	return ms
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isFPS(m *metricSummary) bool {
	n := strings.ToLower(m.Name)
	u := strings.ToLower(m.Unit)
	return n == "帧率" || n == "frame rate" || n == "fps" || u == "fps" || (u == "帧" && !strings.Contains(n, "延迟"))
}

// jankFigures combines FPS and delay series across the directory.
func jankFigures(ms []*metricSummary) JankFigures {
	var j JankFigures
	below, total := 0, 0
	for _, m := range ms {
		n := strings.ToLower(m.Name)
		switch {
		case m.FPS != nil:
			below += m.FPS.SamplesBelow
			total += m.SampleCount
			if j.LowestFPS == nil || m.Min < *j.LowestFPS {
				j.LowestFPS = ptr(m.Min)
			}
		case strings.Contains(n, "最长延迟") || (strings.Contains(n, "longest") && strings.Contains(n, "delay")):
			if j.LongestDelayMs == nil || m.Max > *j.LongestDelayMs {
				j.LongestDelayMs = ptr(m.Max)
			}
		case strings.Contains(n, "延迟次数") || strings.Contains(n, "jank count") || strings.Contains(n, "delay count"):
			j.JankCount = ptr(round6(m.Mean * float64(m.SampleCount)))
		case strings.Contains(n, "延迟占比") || strings.Contains(n, "jank ratio") || strings.Contains(n, "delay ratio"):
			j.JankShareMean = ptr(m.Mean)
		default:
			continue
		}
		j.Available = true
	}
	if total > 0 {
		j.FPSBelow30Share = ptr(round6(float64(below) / float64(total)))
	}
	return j
}
