package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

func normalizedCase(t *testing.T, name string) *casefile.Case {
	t.Helper()
	c, err := casefile.Parse([]byte(`{"caseName":` + devicefake.JSONString(name) + `,"targetAppPackage":"com.example.counter","operationLog":{"steps":` + devicefake.TwoSteps + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportCaseStagesChecksAndCleansUp(t *testing.T) {
	f := devicefake.NewReplay(t)
	d := replayFakeDevice(f)
	rep, err := ImportCase(context.Background(), d, normalizedCase(t, "支付 & 退款"), ImportOptions{Timeout: time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if rep.Receipt["imported"] != true || rep.Receipt["caseName"] != "支付 & 退款" || rep.Cleanup["success"] != true {
		t.Fatalf("receipt %v cleanup %v", rep.Receipt, rep.Cleanup)
	}
	want := "/sdcard/Android/data/com.alipay.hulu/files/harness-import/" + rep.RequestID + ".json"
	if rep.RemotePath != want || len(rep.RequestID) != 36 {
		t.Fatalf("remote path %s", rep.RemotePath)
	}
	var rm, sum, mkdir bool
	for _, c := range f.ShellLog() {
		rm = rm || c == "rm -f -- "+want
		sum = sum || c == "sha256sum "+want
		mkdir = mkdir || c == "mkdir -p /sdcard/Android/data/com.alipay.hulu/files/harness-import"
	}
	if !rm || !sum || !mkdir {
		t.Fatalf("shell log %v", f.ShellLog())
	}
	if f.CountMutations("replace=false&requestId="+rep.RequestID) != 1 {
		t.Fatalf("mutation %v", f.Mutations)
	}
	// A second import of the same name is refused by the device (exit 2)
	// and the staged file is still removed.
	rep, err = ImportCase(context.Background(), d, normalizedCase(t, "支付 & 退款"), ImportOptions{Timeout: time.Second, PollInterval: 20 * time.Millisecond})
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "duplicate_case" || rep.Cleanup["attempted"] != true {
		t.Fatalf("duplicate: %v %v", err, rep.Cleanup)
	}
	if f.Files.Has(rep.RemotePath) {
		t.Fatal("staged file left on the device")
	}
	rep, err = ImportCase(context.Background(), d, normalizedCase(t, "支付 & 退款"), ImportOptions{Replace: true, Timeout: time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil || rep.Receipt["replaced"] == nil {
		t.Fatalf("replace: %v %v", err, rep.Receipt)
	}
}

func TestImportCaseRefusalStillCleansUp(t *testing.T) {
	f := devicefake.NewReplay(t)
	d := replayFakeDevice(f)
	// The device refuses the import before reading the file (it deletes
	// the file only when it reads it): our cleanup must remove it.
	orig := f.Pkg
	f.Pkg = "com.other" // the fake then refuses the path with a receipt
	rep, err := ImportCase(context.Background(), d, normalizedCase(t, "x"), ImportOptions{Timeout: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	f.Pkg = orig
	if e := fault.From(err); e.Code != "invalid_import_path" || e.Kind != fault.Failed {
		t.Fatalf("want device refusal, got %v", err)
	}
	if rep.Cleanup["success"] != true {
		t.Fatalf("cleanup %v", rep.Cleanup)
	}
	if f.Files.Has(rep.RemotePath) {
		t.Fatal("staged file left behind")
	}
}

func TestImportCaseTimeout(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.DropImports = true
	d := replayFakeDevice(f)
	rep, err := ImportCase(context.Background(), d, normalizedCase(t, "z"), ImportOptions{Timeout: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	e := fault.From(err)
	if e.Kind != fault.Timeout || e.Code != CodeImportTimeout || e.Details["requestId"] != rep.RequestID {
		t.Fatalf("want import timeout, got %v", err)
	}
	if rep.Cleanup["success"] != true {
		t.Fatalf("cleanup after timeout %v", rep.Cleanup)
	}
}

func TestImportCaseInterruptCleansUp(t *testing.T) {
	f := devicefake.NewReplay(t)
	d := replayFakeDevice(f)
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel on the mutation: the receipt poll sees the interrupt.
	f.Lock()
	f.ImportReceipt = nil
	f.OnMutation = func(raw string) {
		if strings.Contains(raw, "case-import") {
			cancel()
		}
	}
	f.Unlock()
	rep, err := ImportCase(ctx, d, normalizedCase(t, "y"), ImportOptions{Timeout: 5 * time.Second, PollInterval: time.Second})
	if err != nil && !fault.IsInterrupt(err) {
		t.Fatalf("want interrupt or success, got %v", err)
	}
	if rep.Cleanup["attempted"] != true || rep.Cleanup["success"] != true {
		t.Fatalf("cleanup after interrupt %v", rep.Cleanup)
	}
}

func TestDeleteCase(t *testing.T) {
	f := devicefake.NewReplay(t)
	f.AddCase("old", devicefake.TwoSteps)
	d := replayFakeDevice(f)
	out, reqID, err := DeleteCase(context.Background(), d, "old", time.Second, 20*time.Millisecond)
	if err != nil || out["deleted"] != true || out["requestId"] != reqID {
		t.Fatalf("delete: %v %v", out, err)
	}
	if f.CountMutations("caseName=old&confirmCaseName=old&requestId="+reqID) != 1 {
		t.Fatalf("mutation %v", f.Mutations)
	}
	_, _, err = DeleteCase(context.Background(), d, "old", time.Second, 20*time.Millisecond)
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "case_not_found" {
		t.Fatalf("second delete: %v", err)
	}
}

func TestGetCaseAndList(t *testing.T) {
	f := devicefake.NewReplay(t)
	snap := f.AddCase("smoke", devicefake.TwoSteps)
	d := replayFakeDevice(f)
	c, err := GetCase(context.Background(), d, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != *snap.ID || c.Fingerprint != snap.CaseFingerprint || c.StepCount() != 2 {
		t.Fatalf("case %+v", c)
	}
	if _, ok := c.Object["operationLog"].(map[string]any); !ok {
		t.Fatalf("operationLog not parsed: %T", c.Object["operationLog"])
	}
	m, err := ListCases(context.Background(), d)
	if err != nil || m["count"] == nil {
		t.Fatalf("list %v %v", m, err)
	}
}

func TestHistory(t *testing.T) {
	f := devicefake.NewReplay(t)
	id := "replay-" + strings.Repeat("ab", 32)
	f.History[id] = map[string]any{"id": id, "kind": "replay", "caseName": "smoke", "status": "passed"}
	d := replayFakeDevice(f)
	m, err := ListReplayHistory(context.Background(), d, 100)
	if err != nil || m["returned"] == nil {
		t.Fatalf("list %v %v", m, err)
	}
	if _, err := ListReplayHistory(context.Background(), d, 0); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("limit 0: %v", err)
	}
	for _, bad := range []string{"../etc/passwd", "replay-ABC", "performance-" + strings.Repeat("a", 64)} {
		if _, err := GetReplayHistory(context.Background(), d, bad); fault.From(err).Code != CodeInvalidHistoryID {
			t.Fatalf("id %q: %v", bad, err)
		}
	}
	g, err := GetReplayHistory(context.Background(), d, id)
	if err != nil || g["id"] != id {
		t.Fatalf("get %v %v", g, err)
	}
	f.HistPending = 2
	res, err := DeleteReplayHistory(context.Background(), d, id, time.Second, 20*time.Millisecond)
	if err != nil || !res.Success || res.Object["state"] != "completed" {
		t.Fatalf("delete %+v %v", res, err)
	}
	if f.CountMutations("confirmId="+id) != 1 {
		t.Fatalf("confirmId missing: %v", f.Mutations)
	}
	res, err = DeleteReplayHistory(context.Background(), d, id, time.Second, 20*time.Millisecond)
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != "record_not_found" || res.Success {
		t.Fatalf("second delete %v", err)
	}
}

func TestHistoryListContract(t *testing.T) {
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
		if err := checkHistoryList(devicefake.Clone(m), 1); err == nil || fault.KindOf(err) != fault.Transport {
			t.Errorf("case %d accepted: %v", i, err)
		}
	}
	if err := checkHistoryList(devicefake.Clone(map[string]any{"kind": "replay", "records": []any{rec}, "returned": 1, "total": 3, "truncated": true}), 1); err != nil {
		t.Fatalf("valid list refused: %v", err)
	}
}

func TestHistoryReceiptValidation(t *testing.T) {
	id := "replay-" + strings.Repeat("0", 64)
	good := func() map[string]any {
		return devicefake.Clone(map[string]any{"success": true, "requestId": "r1", "state": "completed",
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
