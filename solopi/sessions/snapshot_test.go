package sessions

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ssFast are test budgets: a short poll interval, and a timeout far above
// what a session on the simulator's fast clock needs even on a loaded
// machine (the tests of a timeout set their own).
var ssFast = SessionTimings{Timeout: 30 * time.Second, Interval: 5 * time.Millisecond}

// passed stands for "no failure" where tests compare an outcome's kind.
const passed fault.Kind = 255

// ssEmit renders a command outcome as the JSON object the CLI prints (the
// result, or the error's fields) and the kind of its failure.
func ssEmit(t *testing.T, res any, err error) ([]byte, fault.Kind) {
	t.Helper()
	v := res
	kind := passed
	if err != nil {
		e := fault.From(err)
		v, kind = e.Fields(), e.Kind
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		t.Fatalf("encode output: %v", merr)
	}
	return b, kind
}

// ssExpect checks the failure kind, validates the printed object against
// the command's schema (errors against the error schema) and decodes it.
func ssExpect(t *testing.T, schema string, res any, err error, want fault.Kind) map[string]any {
	t.Helper()
	b, kind := ssEmit(t, res, err)
	if kind != want {
		t.Fatalf("kind %v, want %v: %s", kind, want, b)
	}
	schematest.Validate(t, schema, b)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode output: %v", err)
	}
	return m
}

func ssWantCode(t *testing.T, m map[string]any, code string) {
	t.Helper()
	if m["errorCode"] != code {
		t.Fatalf("errorCode %v, want %s: %v", m["errorCode"], code, m)
	}
}

func TestReachableFollowsTheMachines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m        *protocol.Machine
		from, to protocol.State
		ok       bool
	}{
		{protocol.Record(), "starting", "stopped", true},
		{protocol.Record(), "recording", "starting", false},
		{protocol.Record(), "stopped", "recording", false},
		{protocol.ScreenRecord(), "pending-user-confirmation", "recording", true},
		{protocol.ScreenRecord(), "recording", "pending-user-confirmation", false},
		{protocol.Stress(), "running", "failed", true},
		{protocol.Scan(), "scanning", "starting", false},
		{protocol.Performance(), "stopping", "stopping", true},
		{protocol.PluginMutation(), "in_progress", "completed_restart_required", true},
	}
	for _, c := range cases {
		if got := device.Reachable(c.m, c.from, c.to); got != c.ok {
			t.Errorf("%s: %s -> %s reachable=%v, want %v", c.m.Name, c.from, c.to, got, c.ok)
		}
	}
}

func TestSessionIDChecks(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "a", "0c6f-uuid.x_y"} {
		if err := CheckSessionID(id); err != nil {
			t.Errorf("CheckSessionID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"-x", "a/b", "a b", strings.Repeat("a", 129)} {
		if e := fault.From(CheckSessionID(id)); e == nil || e.Kind != fault.Invalid {
			t.Errorf("CheckSessionID(%q) accepted", id)
		}
	}
	if e := fault.From(RequireSessionID("")); e.Kind != fault.Invalid {
		t.Errorf("RequireSessionID(\"\") = %v", e)
	}
	if e := fault.From(CheckPerfSessionID(strings.Repeat("a", 117), true)); e.Kind != fault.Invalid {
		t.Errorf("a 117-character performance id was accepted")
	}
}

// ssCase is one snapshot and whether the validator accepts it.
type ssCase struct {
	name string
	snap string
	ok   bool
}

func ssValidatorCases(t *testing.T, validate func(device.WireObject) error, cases []ssCase) {
	t.Helper()
	for _, c := range cases {
		m, err := device.DecodeObject([]byte(c.snap))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = validate(device.WireObject(m))
		if (err == nil) != c.ok {
			t.Errorf("%s: validator error = %v, want ok=%v", c.name, err, c.ok)
			continue
		}
		if err != nil {
			if e := fault.From(err); e.Kind != fault.Transport || e.Code != fault.CodeProtocolContractViolation {
				t.Errorf("%s: violation is %s/%d, want %s/4", c.name, e.Code, e.Kind, fault.CodeProtocolContractViolation)
			}
		}
	}
}

// FuzzSessionValidators feeds arbitrary device objects to every strict
// validator: a hostile or broken device must get an error, never a panic.
func FuzzSessionValidators(f *testing.F) {
	f.Add([]byte(`{"success":true,"kind":"scan","state":"completed","active":false,"terminal":true,"scanning":false,"userActionRequired":false,"contentExecuted":false,"format":"QR_CODE"}`))
	f.Add([]byte(`{"state":"recording","startedAt":1.5,"durationMs":"x","items":[1,null],"values":{"a":null}}`))
	f.Add([]byte(`{"plugins":[null,{"id":3}],"importFiles":[{}],"mutation":{"state":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := device.DecodeObject(b)
		if err != nil {
			return
		}
		o := device.WireObject(m)
		for _, v := range []func(device.WireObject) error{validateRecording, validateScreenRecording, validateScan, validateStress,
			validatePerformance, validateCurrent, validateDisplay, validatePluginList} {
			_ = v(o)
		}
		_ = validateAnalysisReceipt(o)
		_ = validatePerfDeleteReceipt(o, "r1", "performance-x")
		_ = validatePluginReceipt(o, "r1", pluginExpect{action: "import", subject: "s"})
		_ = validatePluginReceipt(o, "r1", pluginExpect{action: "remove", subject: "s"})
	})
}

// ssOut is a command's outcome as ssExpect takes it: one variable of a
// test holds the outcomes of commands that print different types.
func ssOut[R any](res R, err error) (any, error) { return res, err }
