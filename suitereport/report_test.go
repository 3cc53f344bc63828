package suitereport

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

func TestCaseVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []Verdict
		want Verdict
	}{
		{nil, Skipped},
		{[]Verdict{Cancelled}, Skipped},
		{[]Verdict{Passed}, Passed},
		{[]Verdict{Error, Error, Passed}, Passed},
		{[]Verdict{Failed, Passed}, Flaky},
		{[]Verdict{Failed, Error, Passed}, Flaky},
		{[]Verdict{Failed, Failed}, Failed},
		{[]Verdict{Failed, Cancelled}, Failed},
		{[]Verdict{Error, Failed}, Failed},
		{[]Verdict{Error, Error, Error}, Error},
		{[]Verdict{Error, Cancelled}, Error},
	} {
		if got := CaseVerdict(tc.in); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, v := range []Verdict{Passed, Failed, Error, Cancelled} {
		if !v.ValidAttempt() {
			t.Errorf("%s is an attempt verdict", v)
		}
	}
	for _, v := range []Verdict{Flaky, Skipped, "weird"} {
		if v.ValidAttempt() {
			t.Errorf("%s is not an attempt verdict", v)
		}
	}
}

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func attempt(n int, dev string, v Verdict, ms int64) Attempt {
	a := Attempt{Number: n, Device: dev, Verdict: v, StartedAt: t0, FinishedAt: t0.Add(time.Duration(ms) * time.Millisecond), DurationMs: ms,
		RunID: "run-" + dev, EvidenceDir: "/e/" + dev}
	switch v {
	case Failed:
		step := int64(0)
		a.ErrorCode, a.Error, a.ExceptionStep, a.ExceptionStepID = "replay_failed", "injected failure", &step, "s1"
		a.Attachments = []string{"/e/" + dev + "/screen.png", "/e/" + dev + "/logcat.txt"}
	case Error:
		a.ErrorCode, a.Error = "run_lost", "our run vanished"
	}
	return a
}

// sample is a suite on two phones: a pass, a flaky case (failed on one
// phone, passed on the other), a failure, an infrastructure error and an
// unreached case.
func sample() *Report {
	r := &Report{BatchID: "b1", Name: "regression", StartedAt: t0, Options: Options{Retries: 1, InfraRetries: 2},
		Devices: []Device{
			{Serial: "sim-0001", Model: "Pixel 7", AndroidVersion: "14", Usable: true, Timeline: []Slot{{Case: "ok", Attempt: 1, Verdict: Passed, StartedAt: t0}}},
			{Serial: "sim-0002", Model: "Pixel 8", AndroidVersion: "15", Usable: true, Retired: &Problem{"device_offline", "the phone dropped"}},
			{Serial: "sim-0003", LeftOut: &Problem{"device_not_ready", "accessibility is off"}},
		},
		Cases: []Case{
			{Name: "ok", Attempts: []Attempt{attempt(1, "sim-0001", Error, 100), attempt(2, "sim-0001", Passed, 1500)}},
			{Name: "flaky", Attempts: []Attempt{attempt(1, "sim-0002", Failed, 2000), attempt(2, "sim-0001", Passed, 1000)}},
			{Name: "broken", Attempts: []Attempt{attempt(1, "sim-0001", Failed, 700), attempt(2, "sim-0002", Failed, 800)}},
			{Name: "gone", Attempts: []Attempt{attempt(1, "sim-0002", Error, 10), attempt(2, "sim-0002", Error, 10), attempt(3, "sim-0001", Error, 10)}},
			{Name: "later"},
		}}
	r.Finish(t0.Add(time.Minute))
	return r
}

func TestFinishCountsNeverHideAFailure(t *testing.T) {
	t.Parallel()
	r := sample()
	want := Counts{Cases: 5, Passed: 1, Flaky: 1, Failed: 1, Error: 1, Skipped: 1, Attempts: 9}
	if r.Counts != want {
		t.Fatalf("counts %+v, want %+v", r.Counts, want)
	}
	verdicts := map[string]Verdict{}
	for _, c := range r.Cases {
		verdicts[c.Name] = c.Verdict
	}
	if verdicts["flaky"] != Flaky || verdicts["ok"] != Passed || verdicts["gone"] != Error || verdicts["later"] != Skipped {
		t.Fatalf("verdicts %v", verdicts)
	}
	// A case the runner judged error with no attempt stays error.
	e := &Report{Cases: []Case{{Name: "nowhere", Verdict: Error, Reason: &Problem{"case_not_found", "no phone holds it"}}}}
	e.Finish(t0)
	if e.Cases[0].Verdict != Error || e.Cases[0].Reason == nil || e.Counts.Error != 1 {
		t.Fatalf("unrunnable case: %+v", e.Cases[0])
	}
}

// The exit decision: 130 interrupted, 2 a failure (or flaky with
// FailOnFlaky), 4 infrastructure, 0 all passed or flaky.
func TestFailureExitCodes(t *testing.T) {
	t.Parallel()
	mk := func(edit func(*Report), cases ...[]Verdict) *Report {
		r := &Report{StartedAt: t0}
		for i, vs := range cases {
			c := Case{Name: string(rune('a' + i))}
			for j, v := range vs {
				c.Attempts = append(c.Attempts, Attempt{Number: j + 1, Verdict: v})
			}
			r.Cases = append(r.Cases, c)
		}
		if edit != nil {
			edit(r)
		}
		r.Finish(t0)
		return r
	}
	flakyOn := func(r *Report) { r.Options.FailOnFlaky = true }
	interrupted := func(r *Report) { r.Interrupted = true }
	for _, tc := range []struct {
		name string
		r    *Report
		exit int
		code string
	}{
		{"all passed", mk(nil, []Verdict{Passed}, []Verdict{Error, Passed}), 0, ""},
		{"flaky passes", mk(nil, []Verdict{Passed}, []Verdict{Failed, Passed}), 0, ""},
		{"flaky fails on request", mk(flakyOn, []Verdict{Passed}, []Verdict{Failed, Passed}), 2, fault.CodeBatchFlaky},
		{"a failure", mk(nil, []Verdict{Passed}, []Verdict{Failed, Failed}), 2, fault.CodeBatchFailed},
		{"a failure beside an error", mk(nil, []Verdict{Error, Error, Error}, []Verdict{Failed}), 2, fault.CodeBatchFailed},
		{"an error", mk(nil, []Verdict{Passed}, []Verdict{Error, Error, Error}), 4, fault.CodeBatchInfrastructureFailed},
		{"not reached", mk(nil, []Verdict{Passed}, nil), 4, fault.CodeBatchInfrastructureFailed},
		{"interrupted", mk(interrupted, []Verdict{Failed}, []Verdict{Cancelled}), 130, fault.CodeBatchInterrupted},
	} {
		f, code := tc.r.Failure(), ""
		if f != nil {
			code = f.Code
		}
		if got := outcome.ExitOf(f); got != tc.exit || code != tc.code {
			t.Errorf("%s: exit %d %q, want %d %q", tc.name, got, code, tc.exit, tc.code)
		}
	}
}

func TestJUnitPerPhone(t *testing.T) {
	t.Parallel()
	r := sample()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := r.WriteJUnit(path, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if doc.Name != "regression" || doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Fatalf("root %+v", doc)
	}
	suites := map[string]artifacts.XMLTestsuite{}
	for _, s := range doc.Suites {
		suites[s.Name] = s
		names := map[string]bool{}
		for _, c := range s.Cases {
			if names[c.Name] {
				t.Errorf("suite %s has %s twice", s.Name, c.Name)
			}
			names[c.Name] = true
		}
	}
	if len(suites) != 4 {
		t.Fatalf("suites %v", doc.Suites)
	}
	one := suites["sim-0001"]
	props := map[string]string{}
	for _, p := range one.Properties.Property {
		props[p.Name] = p.Value
	}
	if props["serial"] != "sim-0001" || props["model"] != "Pixel 7" || props["androidVersion"] != "14" {
		t.Errorf("properties %v", props)
	}
	cases := map[string]artifacts.XMLTestcase{}
	for _, c := range one.Cases {
		cases[c.Name] = c
	}
	// flaky: decided on sim-0001, no failure, the failed attempt as
	// flakyFailure with its evidence.
	fl := cases["flaky"]
	if fl.Failure != nil || fl.Error != nil || len(fl.FlakyFailures) != 1 || fl.Time != "3.000" {
		t.Fatalf("flaky %+v", fl)
	}
	if ff := fl.FlakyFailures[0]; ff.Message != "injected failure" || !strings.Contains(ff.StackTrace.Text, "device: sim-0002") ||
		!strings.Contains(ff.SystemOut.Text, "[[ATTACHMENT|/e/sim-0002/screen.png]]") {
		t.Errorf("flakyFailure %+v", ff)
	}
	if fl.SystemOut == nil || !strings.Contains(fl.SystemOut.Text, "[[ATTACHMENT|/e/sim-0002/logcat.txt]]") {
		t.Errorf("flaky testcase attachments: %+v", fl.SystemOut)
	}
	// ok: an infrastructure error then a pass is passed, the error told.
	if ok := cases["ok"]; ok.Failure != nil || ok.Error != nil || len(ok.FlakyFailures)+len(ok.FlakyErrors) != 0 ||
		ok.SystemOut == nil || !strings.Contains(ok.SystemOut.Text, "infrastructure error") {
		t.Errorf("ok %+v", ok)
	}
	two := suites["sim-0002"]
	br := two.Cases[0]
	if br.Name != "broken" || br.Failure == nil || !strings.Contains(br.Failure.Text, "device: sim-0001") || len(br.RerunFailures) != 1 {
		t.Fatalf("broken %+v", br)
	}
	gone := suites["sim-0001"].Cases[2]
	if gone.Name != "gone" || gone.Error == nil || gone.Error.Type != "run_lost" || len(gone.RerunErrors) != 2 {
		t.Fatalf("gone %+v", gone)
	}
	if s := suites[NotRunSuite]; len(s.Cases) != 1 || s.Cases[0].Skipped == nil {
		t.Fatalf("not-run %+v", s)
	}
	if left := suites["sim-0003"]; left.Tests != 0 || left.Properties == nil {
		t.Fatalf("left-out phone %+v", left)
	}
}

// The report's JSON form has a schema.
func TestReportMatchesItsSchema(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "suite-report", b)
}
