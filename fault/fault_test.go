package fault

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestFromKeepsTypedAndMapsContext(t *testing.T) {
	t.Parallel()
	typed := New(Failed, "replay_active", "busy").With("runId", "r1")
	cases := []struct {
		err  error
		kind Kind
		code string
	}{
		{fmt.Errorf("wrapped: %w", typed), Failed, "replay_active"},
		{context.Canceled, Interrupted, CodeInterrupted},
		{fmt.Errorf("poll: %w", context.DeadlineExceeded), Timeout, CodeTimeout},
		{errors.New("boom"), Internal, CodeInternalError},
	}
	for _, c := range cases {
		e := From(c.err)
		if e.Kind != c.kind || e.Code != c.code {
			t.Errorf("From(%v) = %s/%s, want %s/%s", c.err, e.Kind, e.Code, c.kind, c.code)
		}
	}
	if !IsInterrupt(context.Canceled) || IsInterrupt(nil) || CodeOf(nil) != "" {
		t.Error("IsInterrupt/CodeOf edge cases")
	}
}

func TestFieldsPutsContractKeysLast(t *testing.T) {
	t.Parallel()
	e := Usage("bad_flag", "--x is wrong").WithUserAction("fix --x").
		With("success", true).With("errorCode", "spoofed").With("flag", "x")
	m := e.Fields()
	if m["success"] != false || m["errorCode"] != "bad_flag" || m["error"] != "--x is wrong" ||
		m["userActionRequired"] != "fix --x" || m["flag"] != "x" {
		t.Fatalf("fields %v", m)
	}
}
