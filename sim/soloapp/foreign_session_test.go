package soloapp

import (
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// A foreign Agent session (another host's) holds the control lease under
// its token: another Agent start is session_conflict, and cancelling it with its
// token frees the device. A second foreign start while it runs is refused
// with the device's error.
func TestStartForeignAgentSession(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
	foreign := strings.Repeat("f", 24)
	sid, err := r.app.StartForeignAgentSession(foreign, 300_000)
	if err != nil || sid == "" {
		t.Fatalf("foreign start: %q %v", sid, err)
	}
	if h := r.app.LeaseHolder(); h == "" {
		t.Fatal("the foreign session holds no lease")
	}
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", strings.Repeat("m", 24)), "session_conflict", "A dynamic Agent session is already active")
	if _, err := r.app.StartForeignAgentSession(strings.Repeat("g", 24), 300_000); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a second foreign start: %v", err)
	}
	st := r.get("agent", "type", "status", "sessionId", sid, "ownerToken", foreign)
	if str(sub(st, "session"), "sessionId") != sid {
		t.Fatalf("status of the foreign session: %v", st)
	}
	r.mutate("agent", "type", "cancel", "sessionId", sid, "ownerToken", foreign)
	r.eventually("the lease to be released", 10*time.Second, func() bool { return r.app.LeaseHolder() == "" })
}
