package artifacts

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JUnit XML as CI systems read it (de facto testmoapp/junitxml rules): a
// testcase passed unless it has a <failure>, <error> or <skipped> child;
// <failure> is a product (assertion) failure, <error> an infrastructure or
// control error, <skipped> a test that was not executed. Attachments are
// `[[ATTACHMENT|/abs/path]]` lines in the testcase's <system-out>, which the
// Jenkins junit-attachments plugin and GitLab read.

// JUnitCase is one executed (or not reached) test.
type JUnitCase struct {
	Name      string
	Classname string
	// Duration is the wall time of the test; written as seconds.
	Duration time.Duration
	// Exactly one of Failure, Error, Skipped may be set (or none: passed).
	Failure *JUnitProblem
	Error   *JUnitProblem
	Skipped *JUnitProblem
	// Properties are written as <property name value/> on the testcase.
	Properties []JUnitProperty
	// Attachments are absolute file paths listed in <system-out>.
	Attachments []string
	// SystemOut is extra text placed before the attachment lines.
	SystemOut string
	// Reruns are the test's other runs (junit_rerun.go).
	Reruns []JUnitRerun
}

// JUnitProblem is the content of <failure>, <error> or <skipped>.
type JUnitProblem struct {
	Message string
	Type    string
	Text    string
}

// JUnitProperty is one name/value pair.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitSuite is one <testsuite>.
type JUnitSuite struct {
	Name       string
	Timestamp  time.Time
	Properties []JUnitProperty
	Cases      []JUnitCase
}

// counts are the testsuite counters derived from the cases.
type counts struct {
	Tests, Failures, Errors, Skipped int
}

// Counts derives the suite counters from its cases.
func (s JUnitSuite) Counts() counts {
	var c counts
	for _, tc := range s.Cases {
		c.Tests++
		switch {
		case tc.Failure != nil:
			c.Failures++
		case tc.Error != nil:
			c.Errors++
		case tc.Skipped != nil:
			c.Skipped++
		}
	}
	return c
}

// The XML element types. Exported so tests elsewhere can decode reports
// with encoding/xml against the same structure.

// XMLTestsuites is the <testsuites> root.
type XMLTestsuites struct {
	XMLName  xml.Name       `xml:"testsuites"`
	Name     string         `xml:"name,attr,omitempty"`
	Tests    int            `xml:"tests,attr"`
	Failures int            `xml:"failures,attr"`
	Errors   int            `xml:"errors,attr"`
	Skipped  int            `xml:"skipped,attr"`
	Time     string         `xml:"time,attr"`
	Suites   []XMLTestsuite `xml:"testsuite"`
}

// XMLTestsuite is one <testsuite>.
type XMLTestsuite struct {
	Name       string         `xml:"name,attr"`
	Tests      int            `xml:"tests,attr"`
	Failures   int            `xml:"failures,attr"`
	Errors     int            `xml:"errors,attr"`
	Skipped    int            `xml:"skipped,attr"`
	Time       string         `xml:"time,attr"`
	Timestamp  string         `xml:"timestamp,attr,omitempty"`
	Properties *xmlProperties `xml:"properties,omitempty"`
	Cases      []XMLTestcase  `xml:"testcase"`
}

// xmlProperties wraps <property> elements.
type xmlProperties struct {
	Property []JUnitProperty `xml:"property"`
}

// XMLTestcase is one <testcase>.
type XMLTestcase struct {
	Name       string         `xml:"name,attr"`
	Classname  string         `xml:"classname,attr"`
	Time       string         `xml:"time,attr"`
	Properties *xmlProperties `xml:"properties,omitempty"`
	Failure    *xmlProblem    `xml:"failure,omitempty"`
	Error      *xmlProblem    `xml:"error,omitempty"`
	Skipped    *xmlProblem    `xml:"skipped,omitempty"`
	// Surefire's rerun elements, in its schema's order.
	RerunFailures []xmlRerun `xml:"rerunFailure"`
	RerunErrors   []xmlRerun `xml:"rerunError"`
	FlakyFailures []xmlRerun `xml:"flakyFailure"`
	FlakyErrors   []xmlRerun `xml:"flakyError"`
	SystemOut     *xmlText   `xml:"system-out,omitempty"`
}

// xmlProblem is <failure>, <error> or <skipped>.
type xmlProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// xmlText is an element with character data only.
type xmlText struct {
	Text string `xml:",chardata"`
}

func seconds(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// xmlSafe drops characters XML 1.0 cannot carry (control characters other
// than tab, newline and carriage return; invalid UTF-8); device messages
// are free text and one stray byte must not make the report unreadable.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return -1
		case r >= 0xD800 && r <= 0xDFFF:
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func problem(p *JUnitProblem) *xmlProblem {
	if p == nil {
		return nil
	}
	return &xmlProblem{Message: xmlSafe(p.Message), Type: xmlSafe(p.Type), Text: xmlSafe(p.Text)}
}

func props(ps []JUnitProperty) *xmlProperties {
	if len(ps) == 0 {
		return nil
	}
	out := make([]JUnitProperty, len(ps))
	for i, p := range ps {
		out[i] = JUnitProperty{Name: xmlSafe(p.Name), Value: xmlSafe(p.Value)}
	}
	return &xmlProperties{Property: out}
}

// buildJUnit converts suites into the XML structure.
func buildJUnit(name string, suites ...JUnitSuite) XMLTestsuites {
	root := XMLTestsuites{Name: xmlSafe(name)}
	var total time.Duration
	for _, s := range suites {
		c := s.Counts()
		var st time.Duration
		xs := XMLTestsuite{Name: xmlSafe(s.Name), Tests: c.Tests, Failures: c.Failures, Errors: c.Errors, Skipped: c.Skipped, Properties: props(s.Properties)}
		if !s.Timestamp.IsZero() {
			xs.Timestamp = s.Timestamp.UTC().Format("2006-01-02T15:04:05")
		}
		for _, tc := range s.Cases {
			st += tc.Duration
			x := XMLTestcase{Name: xmlSafe(tc.Name), Classname: xmlSafe(tc.Classname), Time: seconds(tc.Duration),
				Properties: props(tc.Properties), Failure: problem(tc.Failure), Error: problem(tc.Error), Skipped: problem(tc.Skipped)}
			addReruns(&x, tc.Reruns)
			if out := attachmentLines(tc.SystemOut, tc.Attachments); out != "" {
				x.SystemOut = &xmlText{Text: xmlSafe(out)}
			}
			xs.Cases = append(xs.Cases, x)
		}
		xs.Time = seconds(st)
		total += st
		root.Tests += c.Tests
		root.Failures += c.Failures
		root.Errors += c.Errors
		root.Skipped += c.Skipped
		root.Suites = append(root.Suites, xs)
	}
	root.Time = seconds(total)
	return root
}

// marshalJUnit renders the report with an XML declaration.
func marshalJUnit(name string, suites ...JUnitSuite) ([]byte, error) {
	b, err := xml.MarshalIndent(buildJUnit(name, suites...), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode junit report: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// JUnitOutput is the output policy of a --junit report: parent
// directories are created.
func JUnitOutput(overwrite bool) Output { return Output{Mode: ModeOf(overwrite), MakeParents: true} }

// WriteJUnit writes the report to path under the output policy. The caller
// checks the path first (JUnitOutput(overwrite).CheckFile).
func WriteJUnit(path string, overwrite bool, name string, suites ...JUnitSuite) error {
	b, err := marshalJUnit(name, suites...)
	if err != nil {
		return err
	}
	_, err = JUnitOutput(overwrite).WriteFile(path, b)
	return err
}
