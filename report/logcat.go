package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// logExcerpt is the part of logcat around the failure (or the end of the
// run). logcat's threadtime lines carry the device's local time without a
// year or zone, so the window needs the device's UTC offset: recorded in
// the manifest (extra deviceUtcOffset, "+0800"), or inferred from the
// device replay log whose lines carry full local timestamps next to the
// epoch times of the result. Without either the excerpt is logcat's tail,
// which is captured right after the run ended.
type logExcerpt struct {
	Name, Href string
	Lines      []logLine
	Note       string
}

type logLine struct {
	Text  string
	Level string // V D I W E F, or "" when not a threadtime line
	Mark  bool   // inside the failure's last seconds
}

var (
	threadtimeLine = lazyregexp.New(`^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\s+\d+\s+\d+\s+([VDIWEF])\s`)
	fullStamp      = lazyregexp.New(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})`)
)

// Window of the excerpt around the anchor time.
const (
	logBefore = 30 * time.Second
	logAfter  = 5 * time.Second
	logMark   = 3 * time.Second
)

func logcatExcerpt(e *evidence, status obj, failed *obj, m artifacts.Manifest, devLog *textBlock) *logExcerpt {
	if !e.isFile(runLogcat) {
		return nil
	}
	b, _, err := e.read(runLogcat, maxTextBytes)
	if err != nil {
		return &logExcerpt{Name: runLogcat, Href: runLogcat, Note: "logcat cannot be read: " + err.Error()}
	}
	lines := splitLines(strings.ToValidUTF8(string(b), "\uFFFD"))
	x := &logExcerpt{Name: runLogcat, Href: runLogcat}
	anchorMs, what := int64(0), "the end of the run"
	if failed != nil {
		anchorMs, _ = (*failed).Integer("endTime")
		what = "the failure"
	}
	if anchorMs == 0 {
		anchorMs, _ = status.Integer("finishedAt")
	}
	offset, known := deviceOffset(m, status, devLog)
	if anchorMs == 0 || !known {
		x.Note = "The last lines of logcat (captured right after the run); the device clock's offset is not recorded, so the failure time cannot be placed in it."
		x.Lines = classify(tail(lines, maxLogcatLines), time.Time{}, time.Time{})
		return x
	}
	anchor := time.UnixMilli(anchorMs).UTC().Add(offset) // device-local wall time, expressed in UTC
	from, to := anchor.Add(-logBefore), anchor.Add(logAfter)
	var picked []string
	for _, l := range lines {
		t, ok := threadtime(l, anchor.Year())
		if !ok {
			continue
		}
		if t.After(anchor.AddDate(0, 6, 0)) { // December lines read in January
			t = t.AddDate(-1, 0, 0)
		}
		if !t.Before(from) && !t.After(to) {
			picked = append(picked, l)
		}
	}
	x.Lines = classify(tail(picked, maxLogcatLines), anchor.Add(-logMark), anchor.Add(logMark))
	x.Note = "logcat from " + logBefore.String() + " before to " + logAfter.String() + " after " + what +
		" (device time " + anchor.Format("01-02 15:04:05.000") + "); lines in the last seconds before it are marked."
	if len(x.Lines) == 0 {
		x.Note = "logcat has no line within " + logBefore.String() + " of " + what + "; its last lines follow."
		x.Lines = classify(tail(lines, maxLogcatLines), time.Time{}, time.Time{})
	}
	return x
}

func threadtime(l string, year int) (time.Time, bool) {
	m := threadtimeLine.FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02 15:04:05.000", fmt.Sprintf("%04d", year)+"-"+m[1]+"-"+m[2]+" "+m[3]+":"+m[4]+":"+m[5]+"."+m[6])
	return t, err == nil
}

func classify(lines []string, markFrom, markTo time.Time) []logLine {
	out := make([]logLine, len(lines))
	for i, l := range lines {
		ll := logLine{Text: l}
		if m := threadtimeLine.FindStringSubmatch(l); m != nil {
			ll.Level = m[7]
			if !markFrom.IsZero() {
				if t, ok := threadtime(l, markFrom.Year()); ok && !t.Before(markFrom) && !t.After(markTo) {
					ll.Mark = true
				}
			}
		}
		out[i] = ll
	}
	return out
}

func tail(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// deviceOffset is the device clock's offset from UTC.
func deviceOffset(m artifacts.Manifest, status obj, devLog *textBlock) (time.Duration, bool) {
	if s := m.Extra["deviceUtcOffset"]; s != "" {
		if t, err := time.Parse("-0700", s); err == nil {
			_, off := t.Zone()
			return time.Duration(off) * time.Second, true
		}
	}
	if devLog == nil || len(devLog.Lines) == 0 {
		return 0, false
	}
	var start int64
	for _, r := range status.Objects("results") {
		if s, ok := r.Integer("startTime"); ok {
			start = s
			break
		}
	}
	mm := fullStamp.FindStringSubmatch(devLog.Lines[0])
	if start == 0 || mm == nil {
		return 0, false
	}
	local, err := time.Parse("2006-01-02 15:04:05.000", mm[1])
	if err != nil {
		return 0, false
	}
	// Zones are whole quarter hours; the log line and the epoch time name
	// the same moment give or take a few milliseconds.
	diff := local.Sub(time.UnixMilli(start).UTC())
	q := time.Duration(math.Round(float64(diff)/float64(15*time.Minute))) * 15 * time.Minute
	if q < -14*time.Hour || q > 14*time.Hour || (diff-q).Abs() > time.Minute {
		return 0, false
	}
	return q, true
}
