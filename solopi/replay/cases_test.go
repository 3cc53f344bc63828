package replay

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

func TestImportCaseStagesChecksAndCleansUp(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	d := p.d
	rep, err := ImportCase(context.Background(), d, caseOf(t, "支付 & 退款", twoSteps), ImportOptions{Timeout: 5 * time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if rep.Receipt["imported"] != true || rep.Receipt["caseName"] != "支付 & 退款" || !rep.Cleanup.Done() {
		t.Fatalf("receipt %v cleanup %v", rep.Receipt, rep.Cleanup)
	}
	want := "/sdcard/Android/data/com.alipay.hulu/files/harness-import/" + rep.RequestID + ".json"
	if rep.RemotePath != want || len(rep.RequestID) != 36 {
		t.Fatalf("remote path %s", rep.RemotePath)
	}
	var rm, sum, mkdir bool
	for _, c := range p.dev.Commands() {
		rm = rm || c == "rm -f -- "+want
		sum = sum || c == "sha256sum "+want
		mkdir = mkdir || c == "mkdir -p /sdcard/Android/data/com.alipay.hulu/files/harness-import"
	}
	if !rm || !sum || !mkdir {
		t.Fatalf("shell log %v", p.dev.Commands())
	}
	if p.mutations("replace=false&requestId="+rep.RequestID) != 1 {
		t.Fatalf("mutation %v", p.dev.Mutations())
	}
	// A second import of the same name is refused by the device (exit 2)
	// and the staged file is still removed.
	rep, err = ImportCase(context.Background(), d, caseOf(t, "支付 & 退款", twoSteps), ImportOptions{Timeout: 5 * time.Second, PollInterval: 20 * time.Millisecond})
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "duplicate_case" || !rep.Cleanup.Attempted {
		t.Fatalf("duplicate: %v %v", err, rep.Cleanup)
	}
	if _, err := p.dev.Phone.Stat(rep.RemotePath); err == nil {
		t.Fatal("staged file left on the device")
	}
	rep, err = ImportCase(context.Background(), d, caseOf(t, "支付 & 退款", twoSteps), ImportOptions{Replace: true, Timeout: 5 * time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil || rep.Receipt["replaced"] == nil {
		t.Fatalf("replace: %v %v", err, rep.Receipt)
	}
}

func TestImportCaseRefusalStillCleansUp(t *testing.T) {
	t.Parallel()
	// A build whose harness storage lives elsewhere refuses the host's
	// staging path before reading the file (it deletes the file only when
	// it reads it): our cleanup must remove it.
	p := newSimPhone(t, func(o *sim.Options) {
		o.App.ExternalFilesDir = "/storage/emulated/0/Android/data/com.alipay.hulu/files-v2"
	})
	rep, err := ImportCase(context.Background(), p.d, caseOf(t, "x", twoSteps), ImportOptions{Timeout: 2 * time.Second, PollInterval: 20 * time.Millisecond})
	if e := fault.From(err); e.Code != "invalid_import_path" || e.Kind != fault.Failed {
		t.Fatalf("want device refusal, got %v", err)
	}
	if !rep.Cleanup.Done() {
		t.Fatalf("cleanup %v", rep.Cleanup)
	}
	if _, err := p.dev.Phone.Stat(rep.RemotePath); err == nil {
		t.Fatal("staged file left behind")
	}
}

func TestImportCaseTimeout(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	// The import never reaches SoloPi: no receipt ever.
	if err := p.dev.AddMutationFault(sim.MutationFault{Action: "harness", Query: map[string]string{"type": "case-import"}, Drop: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := ImportCase(context.Background(), p.d, caseOf(t, "z", twoSteps), ImportOptions{Timeout: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	e := fault.From(err)
	if e.Kind != fault.Timeout || e.Code != fault.CodeImportTimeout || e.Details["requestId"] != rep.RequestID {
		t.Fatalf("want import timeout, got %v", err)
	}
	if !rep.Cleanup.Done() {
		t.Fatalf("cleanup after timeout %v", rep.Cleanup)
	}
	if _, err := p.dev.Phone.Stat(rep.RemotePath); err == nil {
		t.Fatal("staged file left behind")
	}
}

func TestImportCaseInterruptCleansUp(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SoloPi takes a while to process the import; Ctrl-C once the host
	// polls for the receipt: the poll sees the interrupt.
	if err := p.dev.AddMutationFault(sim.MutationFault{Action: "harness", Query: map[string]string{"type": "case-import"}, DelayMs: 60_000}); err != nil {
		t.Fatal(err)
	}
	stop := p.dev.OnAnswer(func(a sim.Answer) {
		if a.Query.Get("type") == "case-import-status" {
			cancel()
		}
	})
	defer stop()
	rep, err := ImportCase(ctx, p.d, caseOf(t, "y", twoSteps), ImportOptions{Timeout: 5 * time.Second, PollInterval: time.Second})
	if !fault.IsInterrupt(err) {
		t.Fatalf("want interrupt, got %v", err)
	}
	if !rep.Cleanup.Attempted || !rep.Cleanup.Done() {
		t.Fatalf("cleanup after interrupt %v", rep.Cleanup)
	}
}

func TestDeleteCase(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("old", twoSteps)
	d := p.d
	out, reqID, err := DeleteCase(context.Background(), d, "old", 5*time.Second, 20*time.Millisecond)
	if err != nil || out["deleted"] != true || out["requestId"] != reqID {
		t.Fatalf("delete: %v %v", out, err)
	}
	if p.mutations("caseName=old&confirmCaseName=old&requestId="+reqID) != 1 {
		t.Fatalf("mutation %v", p.dev.Mutations())
	}
	_, _, err = DeleteCase(context.Background(), d, "old", 5*time.Second, 20*time.Millisecond)
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "case_not_found" {
		t.Fatalf("second delete: %v", err)
	}
}

func TestGetCaseAndList(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	id, fp, err := p.dev.App.CaseFingerprint("smoke")
	if err != nil {
		t.Fatal(err)
	}
	c, err := GetCase(context.Background(), p.d, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.Fingerprint != fp || c.StepCount() != 3 {
		t.Fatalf("case %+v", c)
	}
	if _, ok := c.Object["operationLog"].(map[string]any); !ok {
		t.Fatalf("operationLog not parsed: %T", c.Object["operationLog"])
	}
	m, err := ListCases(context.Background(), p.d)
	if err != nil || m["count"] == nil {
		t.Fatalf("list %v %v", m, err)
	}
}

// TestHistory lists, reads and deletes a replay record the simulated app
// saved after a run, through a delete receipt that stays in progress for
// two polls.
func TestHistory(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	d := p.d
	ctx := context.Background()
	p.addCase("smoke", twoSteps)
	if rep := RunReplay(ctx, d, fastRun("smoke", "")); kindOf(rep.Err) != passed {
		t.Fatalf("run: kind %v %v", kindOf(rep.Err), rep.Payload)
	}
	m, err := ListReplayHistory(ctx, d, 100)
	if err != nil || m["returned"] == nil {
		t.Fatalf("list %v %v", m, err)
	}
	recs, _ := m["records"].([]any)
	if len(recs) == 0 {
		t.Fatalf("the simulator saved no replay history record: %v", m)
	}
	id := recs[0].(map[string]any)["id"].(string)
	if _, err := ListReplayHistory(ctx, d, 0); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("limit 0: %v", err)
	}
	for _, bad := range []string{"../etc/passwd", "replay-ABC", "performance-" + strings.Repeat("a", 64)} {
		if _, err := GetReplayHistory(ctx, d, bad); fault.From(err).Code != fault.CodeInvalidHistoryID {
			t.Fatalf("id %q: %v", bad, err)
		}
	}
	g, err := GetReplayHistory(ctx, d, id)
	if err != nil || g["id"] != id {
		t.Fatalf("get %v %v", g, err)
	}
	if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "history", Query: map[string]string{"action": "mutationStatus"},
		When: map[string]any{"state": "completed"}, Set: map[string]any{"state": "in_progress", "mutation/state": "in_progress", "mutation/deleted": false},
		Times: 2}); err != nil {
		t.Fatal(err)
	}
	res, err := DeleteReplayHistory(ctx, d, id, 5*time.Second, 20*time.Millisecond)
	if err != nil || !res.Success || res.State != "completed" {
		t.Fatalf("delete %+v %v", res, err)
	}
	if p.mutations("confirmId="+id) != 1 {
		t.Fatalf("confirmId missing: %v", p.dev.Mutations())
	}
	res, err = DeleteReplayHistory(ctx, d, id, 5*time.Second, 20*time.Millisecond)
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "record_not_found" || res.Success {
		t.Fatalf("second delete %v", err)
	}
}

func TestHistoryListContract(t *testing.T) {
	t.Parallel()
	id := "replay-" + strings.Repeat("0", 64)
	rec := map[string]any{"id": id, "kind": "replay"}
	cases := []map[string]any{
		{"kind": "replay", "records": []any{rec}, "returned": 2, "total": 2, "truncated": false},
		{"kind": "replay", "records": []any{rec}, "returned": 1, "total": 2, "truncated": false},
		{"kind": "replay", "records": []any{rec, rec}, "returned": 2, "total": 5, "truncated": true},
		{"kind": "performance", "records": []any{}, "returned": 0, "total": 0, "truncated": false},
		{"kind": "replay", "records": []any{map[string]any{"id": "replay-../x", "kind": "replay"}}, "returned": 1, "total": 1, "truncated": false},
	}
	for i, m := range cases {
		if err := checkHistoryList(wireCopy(t, m), 1); err == nil || fault.KindOf(err) != fault.Transport {
			t.Errorf("case %d accepted: %v", i, err)
		}
	}
	if err := checkHistoryList(wireCopy(t, map[string]any{"kind": "replay", "records": []any{rec}, "returned": 1, "total": 3, "truncated": true}), 1); err != nil {
		t.Fatalf("valid list refused: %v", err)
	}
}

func TestHistoryReceiptValidation(t *testing.T) {
	t.Parallel()
	id := "replay-" + strings.Repeat("0", 64)
	good := func() map[string]any {
		return wireCopy(t, map[string]any{"success": true, "requestId": "r1", "state": "completed",
			"mutation": map[string]any{"requestId": "r1", "kind": "replay", "action": "deleteReplay", "id": id, "state": "completed", "success": true, "deleted": true}})
	}
	if err := checkHistoryReceipt(good(), "r1", id); err != nil {
		t.Fatal(err)
	}
	mutators := []func(m map[string]any){
		func(m map[string]any) { m["mutation"].(map[string]any)["id"] = "replay-" + strings.Repeat("1", 64) },
		func(m map[string]any) { m["mutation"].(map[string]any)["deleted"] = false },
		func(m map[string]any) { m["state"] = "done" },
		func(m map[string]any) { m["mutation"].(map[string]any)["success"] = "yes" },
		func(m map[string]any) {
			m["state"] = "failed"
			m["mutation"].(map[string]any)["state"] = "failed"
			m["mutation"].(map[string]any)["success"] = false
			m["mutation"].(map[string]any)["deleted"] = false
		},
	}
	for i, mut := range mutators {
		m := good()
		mut(m)
		if err := checkHistoryReceipt(m, "r1", id); err == nil {
			t.Errorf("mutator %d accepted", i)
		}
	}
}

// wireCopy is m as the host decodes a device answer (numbers as
// json.Number).
func wireCopy(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	o, err := device.DecodeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
