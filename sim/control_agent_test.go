package sim

import (
	"strings"
	"testing"
)

// foreign-agent-session leaves an Agent session of another owner holding
// the phone's control lease.
func TestControlStartsAForeignAgentSession(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	d := f.Devices()[0]
	if err := d.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	code, body := controlPost(t, srv.URL+"/v1/devices/sim-0001/foreign-agent-session", `{"idleTimeoutMs":60000}`)
	if code != 200 || !strings.Contains(body, `"sessionId":"agent-session-`) {
		t.Fatalf("%d %s", code, body)
	}
	if !strings.HasPrefix(d.App.LeaseHolder(), "agent-lease-") {
		t.Errorf("lease holder %q", d.App.LeaseHolder())
	}
	if code, body := controlPost(t, srv.URL+"/v1/devices/sim-0001/foreign-agent-session", `{"ownerToken":"short"}`); code != 400 {
		t.Errorf("a second session: %d %s", code, body)
	}
}
