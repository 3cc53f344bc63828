package outcome

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func TestVerdictExit(t *testing.T) {
	t.Parallel()
	cases := map[string]int{"passed": 0, "failed": 2, "not_tested": 3, "cancelled": 130, "running": 4, "": 4}
	for v, want := range cases {
		if got := VerdictExit(v); got != want {
			t.Errorf("VerdictExit(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestExitForMapsContextErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		exit int
		code string
	}{
		{context.Canceled, ExitInterrupted, "interrupted"},
		{fmt.Errorf("poll: %w", context.DeadlineExceeded), ExitTimeout, "timeout"},
		{errors.New("boom"), ExitTransport, "internal_error"},
		{fmt.Errorf("wrapped: %w", fault.New(fault.Failed, "replay_active", "busy")), ExitFailure, "replay_active"},
	}
	for _, c := range cases {
		e := fault.From(c.err)
		if ExitFor(e.Kind) != c.exit || e.Code != c.code {
			t.Errorf("From(%v) = %d/%s, want %d/%s", c.err, ExitFor(e.Kind), e.Code, c.exit, c.code)
		}
	}
}

func TestPrintErrorObject(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	err := fault.New(fault.Invalid, "no_device", "no Android device is online").
		WithUserAction("connect a device and authorize it").With("devices", []string{})
	code := Print(&buf, Result{}, err, false)
	if code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["success"] != false || m["errorCode"] != "no_device" || m["userActionRequired"] != "connect a device and authorize it" {
		t.Errorf("object %v", m)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Errorf("compact output should be one line: %q", buf.String())
	}
}

func TestPrintKeepsTextAndOrder(t *testing.T) {
	t.Parallel()
	type obj struct {
		Success bool   `json:"success"`
		Name    string `json:"caseName"`
	}
	var compact, pretty bytes.Buffer
	Print(&compact, OK(obj{true, "支付 & <退款>"}), nil, false)
	Print(&pretty, OK(obj{true, "支付 & <退款>"}), nil, true)
	if !strings.Contains(compact.String(), "支付 & <退款>") {
		t.Errorf("text escaped: %s", compact.String())
	}
	if strings.Index(pretty.String(), "success") > strings.Index(pretty.String(), "caseName") {
		t.Errorf("pretty reordered keys: %s", pretty.String())
	}
	if !strings.Contains(pretty.String(), "\n  \"caseName\"") {
		t.Errorf("pretty not indented by two: %s", pretty.String())
	}
}

func TestPrintRefusesNonObjects(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	code := Print(&buf, OK([]int{1}), nil, false)
	if code != ExitTransport || !strings.Contains(buf.String(), "output_encoding_failed") {
		t.Errorf("code %d out %s", code, buf.String())
	}
	buf.Reset()
	code = Print(&buf, OK(map[string]any{"f": func() {}}), nil, false)
	if code != ExitTransport || !strings.Contains(buf.String(), "output_encoding_failed") {
		t.Errorf("code %d out %s", code, buf.String())
	}
}

func TestResultExitIsKept(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if code := Print(&buf, Result{Value: map[string]any{"success": false, "state": "failed"}, Exit: ExitFailure}, nil, false); code != ExitFailure {
		t.Errorf("exit %d", code)
	}
}
