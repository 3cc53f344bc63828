package artifacts

import (
	"encoding/xml"
	"strings"
	"testing"
)

// Surefire's rerun elements: a flaky test has no <failure> and counts as
// passed; a test that failed every run keeps its first run as <failure>.
func TestJUnitReruns(t *testing.T) {
	t.Parallel()
	s := JUnitSuite{Name: "phone", Cases: []JUnitCase{
		{Name: "flaky", Classname: "solopi.flaky", Reruns: []JUnitRerun{
			{Kind: FlakyFailure, Message: "injected failure", Type: "replay_failed", StackTrace: "exceptionStep: 0\x01", Attachments: []string{"/e/a1/screen.png"}},
			{Kind: flakyError, Message: "phone dropped", Type: "run_lost"},
		}},
		{Name: "broken", Classname: "solopi.broken", Failure: &JUnitProblem{Message: "first", Type: "replay_failed"},
			Reruns: []JUnitRerun{{Kind: RerunFailure, Message: "second", Type: "replay_failed"}, {Kind: RerunError, Message: "third", Type: "adb_error"}}},
	}}
	b, err := marshalJUnit("suite", s)
	if err != nil {
		t.Fatal(err)
	}
	var doc XMLTestsuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	ts := doc.Suites[0]
	if ts.Tests != 2 || ts.Failures != 1 || ts.Errors != 0 {
		t.Fatalf("counts %+v", ts)
	}
	flaky, broken := ts.Cases[0], ts.Cases[1]
	if flaky.Failure != nil || len(flaky.FlakyFailures) != 1 || len(flaky.FlakyErrors) != 1 {
		t.Fatalf("flaky: %+v", flaky)
	}
	ff := flaky.FlakyFailures[0]
	if ff.Message != "injected failure" || ff.Type != "replay_failed" || ff.StackTrace == nil || ff.StackTrace.Text != "exceptionStep: 0" ||
		ff.SystemOut == nil || ff.SystemOut.Text != "[[ATTACHMENT|/e/a1/screen.png]]\n" {
		t.Fatalf("flakyFailure: %+v", ff)
	}
	if broken.Failure == nil || broken.Failure.Message != "first" || len(broken.RerunFailures) != 1 || broken.RerunFailures[0].Message != "second" ||
		len(broken.RerunErrors) != 1 || broken.RerunErrors[0].Type != "adb_error" {
		t.Fatalf("broken: %+v", broken)
	}
	// Surefire's schema order: failure, rerunFailure, rerunError.
	x := string(b)
	if i, j, k := strings.Index(x, "<failure"), strings.Index(x, "<rerunFailure"), strings.Index(x, "<rerunError"); !(i < j && j < k) {
		t.Errorf("element order: %d %d %d", i, j, k)
	}
}
