package report

import (
	"fmt"
	"path"
	"strings"
)

// What a run directory holds beyond its report, for the batch and suite
// pages: whether the run kept a screen recording and performance CSVs,
// each as a link (issue: a suite's row says at a glance which runs can be
// watched or have figures, without opening every report).

// perfDir is where a run's performance CSVs land (run --perf).
const perfDir = "perf"

type runMedia struct {
	// Video links the recording's first part; VideoParts counts them.
	Video      string
	VideoParts int
	// Perf links the run report's performance section; PerfFiles counts
	// the CSVs under perf/.
	Perf      string
	PerfFiles int
}

// videoParts are the recording's parts in dir (relative to e; "." for
// e itself): video.mp4, or video-1.mp4, video-2.mp4, ...
func videoParts(e *evidence, dir string) []string {
	if one := path.Join(dir, runVideo); e.isFile(one) {
		return []string{one}
	}
	var parts []string
	for i := 1; ; i++ {
		p := path.Join(dir, fmt.Sprintf("video-%d.mp4", i))
		if !e.isFile(p) {
			return parts
		}
		parts = append(parts, p)
	}
}

// mediaOf reads dir's recording and performance files.
func mediaOf(e *evidence, dir string) runMedia {
	var m runMedia
	if parts := videoParts(e, dir); len(parts) > 0 {
		m.Video, m.VideoParts = href(parts[0]), len(parts)
	}
	if pd := path.Join(dir, perfDir); e.isDir(pd) {
		for _, de := range e.entries(pd) {
			if de.Type().IsRegular() && strings.EqualFold(path.Ext(de.Name()), ".csv") {
				m.PerfFiles++
			}
		}
		switch {
		case m.PerfFiles > 0 && e.isFile(path.Join(pd, fileName)):
			// A farm shard's recording has a page of its own (its
			// verification report has no performance section).
			m.Perf = href(path.Join(pd, fileName))
		case m.PerfFiles > 0:
			m.Perf = href(path.Join(dir, fileName)) + "#performance"
		}
	}
	return m
}
