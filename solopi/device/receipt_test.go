package device

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
)

// The one rule of a receipt answer, on every shape the device sends: the
// four not-found codes, our receipt in any state, another request's
// receipt, and a refusal of the query.
func TestReceiptRule(t *testing.T) {
	t.Parallel()
	lost := errors.New("lost")
	req := ReceiptQuery{ID: "r1", ForeignCode: "receipt_mismatch"}
	step := ReceiptQuery{Key: "stepId", ID: "s1", In: "receipt"}
	for _, c := range []struct {
		name   string
		q      ReceiptQuery
		answer string
		found  bool
		code   string // "" no error
	}{
		{"case slot empty", req, `{"success":false,"errorCode":"import_receipt_not_found","error":"x","requestId":"r1"}`, false, ""},
		{"adb not found reads failed", req, `{"success":false,"state":"failed","terminal":true,"errorCode":"adb_connect_receipt_not_found","requestId":"r1"}`, false, ""},
		{"video not found, no echo", req, `{"success":false,"errorCode":"analysis_not_found","error":"x"}`, false, ""},
		{"mutation not found", req, `{"success":false,"errorCode":"receipt_not_found","error":"x","requestId":"r1"}`, false, ""},
		{"not found echoing another id", req, `{"success":false,"errorCode":"import_receipt_not_found","requestId":"r2"}`, false, "receipt_mismatch"},
		{"ours, pending", req, `{"success":true,"requestId":"r1","state":"in_progress"}`, true, ""},
		{"ours, a stored failure", req, `{"success":false,"errorCode":"analysis_busy","error":"x","requestId":"r1"}`, true, ""},
		{"another request's", req, `{"success":true,"requestId":"r2","state":"completed"}`, false, "receipt_mismatch"},
		{"a prefix of ours", req, `{"success":true,"requestId":"r","state":"completed"}`, false, "receipt_mismatch"},
		{"no id at all", req, `{"success":true,"state":"completed"}`, false, "receipt_mismatch"},
		{"refused", req, `{"success":false,"errorCode":"invalid_request_id","error":"x"}`, false, "invalid_request_id"},
		{"session gone is no wait", step, `{"success":false,"errorCode":"session_not_found","error":"x"}`, false, "session_not_found"},
		{"agent receipt ours", step, `{"success":true,"receipt":{"stepId":"s1","status":"accepted"},"session":{}}`, true, ""},
		{"agent receipt of another step", step, `{"success":true,"receipt":{"stepId":"s0","status":"succeeded"}}`, false, fault.CodeProtocolContractViolation},
		{"agent receipt not there", step, `{"success":false,"errorCode":"receipt_not_found","error":"x"}`, false, ""},
	} {
		a, err := DecodeObject([]byte(c.answer))
		if err != nil {
			t.Fatal(err)
		}
		_, found, err := c.q.judge(a)
		if found != c.found || fault.CodeOf(err) != c.code || (c.code == "") != (err == nil) {
			t.Errorf("%s: found %v err %v, want found %v code %q", c.name, found, err, c.found, c.code)
		}
		if c.code == "receipt_mismatch" && fault.KindOf(err) != fault.Transport {
			t.Errorf("%s: a foreign receipt is a device fault (exit 4), got %v", c.name, fault.KindOf(err))
		}
	}
	q := req
	q.Lost = lost
	a, _ := DecodeObject([]byte(`{"success":false,"errorCode":"analysis_not_found","requestId":"r1"}`))
	if _, _, err := q.judge(a); !errors.Is(err, lost) {
		t.Errorf("a receipt seen before and gone: %v", err)
	}
}

// Through the simulator: the delete-receipt slot answers not-found until
// our mutation is stored, then our receipt (a refusal the device recorded
// under our requestId) is the answer.
func TestAwaitReceiptOnTheSimulator(t *testing.T) {
	t.Parallel()
	dev := sim.New(sim.Options{Serial: "sim-receipt", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	ctx := context.Background()
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	d := NewDevice(dev, DeviceOptions{})
	t.Cleanup(d.Close)
	id := NewRequestID()
	q := ReceiptQuery{Action: protocol.ActionHarness, ID: id,
		Params: P(protocol.ParamType, protocol.HarnessCaseDeleteStatus, protocol.ParamRequestID, id)}
	if _, found, err := ReadReceipt(ctx, d, q); found || err != nil {
		t.Fatalf("before the mutation: found %v, %v", found, err)
	}
	if err := d.Mutate(ctx, protocol.ActionHarness, P(protocol.ParamType, protocol.HarnessCaseDelete,
		protocol.ParamCaseName, "no-such-case", protocol.ParamConfirmCaseName, "no-such-case", protocol.ParamRequestID, id)); err != nil {
		t.Fatal(err)
	}
	polls := 0
	last, err := AwaitReceipt(ctx, d, q, PollOptions{Timeout: 10 * time.Second, Interval: 20 * time.Millisecond}, func(r Receipt) (bool, error) {
		polls++
		return true, nil
	})
	if err != nil || polls != 1 || last.Object.Str("requestId") != id || last.Object.Str("errorCode") != "case_not_found" {
		t.Fatalf("receipt %v after %d polls: %v", last.Answer, polls, err)
	}
	// Another request's id is never taken for ours: the slot answers
	// not-found for it, so a wait for it times out.
	other := NewRequestID()
	q.ID, q.Params = other, P(protocol.ParamType, protocol.HarnessCaseDeleteStatus, protocol.ParamRequestID, other)
	if _, err := AwaitReceipt(ctx, d, q, PollOptions{Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond}, func(Receipt) (bool, error) {
		return true, nil
	}); !errors.Is(err, ErrPollTimeout) {
		t.Fatalf("another request's receipt: %v", err)
	}
}
