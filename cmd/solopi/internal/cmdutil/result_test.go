package cmdutil

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

func TestPrintErrorObject(t *testing.T) {
	var buf bytes.Buffer
	err := fault.New(fault.Invalid, "no_device", "no Android device is online").
		WithUserAction("connect a device and authorize it").With("devices", []string{})
	code := printObject(&buf, Result{}, err, false)
	if code != outcome.ExitUsage {
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
	type obj struct {
		Success bool   `json:"success"`
		Name    string `json:"caseName"`
	}
	var compact, pretty bytes.Buffer
	printObject(&compact, OK(obj{true, "支付 & <退款>"}), nil, false)
	printObject(&pretty, OK(obj{true, "支付 & <退款>"}), nil, true)
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
	var buf bytes.Buffer
	code := printObject(&buf, OK([]int{1}), nil, false)
	if code != outcome.ExitTransport || !strings.Contains(buf.String(), "output_encoding_failed") {
		t.Errorf("code %d out %s", code, buf.String())
	}
	buf.Reset()
	code = printObject(&buf, OK(map[string]any{"f": func() {}}), nil, false)
	if code != outcome.ExitTransport || !strings.Contains(buf.String(), "output_encoding_failed") {
		t.Errorf("code %d out %s", code, buf.String())
	}
}

func TestResultExitIsKept(t *testing.T) {
	var buf bytes.Buffer
	if code := printObject(&buf, Result{Value: map[string]any{"success": false, "state": "failed"}, Exit: outcome.ExitFailure}, nil, false); code != outcome.ExitFailure {
		t.Errorf("exit %d", code)
	}
}
