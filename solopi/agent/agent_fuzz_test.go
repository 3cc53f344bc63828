package agent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// Device answers are outside input: the parsers must never panic, and what
// they accept must satisfy the invariants the host relies on.
func FuzzParseAgentObjects(f *testing.F) {
	f.Add([]byte(`{"success":true,"sessionId":"agent-session-1","state":"active","active":true,"terminal":false,"acceptedSteps":0,"leaseHeld":true}`))
	f.Add([]byte(`{"stepId":"s","status":"succeeded","action":{"type":"click","arguments":{"nodeId":"node-1"}},"settledObservation":{"observationId":"observation-1","treeSha256":"00","page":{"nodeId":"node-1","children":[{"nodeId":"node-2"}]}}}`))
	f.Add([]byte(`{"observationId":"observation-1","page":{"nodeBound":{"left":0,"top":0,"right":1,"bottom":1,"empty":false}},"screenshotError":"screen_capture_failed"}`))
	f.Add([]byte(`{"stepId":"s","status":"weird"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := parseAgentSession(b); err == nil {
			if s.State == "" || (s.SessionID != "" && !validAgentID(s.SessionID)) {
				t.Fatalf("accepted session %+v", s)
			}
			// Marshalling writes the device object back, not a rebuilt one.
			out, err := json.Marshal(s)
			var a, c any
			if err != nil || json.Unmarshal(out, &a) != nil || json.Unmarshal(b, &c) != nil || !reflect.DeepEqual(a, c) {
				t.Fatalf("session does not round-trip: %v", err)
			}
		}
		if o, err := ParseObservation(b); err == nil {
			if !validAgentID(o.ObservationID) {
				t.Fatalf("accepted observation id %q", o.ObservationID)
			}
			if o.Page != nil {
				o.Page.Walk(func(*UINode) bool { return true })
				_, _ = ResolveSelector(o, Selector{Text: "x"})
			}
		}
		if r, err := parseAgentReceipt(b); err == nil {
			switch r.Status {
			case receiptAccepted, ReceiptRejected, receiptFailed:
			case receiptSucceeded:
				if r.SettledObservation == nil {
					t.Fatal("succeeded receipt without settled observation")
				}
			default:
				t.Fatalf("accepted status %q", r.Status)
			}
		}
	})
}

func FuzzParseTimelineJSONL(f *testing.F) {
	f.Add([]byte("{\"sequence\":1,\"type\":\"session_started\",\"sessionId\":\"s\"}\n{\"sequence\":2,\"type\":\"session_terminal\"}\n{\"sequence\":3,\"type\":\"lease_released\"}\n"))
	f.Add([]byte("{\"sequence\":5,\"type\":\"x\"}\n{\"sequence\":2,\"type\":\"y\"}"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := parseTimelineJSONL(bytes.NewReader(b))
		if err != nil {
			return
		}
		c := checkTimeline(evs, "s")
		if c.EventCount != len(evs) || (c.Complete && (!c.SequenceContiguous || c.TerminalEvents != 1 || c.LeaseReleased != 1)) {
			t.Fatalf("inconsistent check %+v", c)
		}
		missing := int64(0)
		for _, g := range c.Gaps {
			missing += g.Missing
		}
		if c.OutOfOrder == 0 && len(evs) > 0 && missing != c.LastSequence-c.FirstSequence+1-int64(len(evs)) {
			t.Fatalf("gaps %+v do not account for the sequence span", c)
		}
		if c.SequenceContiguous && (len(c.Gaps) != 0 || c.OutOfOrder != 0) {
			t.Fatalf("contiguous with gaps %+v", c)
		}
	})
}
