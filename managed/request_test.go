package managed_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
)

// The control plane's JSON bodies become the store's requests with the
// CLI's defaults, and what they name is what the store records.
func TestRequestsFromJSONReachTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := managed.Open(ctx, filepath.Join(t.TempDir(), "managed.sqlite"), managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec, err := managed.DeviceSpecFromJSON(map[string]any{"deviceId": "pixel-1", "serial": "emulator-5554",
		"apiLevel": json.Number("34"), "capabilities": []any{"verification", " agent "}, "labels": map[string]any{"lab": "east"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RegisterDevice(ctx, spec); err != nil {
		t.Fatal(err)
	}
	d, err := s.Device(ctx, "pixel-1")
	if err != nil || d.Serial != "emulator-5554" || d.APILevel != 34 || strings.Join(d.Capabilities, ",") != "agent,verification" || d.Labels["lab"] != "east" {
		t.Fatalf("registered %+v %v", d, err)
	}
	sub, err := managed.SubmissionFromJSON(map[string]any{"plan": storetest.Plan(strings.Repeat("c", 64)), "matrix": storetest.Matrix(2, nil),
		"idempotencyKey": "ci-42", "ownerToken": storetest.Owner, "maxRetries": json.Number("3"), "leaseDurationMs": json.Number("5000"),
		"retentionMs": json.Number("0"), "decisions": nil})
	if err != nil {
		t.Fatal(err)
	}
	if sub.MaxRetries != 3 || sub.LeaseDurationMs != 5000 || sub.RetentionMs != 0 {
		t.Fatalf("submission %+v", sub)
	}
	task, err := s.Submit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if task.IdempotencyKey != "ci-42" || task.PlanFingerprint != strings.Repeat("c", 64) || managed.Terminal(task.Status) {
		t.Fatalf("task %+v", task)
	}
	// Defaults: the CLI's.
	def, err := managed.SubmissionFromJSON(map[string]any{"plan": storetest.Plan(strings.Repeat("c", 64)), "matrix": storetest.Matrix(1, nil)})
	want := managed.NewSubmission()
	if err != nil || def.MaxRetries != want.MaxRetries || def.LeaseDurationMs != want.LeaseDurationMs || def.RetentionMs != want.RetentionMs {
		t.Fatalf("defaults %+v %v", def, err)
	}
	tok, err := managed.OwnerTokenFromJSON(map[string]any{"ownerToken": storetest.Owner})
	if err != nil || tok != storetest.Owner {
		t.Fatalf("owner token %q %v", tok, err)
	}
	if _, err := s.Cancel(ctx, task.TaskID, tok); err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx, task.TaskID)
	if err != nil || !managed.Terminal(st.Status) {
		t.Fatalf("status after cancel %+v %v", st, err)
	}
}

// Every wrong field is a contract error naming it, never a panic or a
// silent default.
func TestRequestsFromJSONRefusals(t *testing.T) {
	t.Parallel()
	base := func() map[string]any {
		return map[string]any{"plan": storetest.Plan(strings.Repeat("c", 64)), "matrix": storetest.Matrix(1, nil)}
	}
	for name, c := range map[string]struct {
		key  string
		v    any
		code string
	}{
		"key not a string":   {"idempotencyKey", json.Number("1"), fault.CodeInvalidContract},
		"owner not a string": {"ownerToken", true, fault.CodeInvalidContract},
		"retries too many":   {"maxRetries", json.Number("11"), fault.CodeInvalidContract},
		"lease too short":    {"leaseDurationMs", json.Number("999"), fault.CodeInvalidContract},
		"retention negative": {"retentionMs", json.Number("-1"), fault.CodeInvalidContract},
	} {
		body := base()
		body[c.key] = c.v
		if _, err := managed.SubmissionFromJSON(body); fault.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v, want %s naming %s", name, err, c.code, c.key)
		}
	}
	dev := func(mutate func(map[string]any)) error {
		body := map[string]any{"deviceId": "d-1", "serial": "s-1", "apiLevel": json.Number("34")}
		mutate(body)
		_, err := managed.DeviceSpecFromJSON(body)
		return err
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		code   string
	}{
		"serial not a string":  {func(b map[string]any) { b["serial"] = json.Number("5") }, fault.CodeInvalidContract},
		"no api level":         {func(b map[string]any) { delete(b, "apiLevel") }, fault.CodeInvalidContract},
		"capabilities object":  {func(b map[string]any) { b["capabilities"] = map[string]any{} }, fault.CodeInvalidContract},
		"capability invalid":   {func(b map[string]any) { b["capabilities"] = []any{"no spaces"} }, fault.CodeInvalidID},
		"labels a list":        {func(b map[string]any) { b["labels"] = []any{} }, fault.CodeInvalidContract},
		"label value a number": {func(b map[string]any) { b["labels"] = map[string]any{"k": json.Number("1")} }, fault.CodeInvalidID},
	} {
		if err := dev(c.mutate); fault.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	if _, err := managed.OwnerTokenFromJSON(map[string]any{"ownerToken": []any{}}); fault.CodeOf(err) != fault.CodeInvalidContract {
		t.Errorf("owner token list: %v", err)
	}
	if tok, err := managed.OwnerTokenFromJSON(map[string]any{}); tok != "" || err != nil {
		t.Errorf("no owner token: %q %v", tok, err)
	}
	for in, want := range map[string]int64{"": 0, "0": 0, "17": 17} {
		if got, err := managed.EventCursor(in); err != nil || got != want {
			t.Errorf("EventCursor(%q) = %d %v", in, got, err)
		}
	}
	for _, bad := range []string{"-1", "x", "1.5"} {
		if _, err := managed.EventCursor(bad); fault.CodeOf(err) != fault.CodeInvalidContract {
			t.Errorf("EventCursor(%q): %v", bad, err)
		}
	}
}

// The identifier, staleness and plan checks other packages rely on.
func TestValidators(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"pixel-7:5555": true, "a": true, "-a": false, "": false, "a b": false, strings.Repeat("a", 160): true, strings.Repeat("a", 161): false} {
		if managed.ValidID(s) != want {
			t.Errorf("ValidID(%q) != %v", s, want)
		}
	}
	if !managed.IsStale(fault.New(fault.Invalid, fault.CodeStaleAssignment, "x")) || !managed.IsStale(fault.New(fault.Invalid, fault.CodeTaskCancelled, "x")) ||
		managed.IsStale(fault.New(fault.Invalid, fault.CodeInvalidContract, "x")) || managed.IsStale(nil) {
		t.Error("IsStale misreads a fencing refusal")
	}
	if err := managed.StructuralPlan(storetest.Plan(strings.Repeat("c", 64))); err != nil {
		t.Errorf("a plan refused: %v", err)
	}
	for _, bad := range []any{nil, map[string]any{"schemaVersion": "other"}, storetest.Plan("short")} {
		if err := managed.StructuralPlan(bad); fault.CodeOf(err) != fault.CodeInvalidPlan {
			t.Errorf("StructuralPlan(%v): %v", bad, err)
		}
	}
	for status, want := range map[string]bool{"queued": false, "running": false, "passed": true, "cancelled": true} {
		if managed.Terminal(status) != want {
			t.Errorf("Terminal(%s) != %v", status, want)
		}
	}
}
