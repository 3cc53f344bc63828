package replay

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/video"
)

// Every host field of the run's object that can quote the device (a
// cancel's error, an evidence error or skipped file, the recording's and
// the performance session's faults), beside the echoed status and the
// failure's fields, prints the case's secret redacted: a typed field is
// not walked by the redactor, so each must be redacted where it is built.
func TestRunResultRedactsTypedFields(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-4711"
	quote := "the device said " + secret
	rs := &runState{
		rep: &RunReport{CaseName: "c", RequestID: "r", RunID: "1",
			Status:    &replayStatus{Object: map[string]any{"state": "failed", "error": quote}, State: "failed", Terminal: true, Error: quote},
			Redaction: &redaction{Basis: redactionImportRecord, Values: 1, r: redact.New(secret)},
			Artifacts: &RunArtifacts{Dir: "/tmp/x", Errors: []string{quote},
				Skipped: []artifacts.SkippedFile{{Source: "/sdcard/solopi/a.log", Reason: quote}}}},
		cancelInfo: &cancelReport{Attempted: true, Reason: "mutation_failed", Error: quote},
		video:      &video.Result{Mode: video.ModeAlways, Error: quote},
		perf:       &perfRun{items: []string{"CPU"}, target: "-", errs: []string{quote}},
		autoStart:  &autoStartChange{},
	}
	rs.rep.Steps = []Step{}
	e := fault.New(fault.Failed, fault.CodeReplayFailed, quote).With("activeRun", map[string]any{"error": quote})
	r := rs.result(e)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(secret)) {
		t.Fatalf("the run's object holds the secret: %s", b)
	}
	if n := bytes.Count(b, []byte(redact.Marker)); n != 7 {
		t.Fatalf("%d redactions, want every quote redacted: %s", n, b)
	}
	if r.Message() != "the device said "+redact.Marker {
		t.Fatalf("message %q", r.Message())
	}
	// The keys a map printed: sorted, the echoed ones among the host's,
	// an empty timeline as [] (not dropped).
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(b))
	_, _ = dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	want := []string{"activeRun", "artifacts", "autoStart", "cancel", "caseName", "confirmedHighRiskSteps", "error", "errorCode",
		"perf", "redaction", "requestId", "runId", "state", "steps", "success", "video"}
	if len(keys) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("keys %v, want %v", keys, want)
		}
	}
	if !bytes.Contains(b, []byte(`"steps":[]`)) || !bytes.Contains(b, []byte(`"success":false`)) {
		t.Fatalf("output %s", b)
	}
}
