package suitereport

import (
	"fmt"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
)

// NotRunSuite names the testsuite of cases no phone ran (a suite that
// was interrupted, or whose phones all dropped, before reaching them).
const NotRunSuite = "not-run"

// JUnit renders the report as CI systems read it: one <testsuite> per
// phone (properties serial, model, androidVersion), each case in the suite
// of the phone that decided it (its last finished attempt; with ShardAll
// the phone it is bound to), named by the case name, which is unique in a
// suite. A failed case is a <failure> (its first failed attempt) with a
// <rerunFailure> per later failure; an error case is an <error> with a
// <rerunError> per later one; a flaky case has no failure and a
// <flakyFailure> per failed attempt; a skipped case is <skipped>.
// Infrastructure errors before a verdict are told in <system-out>, not as
// runs: they are the phone's, not the case's. Times are the attempts' own
// durations; the failure screenshots and logs are [[ATTACHMENT|path]]
// lines.
func (r *Report) JUnit() []artifacts.JUnitSuite {
	var suites []artifacts.JUnitSuite
	index := map[string]int{}
	for _, d := range r.Devices {
		s := artifacts.JUnitSuite{Name: d.Serial, Properties: []artifacts.JUnitProperty{
			{Name: "serial", Value: d.Serial}, {Name: "model", Value: d.Model}, {Name: "androidVersion", Value: d.AndroidVersion},
			{Name: "batchId", Value: r.BatchID}}}
		if d.LeftOut != nil {
			s.Properties = append(s.Properties, artifacts.JUnitProperty{Name: "leftOut", Value: d.LeftOut.String()})
		}
		if d.Retired != nil {
			s.Properties = append(s.Properties, artifacts.JUnitProperty{Name: "retired", Value: d.Retired.String()})
		}
		if len(d.Timeline) > 0 {
			s.Timestamp = d.Timeline[0].StartedAt
		}
		index[d.Serial] = len(suites)
		suites = append(suites, s)
	}
	for _, c := range r.Cases {
		serial := c.decidedOn()
		i, ok := index[serial]
		if !ok {
			name := serial
			if name == "" {
				name = NotRunSuite
			}
			i = len(suites)
			index[serial] = i
			suites = append(suites, artifacts.JUnitSuite{Name: name, Timestamp: r.StartedAt,
				Properties: []artifacts.JUnitProperty{{Name: "batchId", Value: r.BatchID}}})
		}
		suites[i].Cases = append(suites[i].Cases, c.junitCase(r.Options.ShardAll))
	}
	return suites
}

// decidedOn is the phone whose suite holds the case.
func (c Case) decidedOn() string {
	if c.Device != "" {
		return c.Device
	}
	for i := len(c.Attempts) - 1; i >= 0; i-- {
		if c.Attempts[i].Verdict != Cancelled {
			return c.Attempts[i].Device
		}
	}
	return ""
}

func (c Case) junitCase(shardAll bool) artifacts.JUnitCase {
	classname := "solopi." + c.Name
	if shardAll && c.Device != "" {
		classname = "solopi." + strings.ReplaceAll(c.Device, ".", "_")
	}
	tc := artifacts.JUnitCase{Name: c.Name, Classname: classname}
	add := func(k, v string) {
		if v != "" {
			tc.Properties = append(tc.Properties, artifacts.JUnitProperty{Name: k, Value: v})
		}
	}
	add("verdict", string(c.Verdict))
	add("caseFingerprint", c.Fingerprint)
	add("file", c.File)
	add("attempts", fmt.Sprint(len(c.Attempts)))
	var notes []string
	first := true
	for _, a := range c.Attempts {
		tc.Duration += time.Duration(a.DurationMs) * time.Millisecond
		switch {
		case a.Verdict == Passed:
			add("runId", a.RunID)
			add("device", a.Device)
			continue
		case a.Verdict == Cancelled:
			notes = append(notes, a.note("cancelled"))
			continue
		case a.Verdict == Error && c.Verdict != Error:
			notes = append(notes, a.note("infrastructure error, not a verdict of the case"))
			continue
		}
		tc.Attachments = append(tc.Attachments, a.Attachments...)
		switch {
		case c.Verdict == Flaky:
			tc.Reruns = append(tc.Reruns, a.rerun(artifacts.FlakyFailure))
		case first && c.Verdict == Failed:
			tc.Failure = a.problem()
			first = false
		case first && c.Verdict == Error:
			tc.Error = a.problem()
			first = false
		case c.Verdict == Failed:
			tc.Reruns = append(tc.Reruns, a.rerun(artifacts.RerunFailure))
		default:
			tc.Reruns = append(tc.Reruns, a.rerun(artifacts.RerunError))
		}
	}
	switch c.Verdict {
	case Skipped:
		msg := "not run"
		if c.Reason != nil {
			msg = "not run: " + c.Reason.Message
		}
		tc.Skipped = &artifacts.JUnitProblem{Message: msg}
	case Error:
		if tc.Error == nil {
			p := &artifacts.JUnitProblem{Type: "error", Message: "the case could not run"}
			if c.Reason != nil {
				p.Type, p.Message = c.Reason.Code, c.Reason.Message
			}
			tc.Error = p
		}
	}
	tc.SystemOut = strings.Join(notes, "\n")
	return tc
}

// details are the lines of an attempt's stack trace.
func (a Attempt) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "attempt: %d\ndevice: %s\n", a.Number, a.Device)
	if a.ExceptionStep != nil {
		fmt.Fprintf(&b, "exceptionStep: %d\n", *a.ExceptionStep)
	}
	if a.ExceptionStepID != "" {
		fmt.Fprintf(&b, "exceptionStepId: %s\n", a.ExceptionStepID)
	}
	if a.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", a.Error)
	}
	if a.RunID != "" {
		fmt.Fprintf(&b, "runId: %s\n", a.RunID)
	}
	if a.EvidenceDir != "" {
		fmt.Fprintf(&b, "evidence: %s\n", a.EvidenceDir)
	}
	return b.String()
}

func (a Attempt) problem() *artifacts.JUnitProblem {
	return &artifacts.JUnitProblem{Type: a.ErrorCode, Message: a.Error, Text: a.details()}
}

func (a Attempt) rerun(k artifacts.RerunKind) artifacts.JUnitRerun {
	return artifacts.JUnitRerun{Kind: k, Type: a.ErrorCode, Message: a.Error, StackTrace: a.details(), Attachments: a.Attachments}
}

func (a Attempt) note(what string) string {
	s := fmt.Sprintf("attempt %d on %s: %s", a.Number, a.Device, what)
	if a.ErrorCode != "" {
		s += " (" + a.ErrorCode + ": " + a.Error + ")"
	}
	return s
}

// WriteJUnit writes the report's JUnit to path under the --junit output
// policy (artifacts.JUnitOutput).
func (r *Report) WriteJUnit(path string, overwrite bool) error {
	name := r.Name
	if name == "" {
		name = "solopi"
	}
	return artifacts.WriteJUnit(path, overwrite, name, r.JUnit()...)
}

// File is the report's file in a batch (or farm task) directory, which
// `solopi report DIR` renders.
const File = "suite.json"

// WriteFile writes the report as dir/suite.json (dir is created when
// missing; an existing report is replaced).
func (r *Report) WriteFile(dir string) error {
	d, err := artifacts.Open(dir, artifacts.EvidenceOverwrite, File)
	if err != nil {
		return err
	}
	if _, err := d.WriteJSON(File, "suite", r); err != nil {
		return err
	}
	return d.Sync()
}
