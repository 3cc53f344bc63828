package sessions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

func recordStart(f *simPhone) (*StartResult, error) {
	return StartRecording(context.Background(), f.device(), RecordStartOptions{CaseName: "login flow", TargetPackage: "com.example.counter", SessionTimings: ssFast})
}

func TestRecordStartStatusStop(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(recordStart(f))
	m := ssExpect(t, "record-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "recording" || m["success"] != true || len(id) != 36 {
		t.Fatalf("start = %v", m)
	}
	if f.mutationCount("recordMode=normal", "sessionId="+id, "caseName=login+flow", "targetApp=com.example.counter") != 1 {
		t.Fatalf("start mutation not sent exactly once with our id: %v", f.dev.Mutations())
	}
	res, err = ssOut(RecordingStatus(context.Background(), f.device(), id))
	ssExpect(t, "record-status", res, err, passed)

	// Another sessionId never reads as ours: exit 2 with the latest snapshot.
	res, err = ssOut(RecordingStatus(context.Background(), f.device(), "someone-else"))
	m = ssExpect(t, "record-status", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionMismatch)
	if latest, _ := m["latestRecording"].(map[string]any); latest["sessionId"] != id {
		t.Fatalf("mismatch lacks the latest snapshot: %v", m)
	}
	// ... and is never stopped.
	res, err = ssOut(StopRecording(context.Background(), f.device(), "someone-else", ssFast))
	ssExpect(t, "record-stop", res, err, fault.Failed)
	if f.mutationCount("recordMode=stop") != 0 {
		t.Fatalf("a stop was sent for a session we do not own")
	}

	res, err = ssOut(StopRecording(context.Background(), f.device(), id, ssFast))
	m = ssExpect(t, "record-stop", res, err, passed)
	if m["state"] != "stopped" || m["caseId"] == nil || m["cancelledBeforeStart"] != false {
		t.Fatalf("stop = %v", m)
	}
	// Stopping again is a no-op on a terminal session.
	res, err = ssOut(StopRecording(context.Background(), f.device(), id, ssFast))
	m = ssExpect(t, "record-stop", res, err, passed)
	if m["alreadyTerminal"] != true || f.mutationCount("recordMode=stop") != 1 {
		t.Fatalf("second stop sent a mutation or lost alreadyTerminal: %v", m)
	}
}

func TestRecordStartFailedIsExit2(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	// The floating window permission is gone: preparing the recording fails.
	if err := f.dev.App.SetPermission("float", false); err != nil {
		t.Fatal(err)
	}
	res, err := ssOut(recordStart(f))
	m := ssExpect(t, "record-start", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionFailed)
	if m["state"] != "failed" || !strings.Contains(m["error"].(string), "Permission denied: float") {
		t.Fatalf("failed start = %v", m)
	}
}

func TestRecordStartTimeoutStopsExactlyOurSession(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.slowStarts()
	res, err := ssOut(StartRecording(context.Background(), f.device(), RecordStartOptions{CaseName: "c", TargetPackage: "com.example.counter",
		SessionTimings: SessionTimings{Timeout: 100 * time.Millisecond, Interval: 5 * time.Millisecond}}))
	m := ssExpect(t, "record-start", res, err, fault.Timeout)
	id := m["sessionId"].(string)
	cl := m["cleanup"].(map[string]any)
	if m["phase"] != "record-start" || cl["attempted"] != true || cl["success"] != true || cl["terminalState"] != "stopped" || cl["cancelledBeforeStart"] != true {
		t.Fatalf("timeout output = %v", m)
	}
	if f.mutationCount("recordMode=stop", "sessionId="+id) != 1 {
		t.Fatalf("the cleanup stop did not name our session: %v", f.dev.Mutations())
	}
}

// A cleanup that cannot read the device any more says why instead of
// claiming the session stopped.
func TestRecordStartTimeoutCleanupOnAnUnreadableDevice(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.slowStarts()
	// Once the cleanup stop arrives, the record resolver is gone (SoloPi
	// answers NanoHTTPD's fallback).
	t.Cleanup(f.dev.OnMutation(func(uri string) {
		if strings.Contains(uri, "recordMode=stop") {
			if err := f.dev.AddAnswerFault(sim.AnswerFault{Action: "record", HTML: true}); err != nil {
				t.Error(err)
			}
		}
	}))
	res, err := ssOut(StartRecording(context.Background(), f.device(), RecordStartOptions{CaseName: "c", TargetPackage: "com.example.counter",
		SessionTimings: SessionTimings{Timeout: 100 * time.Millisecond, Interval: 5 * time.Millisecond}}))
	m := ssExpect(t, "record-start", res, err, fault.Timeout)
	cl := m["cleanup"].(map[string]any)
	if cl["attempted"] != true || cl["success"] != false || cl["error"] == nil || cl["terminalState"] != nil {
		t.Fatalf("cleanup = %v", cl)
	}
}

func TestRecordStartInterruptStopsOurSession(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.slowStarts()
	ctx := f.cancelOn("recordMode=normal")
	res, err := ssOut(StartRecording(ctx, f.device(), RecordStartOptions{CaseName: "c", TargetPackage: "com.example.counter", SessionTimings: ssFast}))
	m := ssExpect(t, "record-start", res, err, fault.Interrupted)
	if cl := m["cleanup"].(map[string]any); cl["success"] != true || m["sessionId"] == "" {
		t.Fatalf("interrupt output = %v", m)
	}
	if st := f.state("record", "recordMode", "status"); st != "stopped" {
		t.Fatalf("the recording was left %v", st)
	}
}

func TestRecordStartRefusedWhileActiveAndWhenReplaced(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.slowStarts()
	f.otherClient("record", "recordMode", "normal", "sessionId", "other-client", "caseName", "x", "targetApp", "com.example.counter")
	before := len(f.dev.Mutations())
	res, err := ssOut(recordStart(f))
	m := ssExpect(t, "record-start", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionActive)
	if len(f.dev.Mutations()) != before {
		t.Fatalf("a mutation was sent while another recording was active")
	}

	// Another client's start reaches SoloPi just before ours.
	g := newSimPhone(t)
	g.slowStarts()
	g.otherClientFirst("recordMode=normal", "solopi://startaction/record?recordMode=normal&sessionId=another-client&caseName=x&targetApp=com.example.counter")
	res, err = ssOut(recordStart(g))
	m = ssExpect(t, "record-start", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionReplaced)
	if g.mutationCount("recordMode=stop") != 0 {
		t.Fatalf("the other client's session was stopped")
	}
}

func TestRecordStopWhileStartingIsCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.slowStarts()
	f.otherClient("record", "recordMode", "normal", "sessionId", "mine", "caseName", "x", "targetApp", "com.example.counter")
	res, err := ssOut(StopRecording(context.Background(), f.device(), "mine", ssFast))
	m := ssExpect(t, "record-stop", res, err, passed)
	if m["cancelledBeforeStart"] != true || m["caseId"] != nil || m["startedAt"] != nil {
		t.Fatalf("stop while starting = %v", m)
	}
}

func TestRecordValidator(t *testing.T) {
	t.Parallel()
	ssValidatorCases(t, validateRecording, []ssCase{
		{"idle", `{"success":true,"kind":"recording","state":"idle","recording":false,"active":false,"terminal":false}`, true},
		{"idle with id", `{"success":true,"kind":"recording","state":"idle","recording":false,"active":false,"terminal":false,"sessionId":"x"}`, false},
		{"unknown state", `{"success":true,"kind":"recording","state":"paused","recording":false,"active":true,"terminal":false}`, false},
		{"active flag wrong", `{"success":true,"kind":"recording","state":"starting","recording":false,"active":false,"terminal":false,"sessionId":"a","caseName":"c","targetPackage":"p"}`, false},
		{"recording without startedAt", `{"success":true,"kind":"recording","state":"recording","recording":true,"active":true,"terminal":false,"sessionId":"a","caseName":"c","targetPackage":"p"}`, false},
		{"stopped ok", `{"success":true,"kind":"recording","state":"stopped","recording":false,"active":false,"terminal":true,"sessionId":"a","caseName":"c","targetPackage":"p","caseId":3,"startedAt":1,"finishedAt":5,"durationMs":4}`, true},
		{"stopped without caseId", `{"success":true,"kind":"recording","state":"stopped","recording":false,"active":false,"terminal":true,"sessionId":"a","caseName":"c","targetPackage":"p","startedAt":1,"finishedAt":5,"durationMs":4}`, false},
		{"cancelled with caseId", `{"success":true,"kind":"recording","state":"stopped","recording":false,"active":false,"terminal":true,"sessionId":"a","caseName":"c","targetPackage":"p","caseId":3,"finishedAt":5,"cancelledBeforeStart":true}`, false},
		{"failed without error", `{"success":true,"kind":"recording","state":"failed","recording":false,"active":false,"terminal":true,"sessionId":"a","caseName":"c","targetPackage":"p","finishedAt":5}`, false},
		{"terminal without finishedAt", `{"success":true,"kind":"recording","state":"failed","recording":false,"active":false,"terminal":true,"sessionId":"a","caseName":"c","targetPackage":"p","error":"x"}`, false},
		{"durationMs without startedAt", `{"success":true,"kind":"recording","state":"starting","recording":false,"active":true,"terminal":false,"sessionId":"a","caseName":"c","targetPackage":"p","durationMs":3}`, false},
	})
}

// An app outside SoloPi's list is refused at once: the device would refuse
// it invisibly and the host would only time out.
func TestRecordStartRefusesUnknownTargetApp(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(StartRecording(context.Background(), f.device(), RecordStartOptions{CaseName: "x", TargetPackage: "com.example.missing", SessionTimings: ssFast}))
	m := ssExpect(t, "record-start", res, err, fault.Failed)
	ssWantCode(t, m, "target_app_not_found")
	if len(f.dev.Mutations()) != 0 {
		t.Fatalf("a mutation was sent for an unknown target app")
	}
}
