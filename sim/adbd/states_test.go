package adbd

import (
	"strings"
	"testing"
	"time"
)

// A device in recovery is listed with its banner's props; a tracker whose
// client left is dropped on the next change.
func TestServerRecoveryStateAndAGoneTracker(t *testing.T) {
	t.Parallel()
	s := startServer(t, newFakeDevice(t, "SIM0001"))
	if err := s.SetState("SIM0001", stateRecovery); err != nil {
		t.Fatal(err)
	}
	if err := s.SetState("SIM0001", "fastboot"); err == nil {
		t.Error("an unknown state was accepted")
	}
	if got := query(t, s, "host:devices-l"); !strings.Contains(got, "SIM0001                recovery product:simphone model:SimPhone device:sim") {
		t.Errorf("devices-l in recovery: %q", got)
	}
	track := dialServer(t, s)
	track.request("host:track-devices")
	if got := track.readN(4 + 4 + len("SIM0001\trecovery\n")); got != "OKAY0011SIM0001\trecovery\n" {
		t.Fatalf("track: %q", got)
	}
	track.nc.Close()
	// The tracker's next write fails: it ends instead of piling up.
	for i := 0; i < 50; i++ {
		st := StateDevice
		if i%2 == 1 {
			st = stateRecovery
		}
		if err := s.SetState("SIM0001", st); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if got := query(t, s, "host:devices"); got != "OKAY"+hex4("SIM0001\trecovery\n") {
		t.Errorf("devices after the tracker left: %q", got)
	}
}
