package replaycmd

import (
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

// A run leaves a replay record on the device: it is listed, read, deleted
// (exit 0 on the device's receipt) and then gone.
func TestReplayHistory(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	r.Cmd(0, append([]string{"run", "--case", demo}, fast...)...)
	m := r.Cmd(0, "replay-history-list", "--limit", "10")
	records, _ := m["records"].([]any)
	if m["returned"] != float64(1) || len(records) != 1 {
		t.Fatalf("list: %v", m)
	}
	id := cmdtest.Str(records[0].(map[string]any), "id")
	if m = r.Cmd(0, "replay-history-get", "--id", id); m["id"] != id {
		t.Fatalf("get: %v", m)
	}
	before := r.Selections()
	if m = r.Cmd(3, "replay-history-get", "--id", "../../sdcard"); m["errorCode"] != fault.CodeInvalidHistoryID {
		t.Fatalf("bad id: %v", m)
	}
	r.Cmd(3, "replay-history-list", "--limit", "501")
	r.Cmd(3, "replay-history-delete", "--id", "../x")
	if r.Selections() != before {
		t.Fatal("a refused history command selected the device")
	}
	if m = r.Cmd(0, "replay-history-delete", "--id", id, "--poll-interval", "0.05"); m["state"] != "completed" {
		t.Fatalf("delete: %v", m)
	}
	if m = r.Cmd(2, "replay-history-delete", "--id", id, "--poll-interval", "0.05"); m["errorCode"] != "record_not_found" || m["requestId"] == nil {
		t.Fatalf("delete of a deleted record: %v", m)
	}
}
