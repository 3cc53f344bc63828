package sessions

import (
	"context"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

func TestPerfHistoryListGetDelete(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	// A recording SoloPi kept: start and stop one.
	res, err := ssOut(perfStart(f))
	sid := ssExpect(t, "perf-start", res, err, passed)["sessionId"].(string)
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: sid, SessionTimings: ssFast}))
	ssExpect(t, "perf-stop", res, err, passed)
	list, err := ListPerfHistory(context.Background(), f.device(), 100)
	m := ssExpect(t, "perf-history-list", list, err, passed)
	recs, _ := m["records"].([]any)
	if m["returned"] != float64(1) || len(recs) != 1 {
		t.Fatalf("list = %v", m)
	}
	id := recs[0].(map[string]any)["id"].(string)
	rec, err := GetPerfHistory(context.Background(), f.device(), id)
	ssExpect(t, "perf-history-get", rec, err, passed)
	res, err = ssOut(DeletePerfHistory(context.Background(), f.device(), id, ssFast))
	m = ssExpect(t, "perf-history-delete", res, err, passed)
	if f.mutationCount("action=deletePerformance", "id="+id, "confirmId="+id, "requestId="+m["requestId"].(string)) != 1 {
		t.Fatalf("delete mutation = %v", f.dev.Mutations())
	}
	_, err = GetPerfHistory(context.Background(), f.device(), id)
	ssWantCode(t, ssExpect(t, "perf-history-get", nil, err, fault.Failed), "record_not_found")
	for _, bad := range []string{"replay-" + strings.Repeat("a", 64), "performance-ABC", "../x"} {
		if e := fault.From(CheckPerfHistoryID(bad)); CheckPerfHistoryID(bad) == nil || e.Kind != fault.Invalid {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ListPerfHistory(context.Background(), f.device(), 501); fault.KindOf(err) != fault.Invalid {
		t.Errorf("limit 501 accepted")
	}
}

func TestPerfDeleteReceiptValidator(t *testing.T) {
	t.Parallel()
	id := "performance-" + strings.Repeat("0", 64)
	v := func(o device.WireObject) error { return validatePerfDeleteReceipt(o, "r1", id) }
	mut := `"requestId":"r1","kind":"performance","action":"deletePerformance","id":"` + id + `"`
	ssValidatorCases(t, v, []ssCase{
		{"completed", `{"success":true,"requestId":"r1","state":"completed","mutation":{` + mut + `,"state":"completed","success":true,"deleted":true}}`, true},
		{"completed not deleted", `{"success":true,"requestId":"r1","state":"completed","mutation":{` + mut + `,"state":"completed","success":true,"deleted":false}}`, false},
		{"failed", `{"success":true,"requestId":"r1","state":"failed","mutation":{` + mut + `,"state":"failed","success":false,"deleted":false,"errorCode":"performance_active","error":"x"}}`, true},
		{"failed without code", `{"success":true,"requestId":"r1","state":"failed","mutation":{` + mut + `,"state":"failed","success":false,"deleted":false}}`, false},
		{"other request", `{"success":true,"requestId":"r2","state":"completed","mutation":{` + mut + `,"state":"completed","success":true,"deleted":true}}`, false},
	})
}
