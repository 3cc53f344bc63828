package sessions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

func TestScanStartStates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, state string
		setup       func(f *simPhone)
	}{
		{"camera granted", "scanning", func(f *simPhone) {}},
		{"camera permission missing", "pending-camera-permission", func(f *simPhone) { f.dev.App.SetCameraPermission(false) }},
		{"a code read at once", "scanning", func(f *simPhone) { deliverWhenScanning(f) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newSimPhone(t)
			c.setup(f)
			res, err := ssOut(StartScan(context.Background(), f.device(), ssFast))
			m := ssExpect(t, "scan-start", res, err, passed)
			if m["state"] != c.state || m["userActionRequired"] != true || m["scanCompleted"] != false || m["contentExecuted"] != false {
				t.Fatalf("start = %v", m)
			}
		})
	}
}

// deliverWhenScanning makes the camera read a QR code right after the host
// saw the scan scanning.
func deliverWhenScanning(f *simPhone) {
	f.onState("scan", "scanning", func(device.WireObject) {
		go func() {
			if err := f.dev.App.DeliverScanResult("https://example.com/x", "QR_CODE"); err != nil {
				f.t.Errorf("scan result: %v", err)
			}
		}()
	})
}

func TestScanCompletedThenCancelIsExit2(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(StartScan(context.Background(), f.device(), ssFast))
	id := ssExpect(t, "scan-start", res, err, passed)["sessionId"].(string)
	if err := f.dev.App.DeliverScanResult("https://example.com/x", "QR_CODE"); err != nil {
		t.Fatal(err)
	}
	res, err = ssOut(ScanStatus(context.Background(), f.device(), id))
	m := ssExpect(t, "scan-status", res, err, passed)
	if m["state"] != "completed" || m["content"] != "https://example.com/x" || m["codeType"] != "QR CODE" {
		t.Fatalf("status = %v", m)
	}
	res, err = ssOut(CancelScan(context.Background(), f.device(), id, ssFast))
	m = ssExpect(t, "scan-cancel", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionNotStopped)
	if f.mutationCount("action=cancel") != 0 {
		t.Fatalf("a cancel was sent for a completed scan")
	}
}

func TestScanCancelAndRefusals(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(StartScan(context.Background(), f.device(), ssFast))
	id := ssExpect(t, "scan-start", res, err, passed)["sessionId"].(string)
	res, err = ssOut(CancelScan(context.Background(), f.device(), "not-mine", ssFast))
	ssWantCode(t, ssExpect(t, "scan-cancel", res, err, fault.Failed), fault.CodeSessionMismatch)
	res, err = ssOut(CancelScan(context.Background(), f.device(), id, ssFast))
	m := ssExpect(t, "scan-cancel", res, err, passed)
	if m["state"] != "cancelled" || f.mutationCount("action=cancel", "sessionId="+id) != 1 {
		t.Fatalf("cancel = %v", m)
	}
	// Cancelling an already cancelled scan is success without a mutation.
	res, err = ssOut(CancelScan(context.Background(), f.device(), id, ssFast))
	ssExpect(t, "scan-cancel", res, err, passed)
	if f.mutationCount("action=cancel") != 1 {
		t.Fatalf("a second cancel was sent")
	}

	g := newSimPhone(t)
	if err := g.dev.App.SetManualScanActive(true); err != nil {
		t.Fatal(err)
	}
	res, err = ssOut(StartScan(context.Background(), g.device(), ssFast))
	ssWantCode(t, ssExpect(t, "scan-start", res, err, fault.Failed), fault.CodeSessionActive)
	if len(g.dev.Mutations()) != 0 {
		t.Fatalf("a scan was started while the manual page owns the camera")
	}
}

func TestScanFailedAndTimeout(t *testing.T) {
	t.Parallel()
	// The camera cannot be opened.
	f := newSimPhone(t)
	f.dev.App.SetCameraInitError("Camera is in use by another app")
	res, err := ssOut(StartScan(context.Background(), f.device(), ssFast))
	m := ssExpect(t, "scan-start", res, err, fault.Failed)
	id := m["sessionId"].(string)
	if !strings.Contains(m["error"].(string), "Camera is in use") {
		t.Fatalf("failed scan = %v", m)
	}
	res, err = ssOut(ScanStatus(context.Background(), f.device(), id))
	ssWantCode(t, ssExpect(t, "scan-status", res, err, fault.Failed), fault.CodeSessionFailed)

	// The scan page never opens.
	g := newSimPhone(t)
	g.dev.App.SetScanAttachDelay(time.Hour)
	res, err = ssOut(StartScan(context.Background(), g.device(), SessionTimings{Timeout: 60 * time.Millisecond, Interval: 5 * time.Millisecond}))
	m = ssExpect(t, "scan-start", res, err, fault.Timeout)
	if cl := m["cleanup"].(map[string]any); cl["terminalState"] != "cancelled" || g.mutationCount("action=cancel", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("timeout cleanup = %v", m)
	}
}

func TestScanValidator(t *testing.T) {
	t.Parallel()
	idle := `"success":true,"kind":"scan","active":false,"terminal":false,"scanning":false,"userActionRequired":false,"manualScanActive":false,"protocolActivityAttached":false,"contentExecuted":false`
	done := `"success":true,"kind":"scan","sessionId":"s1","state":"completed","active":false,"terminal":true,"scanning":false,"userActionRequired":false,"manualScanActive":false,"protocolActivityAttached":false,"requestedAt":1,"startedAt":2,"finishedAt":5,"durationMs":3`
	ssValidatorCases(t, validateScan, []ssCase{
		{"idle", `{` + idle + `,"state":"idle"}`, true},
		{"executed", `{` + strings.Replace(idle, `"contentExecuted":false`, `"contentExecuted":true`, 1) + `,"state":"idle"}`, false},
		{"completed", `{` + done + `,"contentExecuted":false,"content":"x","format":"EAN_13","codeType":"EAN-13"}`, true},
		{"codeType mismatch", `{` + done + `,"contentExecuted":false,"content":"x","format":"EAN_13","codeType":"QR CODE"}`, false},
		{"empty content", `{` + done + `,"contentExecuted":false,"content":"","format":"QR_CODE","codeType":"QR CODE"}`, false},
		{"duration wrong", `{` + strings.Replace(done, `"durationMs":3`, `"durationMs":4`, 1) + `,"contentExecuted":false,"content":"x","format":"QR_CODE","codeType":"QR CODE"}`, false},
		{"scanning wrong text", `{"success":true,"kind":"scan","sessionId":"s1","state":"scanning","active":true,"terminal":false,"scanning":true,"userActionRequired":true,"requiredUserAction":"Grant camera permission on the device","manualScanActive":false,"protocolActivityAttached":true,"contentExecuted":false,"requestedAt":1,"startedAt":2}`, false},
		{"active and manual", `{"success":true,"kind":"scan","sessionId":"s1","state":"starting","active":true,"terminal":false,"scanning":false,"userActionRequired":false,"manualScanActive":true,"protocolActivityAttached":false,"contentExecuted":false,"requestedAt":1}`, false},
		{"pending with startedAt", `{"success":true,"kind":"scan","sessionId":"s1","state":"pending-camera-permission","active":true,"terminal":false,"scanning":false,"userActionRequired":true,"requiredUserAction":"Grant camera permission on the device","manualScanActive":false,"protocolActivityAttached":true,"contentExecuted":false,"requestedAt":1,"startedAt":2}`, false},
	})
}
