package readiness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/solopi/device"
)

const testRequestID = "0f8fad5b-d9cb-469f-a165-70867728950e"

func fastAdbConnect() AdbConnectOptions {
	return AdbConnectOptions{ConnectTimeout: 2 * time.Second, ReadyTimeout: 500 * time.Millisecond,
		PollInterval: 10 * time.Millisecond, NewRequestID: func() string { return testRequestID }}
}

// adbMissing is a device where only the internal adb connection is
// missing; opts adjust it further.
func adbMissing(t *testing.T, opts ...func(*sim.Options)) *sim.Device {
	return answering(t, newSimDevice(t, append([]func(*sim.Options){denied("adb")}, opts...)...))
}

func receipt(id, state string) map[string]any {
	r := map[string]any{"success": state != "failed", "requestId": id, "state": state,
		"connected": state == "connected", "terminal": state != "connecting", "userActionRequired": false, "startedAt": 1000}
	if state != "connecting" {
		r["finishedAt"] = 2000
	}
	return r
}

func adbMutations(dev *sim.Device) int { return len(dev.MutationsWith("type=adb-connect")) }

// connectOutcome sets what SoloPi's internal adb connection attempts do.
func connectOutcome(dev *sim.Device, o core.AdbConnectOutcome, delay time.Duration) *sim.Device {
	dev.App.SetAdbConnectOutcome(o, delay)
	return dev
}

// statusFault edits the adb-connect receipts the device answers.
func statusFault(t *testing.T, dev *sim.Device, f sim.AnswerFault) {
	t.Helper()
	f.Action, f.Query = "harness", map[string]string{"type": "adb-connect-status"}
	answerFault(t, dev, f)
}

func TestAdbConnectAlreadyConnected(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	res, err := AdbConnect(context.Background(), s, fastAdbConnect())
	if err != nil {
		t.Fatal(err)
	}
	if !res.AlreadyConnected || !res.Connected || res.Doctor == nil || !res.Doctor.Ready {
		t.Fatalf("%+v", res)
	}
	if adbMutations(dev) != 0 {
		t.Fatal("a ready device must not be mutated")
	}
}

func TestAdbConnectRefusedWhenSomethingElseMissing(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(t *testing.T) *sim.Device{
		"float too": func(t *testing.T) *sim.Device { return adbMissing(t, denied("float")) },
		"autoStart": func(t *testing.T) *sim.Device { return adbMissing(t, setting("KEY_REPLAY_AUTO_START", "false")) },
		"not initialised": func(t *testing.T) *sim.Device {
			dev := adbMissing(t)
			dev.App.SetAppInitialized(false)
			return dev
		},
		"adb present, accessibility missing": func(t *testing.T) *sim.Device {
			return answering(t, newSimDevice(t, denied("accessibility")))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dev := mk(t)
			s := openTestSession(t, dev)
			_, err := AdbConnect(context.Background(), s, fastAdbConnect())
			e := wantCode(t, err, fault.CodeAdbConnectPreconditionFailed, fault.Failed)
			if e.Details["doctor"] == nil || e.UserAction == "" || strings.Contains(e.UserAction, "solopi adb-connect") {
				t.Errorf("details %v action %q", e.Details, e.UserAction)
			}
			if adbMutations(dev) != 0 {
				t.Fatal("refused adb-connect must not mutate")
			}
		})
	}
}

func TestAdbConnectConnectingToConnected(t *testing.T) {
	t.Parallel()
	dev := connectOutcome(adbMissing(t), core.AdbConnectSucceed, 2*time.Second)
	// The mutation reaches SoloPi late: the first polls find no receipt.
	if err := dev.AddMutationFault(sim.MutationFault{Action: "harness", Query: map[string]string{"type": "adb-connect"}, DelayMs: 2000}); err != nil {
		t.Fatal(err)
	}
	s := openTestSession(t, dev)
	res, err := AdbConnect(context.Background(), s, fastAdbConnect())
	if err != nil {
		t.Fatal(err)
	}
	if res.AlreadyConnected || !res.Connected || res.RequestID != testRequestID || res.Doctor == nil || !res.Doctor.Ready {
		t.Fatalf("%+v", res)
	}
	if adbMutations(dev) != 1 {
		t.Fatalf("mutations %d", adbMutations(dev))
	}
	if mut := dev.Mutations()[0]; mut != "solopi://startaction/harness?type=adb-connect&requestId="+testRequestID {
		t.Fatalf("mutation %s", mut)
	}
	// Nothing but the one mutation and queries: no RSA tap, no address
	// change, no adb tcpip.
	for _, c := range dev.Commands() {
		if strings.Contains(c, "input ") || strings.Contains(c, "tcpip") || strings.Contains(c, "KEY_ADB_SERVER") {
			t.Errorf("adb-connect ran %q", c)
		}
	}
	b, _ := json.Marshal(res)
	for _, k := range []string{`"alreadyConnected":false`, `"state":"connected"`, `"doctor":{`, `"requestId":"` + testRequestID} {
		if !strings.Contains(string(b), k) {
			t.Errorf("output lacks %s: %s", k, b)
		}
	}
}

func TestAdbConnectFailedCarriesUserAction(t *testing.T) {
	t.Parallel()
	dev := connectOutcome(adbMissing(t), core.AdbConnectFail, 2*time.Second)
	const hint = "请确认 SoloPi 配置的内部 ADB 地址可连接，并在设备上确认 RSA 授权弹窗"
	s := openTestSession(t, dev)
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, "adb_connection_failed", fault.Failed)
	if e.UserAction != hint || e.Details["requestId"] != testRequestID {
		t.Fatalf("action %q details %v", e.UserAction, e.Details)
	}
}

func TestAdbConnectForeignReceiptNeverAccepted(t *testing.T) {
	t.Parallel()
	// The device becomes ready, but the receipt names another request.
	dev := adbMissing(t)
	statusFault(t, dev, sim.AnswerFault{Set: map[string]any{"requestId": "another-request"}})
	s := openTestSession(t, dev)
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, fault.CodeAdbConnectReceiptMismatch, fault.Transport)
	if e.Details["receiptRequestId"] != "another-request" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectInconsistentReceipts(t *testing.T) {
	t.Parallel()
	bad := map[string]sim.AnswerFault{
		"success on failed":          {Set: map[string]any{"state": "failed", "terminal": true, "connected": false}},
		"connected while connecting": {Set: map[string]any{"state": "connecting", "terminal": false}},
		"terminal connecting":        {Set: map[string]any{"state": "connecting", "connected": false}},
		"action flag without text":   {Set: map[string]any{"userActionRequired": true}},
		"text without action flag":   {Set: map[string]any{"requiredUserAction": "do it"}},
		"unknown state":              {Set: map[string]any{"state": "paused"}},
		"non-boolean success":        {Set: map[string]any{"success": "true"}},
		"failed without errorCode":   {Set: map[string]any{"state": "failed", "success": false, "connected": false}},
	}
	for name, f := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dev := adbMissing(t)
			f.When = map[string]any{"state": "connected"}
			statusFault(t, dev, f)
			s := openTestSession(t, dev)
			_, err := AdbConnect(context.Background(), s, fastAdbConnect())
			wantCode(t, err, fault.CodeAdbConnectReceiptInvalid, fault.Transport)
		})
	}
}

func TestAdbConnectDoctorNotReadyAfter(t *testing.T) {
	t.Parallel()
	// The receipt says connected, the health still misses adb.
	dev := adbMissing(t)
	answerFault(t, dev, sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "health"},
		Set: map[string]any{"permissions/adb": false, "ready": false}})
	s := openTestSession(t, dev)
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, fault.CodeDoctorNotReadyAfterAdbConnect, fault.Failed)
	if e.Details["doctor"] == nil || e.Details["requestId"] != testRequestID {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectTimeout(t *testing.T) {
	t.Parallel()
	dev := connectOutcome(adbMissing(t), core.AdbConnectHang, 0)
	s := openTestSession(t, dev)
	o := fastAdbConnect()
	o.ConnectTimeout = time.Second // long enough to have polled a receipt
	_, err := AdbConnect(context.Background(), s, o)
	e := wantCode(t, err, fault.CodeAdbConnectTimeout, fault.Timeout)
	if e.Details["requestId"] != testRequestID || e.Details["lastReceipt"] == nil || e.UserAction == "" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectInterrupted(t *testing.T) {
	t.Parallel()
	dev := connectOutcome(adbMissing(t), core.AdbConnectHang, 0)
	s := openTestSession(t, dev)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(80*time.Millisecond, cancel)
	_, err := AdbConnect(ctx, s, fastAdbConnect())
	e := wantCode(t, err, fault.CodeInterrupted, fault.Interrupted)
	if e.Details["requestId"] != testRequestID {
		t.Fatalf("details %v", e.Details)
	}
}

// FuzzParseAdbReceipt: an accepted receipt always obeys the consistency
// rules of the device protocol (docs/device-protocol.md).
func FuzzParseAdbReceipt(f *testing.F) {
	for _, st := range []string{"connecting", "connected", "failed"} {
		b, _ := json.Marshal(receipt("r1", st))
		f.Add(string(b))
	}
	f.Add(`{"success":false,"requestId":"r","state":"failed","connected":false,"terminal":true,"userActionRequired":true,"requiredUserAction":"x","errorCode":"e","error":"m"}`)
	f.Fuzz(func(t *testing.T, body string) {
		o, err := device.DecodeObject([]byte(body))
		if err != nil {
			return
		}
		rc, err := parseAdbReceipt(o)
		if err != nil {
			return
		}
		ok := rc.Success == (rc.State != "failed") && rc.Connected == (rc.State == "connected") &&
			rc.Terminal == (rc.State != "connecting") && rc.UserActionRequired == (rc.RequiredUserAction != "") &&
			(rc.State != "failed" || (rc.ErrorCode != "" && rc.Error != ""))
		if !ok {
			t.Fatalf("accepted inconsistent receipt %+v from %s", rc, body)
		}
	})
}
