package protocol

import "testing"

func sp(s string) *string { return &s }
func ip(v int64) *int64   { return &v }

func TestValidateAction(t *testing.T) {
	t.Parallel()
	cases := []struct {
		action string
		args   ActionArgs
		want   string
	}{
		{"click", ActionArgs{NodeID: sp("node-1")}, ""},
		{"click", ActionArgs{}, "click requires nodeId"},
		{"click", ActionArgs{NodeID: sp("")}, "click requires nodeId"},
		{"click", ActionArgs{NodeID: sp("node-1"), Text: sp("x")}, "Unexpected action field: text"},
		{"longClick", ActionArgs{NodeID: sp("node-2"), DurationMs: ip(800)}, ""},
		{"longClick", ActionArgs{NodeID: sp("node-2"), DurationMs: ip(99)}, "durationMs must be between 100 and 5000"},
		{"longClick", ActionArgs{}, "longClick requires nodeId"},
		{"input", ActionArgs{NodeID: sp("node-3"), Text: sp("")}, ""},
		{"input", ActionArgs{NodeID: sp("node-3")}, "input requires nodeId and string text"},
		{"back", ActionArgs{}, ""},
		{"back", ActionArgs{NodeID: sp("node-1")}, "Unexpected action field: nodeId"},
		{"home", ActionArgs{DurationMs: ip(100)}, "Unexpected action field: durationMs"},
		{"scroll", ActionArgs{Direction: sp("down")}, ""},
		{"scroll", ActionArgs{Direction: sp("down"), NodeID: sp("")}, "nodeId must be a non-empty string"},
		{"scroll", ActionArgs{Direction: sp("sideways")}, "scroll direction must be up, down, left, or right"},
		{"scroll", ActionArgs{Direction: sp("up"), Distance: ip(91)}, "distance must be between 1 and 90"},
		{"scroll", ActionArgs{Direction: sp("up"), Distance: ip(90), NodeID: sp("node-9")}, ""},
		{"wait", ActionArgs{DurationMs: ip(5000)}, ""},
		{"wait", ActionArgs{}, "wait requires durationMs between 100 and 5000"},
		{"wait", ActionArgs{DurationMs: ip(5001)}, "wait requires durationMs between 100 and 5000"},
		{"executeShell", ActionArgs{}, "Only phase-one typed actions are allowed"},
		{"CLICK", ActionArgs{NodeID: sp("node-1")}, "Only phase-one typed actions are allowed"},
	}
	for _, c := range cases {
		if got := ValidateAction(c.action, c.args); got != c.want {
			t.Errorf("ValidateAction(%s, %+v) = %q, want %q", c.action, c.args, got, c.want)
		}
	}
}

func TestTypedActionsAreSeven(t *testing.T) {
	t.Parallel()
	acts := TypedActions()
	want := []string{"click", "longClick", "input", "back", "home", "scroll", "wait"}
	if len(acts) != len(want) {
		t.Fatalf("got %d actions", len(acts))
	}
	for i, a := range acts {
		if a.Name != want[i] || !IsTypedAction(a.Name) {
			t.Errorf("action %d = %s, want %s", i, a.Name, want[i])
		}
	}
}

func TestActionSignature(t *testing.T) {
	t.Parallel()
	if got := ActionSignature("click", ActionArgs{NodeID: sp("node-5")}); got != "click:{nodeId=node-5}" {
		t.Errorf("got %q", got)
	}
	got := ActionSignature("scroll", ActionArgs{NodeID: sp("node-2"), Direction: sp("up"), Distance: ip(30)})
	if got != "scroll:{direction=up, distance=30, nodeId=node-2}" {
		t.Errorf("got %q", got)
	}
}

func TestKeepPolling(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"import_receipt_not_found", "case_delete_receipt_not_found", "adb_connect_receipt_not_found", "analysis_not_found", "receipt_not_found"} {
		if !KeepPolling(c) {
			t.Errorf("%s should keep polling", c)
		}
	}
	for _, c := range []string{"owner_mismatch", "case_not_found", "session_not_found", ""} {
		if KeepPolling(c) {
			t.Errorf("%s should not keep polling", c)
		}
	}
}
