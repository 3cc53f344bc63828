package artifacts

// Reruns in JUnit as Maven Surefire writes them (Jenkins and GitLab read
// them): a test that failed and then passed has no <failure>, and each
// failed run is a <flakyFailure> (<flakyError> for an error); a test that
// failed on every run has its first run as <failure> (or <error>) and each
// later run as a <rerunFailure> (<rerunError>). Each element carries the
// run's message and type, a <stackTrace> with its details and a
// <system-out> with its attachments.

import (
	"fmt"
	"strings"
)

// RerunKind says which Surefire element a run is written as.
type RerunKind int

const (
	// FlakyFailure is a failed run of a test that passed later.
	FlakyFailure RerunKind = iota
	// flakyError is an errored run of a test that passed later.
	flakyError
	// RerunFailure is a later failed run of a test that never passed.
	RerunFailure
	// RerunError is a later errored run of a test that never passed.
	RerunError
)

// JUnitRerun is one run of a test besides the one its result is.
type JUnitRerun struct {
	Kind    RerunKind
	Message string
	Type    string
	// StackTrace is the run's details (for a device: the failed step,
	// the phone, the evidence directory).
	StackTrace string
	// Attachments are absolute file paths, listed in the run's
	// <system-out> as [[ATTACHMENT|path]] lines.
	Attachments []string
}

// xmlRerun is <flakyFailure>, <flakyError>, <rerunFailure> or
// <rerunError>.
type xmlRerun struct {
	Message    string   `xml:"message,attr,omitempty"`
	Type       string   `xml:"type,attr,omitempty"`
	StackTrace *xmlText `xml:"stackTrace,omitempty"`
	SystemOut  *xmlText `xml:"system-out,omitempty"`
}

// addReruns writes the runs into their elements of x.
func addReruns(x *XMLTestcase, runs []JUnitRerun) {
	for _, r := range runs {
		e := xmlRerun{Message: xmlSafe(r.Message), Type: xmlSafe(r.Type)}
		if r.StackTrace != "" {
			e.StackTrace = &xmlText{Text: xmlSafe(r.StackTrace)}
		}
		if out := attachmentLines("", r.Attachments); out != "" {
			e.SystemOut = &xmlText{Text: xmlSafe(out)}
		}
		switch r.Kind {
		case FlakyFailure:
			x.FlakyFailures = append(x.FlakyFailures, e)
		case flakyError:
			x.FlakyErrors = append(x.FlakyErrors, e)
		case RerunFailure:
			x.RerunFailures = append(x.RerunFailures, e)
		case RerunError:
			x.RerunErrors = append(x.RerunErrors, e)
		}
	}
}

// attachmentLines is text (newline-terminated) followed by one
// [[ATTACHMENT|path]] line per attachment.
func attachmentLines(text string, attachments []string) string {
	var out strings.Builder
	if text != "" {
		out.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			out.WriteByte('\n')
		}
	}
	for _, a := range attachments {
		fmt.Fprintf(&out, "[[ATTACHMENT|%s]]\n", a)
	}
	return out.String()
}
