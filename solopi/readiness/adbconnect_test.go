package readiness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

const testRequestID = "0f8fad5b-d9cb-469f-a165-70867728950e"

func fastAdbConnect() AdbConnectOptions {
	return AdbConnectOptions{ConnectTimeout: 2 * time.Second, ReadyTimeout: 500 * time.Millisecond,
		PollInterval: 10 * time.Millisecond, NewRequestID: func() string { return testRequestID }}
}

// adbMissing is a device where only the internal adb connection is missing.
func adbMissing() *fakeSoloPi {
	solo := newFakeSoloPi()
	h := readyHealth()
	h["permissions"].(map[string]any)["adb"] = false
	h["ready"] = false
	solo.health = h
	return solo
}

func receipt(id, state string) map[string]any {
	r := map[string]any{"success": state != "failed", "requestId": id, "state": state,
		"connected": state == "connected", "terminal": state != "connecting", "userActionRequired": false, "startedAt": 1000}
	if state != "connecting" {
		r["finishedAt"] = 2000
	}
	return r
}

func adbMutations(solo *fakeSoloPi) int {
	n := 0
	solo.with(func(f *fakeSoloPi) {
		for _, m := range f.mutates {
			if strings.Contains(m, "type=adb-connect") {
				n++
			}
		}
	})
	return n
}

func TestAdbConnectAlreadyConnected(t *testing.T) {
	solo := newFakeSoloPi()
	s := openTestSession(t, newSoloTransport(t, solo))
	res, err := AdbConnect(context.Background(), s, fastAdbConnect())
	if err != nil {
		t.Fatal(err)
	}
	if !res.AlreadyConnected || !res.Connected || res.Doctor == nil || !res.Doctor.Ready {
		t.Fatalf("%+v", res)
	}
	if adbMutations(solo) != 0 {
		t.Fatal("a ready device must not be mutated")
	}
}

func TestAdbConnectRefusedWhenSomethingElseMissing(t *testing.T) {
	for name, edit := range map[string]func(h map[string]any){
		"float too":       func(h map[string]any) { h["permissions"].(map[string]any)["float"] = false },
		"autoStart":       func(h map[string]any) { h["autoStart"] = false },
		"not initialised": func(h map[string]any) { h["appInitialized"] = false },
		"adb present, accessibility missing": func(h map[string]any) {
			h["permissions"].(map[string]any)["adb"] = true
			h["permissions"].(map[string]any)["accessibility"] = false
		},
	} {
		t.Run(name, func(t *testing.T) {
			solo := adbMissing()
			edit(solo.health)
			s := openTestSession(t, newSoloTransport(t, solo))
			_, err := AdbConnect(context.Background(), s, fastAdbConnect())
			e := wantCode(t, err, CodeAdbConnectPrecondition, fault.Failed)
			if e.Details["doctor"] == nil || e.UserAction == "" || strings.Contains(e.UserAction, "solopi adb-connect") {
				t.Errorf("details %v action %q", e.Details, e.UserAction)
			}
			if adbMutations(solo) != 0 {
				t.Fatal("refused adb-connect must not mutate")
			}
		})
	}
}

func TestAdbConnectConnectingToConnected(t *testing.T) {
	solo := adbMissing()
	polls := 0
	solo.onAdbConnect = func(f *fakeSoloPi, id string) {}
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any {
		polls++
		switch {
		case polls == 1: // not stored yet
			return map[string]any{"success": false, "state": "failed", "terminal": true, "connected": false,
				"userActionRequired": false, "errorCode": "adb_connect_receipt_not_found", "error": "none", "requestId": id}
		case polls < 4:
			return receipt(id, "connecting")
		}
		f.health = readyHealth()
		return receipt(id, "connected")
	}
	ft := newSoloTransport(t, solo)
	s := openTestSession(t, ft)
	res, err := AdbConnect(context.Background(), s, fastAdbConnect())
	if err != nil {
		t.Fatal(err)
	}
	if res.AlreadyConnected || !res.Connected || res.RequestID != testRequestID || res.Doctor == nil || !res.Doctor.Ready {
		t.Fatalf("%+v", res)
	}
	if adbMutations(solo) != 1 {
		t.Fatalf("mutations %d", adbMutations(solo))
	}
	var mut string
	solo.with(func(f *fakeSoloPi) { mut = f.mutates[0] })
	if mut != "solopi://startaction/harness?type=adb-connect&requestId="+testRequestID {
		t.Fatalf("mutation %s", mut)
	}
	// Nothing but the one mutation and queries: no RSA tap, no address
	// change, no adb tcpip.
	for _, c := range ft.shellCalls() {
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
	solo := adbMissing()
	const hint = "请确认 SoloPi 配置的内部 ADB 地址可连接，并在设备上确认 RSA 授权弹窗"
	solo.onAdbConnect = func(f *fakeSoloPi, id string) { f.adbReceipts[id] = receipt(id, "connecting") }
	polls := 0
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any {
		polls++
		if polls < 3 {
			return f.adbReceipts[id]
		}
		r := receipt(id, "failed")
		r["userActionRequired"] = true
		r["requiredUserAction"] = hint
		r["errorCode"] = "adb_connection_failed"
		r["error"] = "SoloPi internal ADB connection failed"
		return r
	}
	s := openTestSession(t, newSoloTransport(t, solo))
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, "adb_connection_failed", fault.Failed)
	if e.UserAction != hint || e.Details["requestId"] != testRequestID {
		t.Fatalf("action %q details %v", e.UserAction, e.Details)
	}
}

func TestAdbConnectForeignReceiptNeverAccepted(t *testing.T) {
	solo := adbMissing()
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any {
		f.health = readyHealth() // even though the device looks ready now
		return receipt("another-request", "connected")
	}
	s := openTestSession(t, newSoloTransport(t, solo))
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, CodeAdbConnectReceiptForeign, fault.Transport)
	if e.Details["receiptRequestId"] != "another-request" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectInconsistentReceipts(t *testing.T) {
	bad := map[string]func(r map[string]any){
		"success on failed":          func(r map[string]any) { r["state"] = "failed"; r["terminal"] = true; r["connected"] = false },
		"connected while connecting": func(r map[string]any) { r["state"] = "connecting"; r["terminal"] = false },
		"terminal connecting":        func(r map[string]any) { r["state"] = "connecting"; r["connected"] = false },
		"action flag without text":   func(r map[string]any) { r["userActionRequired"] = true },
		"text without action flag":   func(r map[string]any) { r["requiredUserAction"] = "do it" },
		"unknown state":              func(r map[string]any) { r["state"] = "paused" },
		"non-boolean success":        func(r map[string]any) { r["success"] = "true" },
		"failed without errorCode": func(r map[string]any) {
			r["state"], r["success"], r["connected"] = "failed", false, false
		},
	}
	for name, edit := range bad {
		t.Run(name, func(t *testing.T) {
			solo := adbMissing()
			solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any {
				r := receipt(id, "connected")
				edit(r)
				return r
			}
			s := openTestSession(t, newSoloTransport(t, solo))
			_, err := AdbConnect(context.Background(), s, fastAdbConnect())
			wantCode(t, err, CodeAdbConnectProtocol, fault.Transport)
		})
	}
}

func TestAdbConnectDoctorNotReadyAfter(t *testing.T) {
	solo := adbMissing()
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any { return receipt(id, "connected") }
	s := openTestSession(t, newSoloTransport(t, solo))
	_, err := AdbConnect(context.Background(), s, fastAdbConnect())
	e := wantCode(t, err, CodeDoctorNotReadyAfter, fault.Failed)
	if e.Details["doctor"] == nil || e.Details["requestId"] != testRequestID {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectTimeout(t *testing.T) {
	solo := adbMissing()
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any { return receipt(id, "connecting") }
	s := openTestSession(t, newSoloTransport(t, solo))
	o := fastAdbConnect()
	o.ConnectTimeout = 150 * time.Millisecond
	_, err := AdbConnect(context.Background(), s, o)
	e := wantCode(t, err, CodeAdbConnectTimeout, fault.Timeout)
	if e.Details["requestId"] != testRequestID || e.Details["lastReceipt"] == nil || e.UserAction == "" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestAdbConnectInterrupted(t *testing.T) {
	solo := adbMissing()
	solo.adbStatusFn = func(f *fakeSoloPi, id string) map[string]any { return receipt(id, "connecting") }
	s := openTestSession(t, newSoloTransport(t, solo))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(80*time.Millisecond, cancel)
	_, err := AdbConnect(ctx, s, fastAdbConnect())
	e := wantCode(t, err, device.CodeInterrupted, fault.Interrupted)
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
		rc, err := ParseAdbReceipt(o)
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
