package adbd

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestNoGoroutineLeaks runs traffic through both fronts, closes them, and
// expects the goroutine count back at its starting level: every service,
// pump and pipe goroutine must end with its stream.
func TestNoGoroutineLeaks(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()

	a, err := ListenAdbd(context.Background(), "127.0.0.1:0", dev)
	if err != nil {
		t.Fatal(err)
	}
	h := dialHost(t, a.Addr())
	h.connect(versionSkipChecksum, maxPayload)
	for _, svc := range []string{"shell,v2,raw:echo a", "exec:cat", "tcp:23342", "sync:", "shell,v2,raw:sleep 30"} {
		if _, err := h.open(svc); err != nil {
			t.Fatal(err)
		}
	}
	s := startLeakServer(t, dev)
	c := dialServer(t, s)
	c.request("host:transport:SIM0001")
	c.readN(4)
	c.request("shell,v2,raw:sleep 30")
	c.readN(4)
	query(t, s, "host-serial:SIM0001:forward:tcp:0;tcp:23342")
	track := dialServer(t, s)
	track.request("host:track-devices")
	track.readN(4)

	a.Close()
	h.nc.Close()
	<-h.done
	s.Close()
	c.nc.Close()
	track.nc.Close()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		t.Errorf("%d goroutines before, %d after close:\n%s", before, n, filterStacks(stacks))
	}
}

func startLeakServer(t *testing.T, devs ...Device) *Server {
	s, err := ListenServer(context.Background(), "127.0.0.1:0", devs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// filterStacks keeps the goroutines that run code of this package.
func filterStacks(all string) string {
	var keep []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "sim/adbd.") && !strings.Contains(g, "TestNoGoroutineLeaks") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}
