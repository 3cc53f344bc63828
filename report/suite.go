package report

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"path"
	"strings"
	"time"
)

// The report of a suite across phones (run-batch with case files,
// --devices or retries): suite.json, the suite report
// (schemas/suite-report.schema.json), and history.json, the results
// history of its cases when the batch was written. It shows what ran on
// which phone when (a timeline per phone), every case with its attempts
// side by side, flaky markers and the case's history strip, and filters
// by verdict (CSS only) and by name (one inline script, pinned by its
// hash in the page's Content-Security-Policy; the page reads the same
// without it).

// Files of a suite's batch directory.
const (
	suiteReport  = "suite.json"
	suiteHistory = "history.json"
)

func isSuite(e *evidence) bool { return e.isFile(suiteReport) }

type suiteView struct {
	Phones   []suitePhone
	Cases    []suiteCase
	Counts   suiteCounts
	Filters  []suiteFilter
	Warnings []string
	// HasHistory: history.json was there.
	HasHistory bool
}

type suiteCounts struct {
	Cases, Passed, Failed, Flaky, Error, Skipped, Attempts int64
}

type suiteFilter struct{ Verdict, Label string }

type suitePhone struct {
	Serial, Model, Android string
	Usable                 bool
	LeftOut, Retired       string
	Slots                  []suiteSlot
	Busy                   string // share of the suite's wall time it ran cases
}

// suiteSlot is one attempt on a phone's timeline, placed by percent of
// the suite's wall time.
type suiteSlot struct {
	Case, Verdict, Title string
	Left, Width          string
}

type suiteCase struct {
	Index           int
	Name, NameKey   string
	Verdict, Device string
	File            string
	Reason          string
	Attempts        []suiteAttempt
	History         []string // newest first
	HistoryNote     string
}

type suiteAttempt struct {
	Number                 int64
	Device, Verdict        string
	ErrorCode, Error, Step string
	DurationMs             int64
	Link, Thumb            string
	Media                  runMedia
}

// suiteScript filters the case rows by the search box: rows whose
// data-name does not contain the query (case-insensitively) are hidden.
const suiteScript = `(function(){var q=document.getElementById('case-search');if(!q)return;q.hidden=false;` +
	`q.addEventListener('input',function(){var s=q.value.trim().toLowerCase();` +
	`document.querySelectorAll('#cases tbody tr').forEach(function(r){r.classList.toggle('nomatch',s!==''&&r.dataset.name.indexOf(s)<0)})})})();`

// scriptHash is the CSP source that allows exactly script.
func scriptHash(script string) string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func suitePage(e *evidence) (*page, error) {
	var rep obj
	if err := e.readJSON(suiteReport, &rep); err != nil {
		return nil, err
	}
	v := &suiteView{Warnings: rep.Texts("warnings")}
	hist := map[string]obj{}
	if e.isFile(suiteHistory) {
		var h obj
		if err := e.readJSON(suiteHistory, &h); err == nil {
			v.HasHistory = true
			for _, c := range h.Objects("cases") {
				hist[c.Display("caseName")] = c
			}
		}
	}
	c := rep.Object("counts")
	for _, f := range []struct {
		dst *int64
		k   string
	}{{&v.Counts.Cases, "cases"}, {&v.Counts.Passed, "passed"}, {&v.Counts.Failed, "failed"}, {&v.Counts.Flaky, "flaky"},
		{&v.Counts.Error, "error"}, {&v.Counts.Skipped, "skipped"}, {&v.Counts.Attempts, "attempts"}} {
		*f.dst, _ = c.Integer(f.k)
	}
	start, _ := time.Parse(time.RFC3339Nano, rep.Display("startedAt"))
	end, _ := time.Parse(time.RFC3339Nano, rep.Display("finishedAt"))
	wall := end.Sub(start)
	for _, d := range rep.Objects("devices") {
		p := suitePhone{Serial: d.Display("serial"), Model: d.Display("model"), Android: d.Display("androidVersion")}
		p.Usable, _ = d.Flag("usable")
		if lo := d.Object("leftOut"); lo != nil {
			p.LeftOut = lo.Display("errorCode") + ": " + lo.Display("error")
		}
		if rt := d.Object("retired"); rt != nil {
			p.Retired = rt.Display("errorCode") + ": " + rt.Display("error")
		}
		var busy time.Duration
		for _, s := range d.Objects("timeline") {
			from, _ := time.Parse(time.RFC3339Nano, s.Display("startedAt"))
			to, _ := time.Parse(time.RFC3339Nano, s.Display("finishedAt"))
			busy += to.Sub(from)
			ms, _ := s.Integer("durationMs")
			slot := suiteSlot{Case: s.Display("caseName"), Verdict: s.Display("verdict"),
				Title: fmt.Sprintf("%s · attempt %s · %s · %s", s.Display("caseName"), s.Display("attempt"), s.Display("verdict"), humanMillis(ms))}
			slot.Left, slot.Width = percent(from.Sub(start), wall), percent(to.Sub(from), wall)
			p.Slots = append(p.Slots, slot)
		}
		if wall > 0 {
			p.Busy = percent(busy, wall)
		}
		v.Phones = append(v.Phones, p)
	}
	seen := map[string]bool{}
	for i, cs := range rep.Objects("cases") {
		sc := suiteCase{Index: i + 1, Name: cs.Display("caseName"), Verdict: cs.Display("verdict"), Device: cs.Display("device"), File: cs.Display("file")}
		sc.NameKey = strings.ToLower(sc.Name)
		if r := cs.Object("reason"); r != nil {
			sc.Reason = r.Display("errorCode") + ": " + r.Display("error")
		}
		for _, a := range cs.Objects("attempts") {
			at := suiteAttempt{Device: a.Display("device"), Verdict: a.Display("verdict"), ErrorCode: a.Display("errorCode"), Error: a.Display("error"),
				Step: a.Display("exceptionStepId")}
			at.Number, _ = a.Integer("attempt")
			at.DurationMs, _ = a.Integer("durationMs")
			if sc.Device == "" {
				sc.Device = at.Device
			}
			if base, ok := attemptBase(e, a.Display("evidenceDir")); ok {
				if e.isFile(base + "/" + fileName) {
					at.Link = href(base + "/" + fileName)
				}
				if e.isFile(base + "/" + runScreen) {
					at.Thumb = href(base + "/" + runScreen)
				}
				at.Media = mediaOf(e, base)
			}
			sc.Attempts = append(sc.Attempts, at)
		}
		if h, ok := hist[sc.Name]; ok {
			sc.History = h.Texts("lastVerdicts")
			runs, _ := h.Integer("runs")
			pass, _ := h.Number("passRate")
			flake, _ := h.Number("flakeRate")
			med, _ := h.Integer("medianDurationMs")
			sc.HistoryNote = fmt.Sprintf("%d runs · pass %s%% · flaky %s%% · median %s", runs, formatNumber(pass*100), formatNumber(flake*100), humanMillis(med))
		}
		seen[sc.Verdict] = true
		v.Cases = append(v.Cases, sc)
	}
	for _, f := range []string{"passed", "flaky", "failed", "error", "skipped"} {
		if seen[f] {
			v.Filters = append(v.Filters, suiteFilter{Verdict: f, Label: f})
		}
	}
	verdict := "passed"
	opts := rep.Object("options")
	failOnFlaky, _ := opts.Flag("failOnFlaky")
	interrupted, _ := rep.Flag("interrupted")
	switch {
	case interrupted:
		verdict = "cancelled"
	case v.Counts.Failed > 0 || failOnFlaky && v.Counts.Flaky > 0:
		verdict = "failed"
	case v.Counts.Error > 0 || v.Counts.Skipped > 0:
		verdict = "error"
	case v.Counts.Cases == 0:
		verdict = "not_tested"
	}
	usable := 0
	for _, p := range v.Phones {
		if p.Usable {
			usable++
		}
	}
	head := fmt.Sprintf("%d cases on %d phones: %d passed, %d flaky, %d failed, %d error, %d skipped",
		v.Counts.Cases, usable, v.Counts.Passed, v.Counts.Flaky, v.Counts.Failed, v.Counts.Error, v.Counts.Skipped)
	retries, _ := opts.Integer("retries")
	infra, _ := opts.Integer("infraRetries")
	shard, _ := opts.Flag("shardAll")
	dur, _ := rep.Integer("durationMs")
	facts := []fact{{Label: "batchId", Value: rep.Display("batchId"), Mono: true}, {Label: "started", Value: start.UTC().Format("2006-01-02 15:04:05 UTC")},
		{Label: "duration", Value: humanMillis(dur)}, {Label: "attempts", Value: fmt.Sprint(v.Counts.Attempts)},
		{Label: "retries", Value: fmt.Sprintf("%d (infrastructure %d)", retries, infra)}}
	if shard {
		facts = append(facts, fact{Label: "mode", Value: "every case on every phone"})
	}
	return &page{Kind: kindSuite, Suite: v, Title: "Suite " + rep.Display("batchId"), Facts: facts,
		Banner: banner{Verdict: verdict, Headline: head},
		Script: template.JS(suiteScript), ScriptSrc: scriptHash(suiteScript)}, nil
}

// percent is d as a share of all, for a CSS length ("12.34%").
func percent(d, all time.Duration) string {
	if all <= 0 || d < 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", min(100, float64(d)/float64(all)*100))
}

// attemptBase is an attempt's evidence directory inside e: a run's
// (result.json) or, for a farm task's shard, a verification's
// (report.json).
func attemptBase(e *evidence, dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	for _, f := range []string{runResultFile, verifyReport} {
		if rel, ok := e.local(dir + "/" + f); ok {
			return path.Dir(rel), true
		}
	}
	return "", false
}

// suiteAttemptDirs are the attempts' evidence directories (relative) that
// hold a run's evidence: their reports are written with the suite's.
func suiteAttemptDirs(e *evidence) []string {
	var rep obj
	if e.readJSON(suiteReport, &rep) != nil {
		return nil
	}
	var out []string
	for _, c := range rep.Objects("cases") {
		for _, a := range c.Objects("attempts") {
			if dir := a.Display("evidenceDir"); dir != "" {
				if rel, ok := e.local(dir + "/" + runResultFile); ok {
					out = append(out, path.Dir(rel))
				}
			}
		}
	}
	return out
}
