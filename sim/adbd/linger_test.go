package adbd

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// A service that never reads what its client sent (here a shell
// close-stdin packet after an exec: request, as a command that ignores its
// input leaves it) must still end with a clean close. Closing a socket with
// unread input makes the kernel reset the connection, and the client then
// loses the output it has not read yet: a large `logcat -d` through the
// server front failed that way with "connection reset by peer".
func TestServerCloseDoesNotResetUnreadInput(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "127.0.0.1:5601")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	if err := os.WriteFile(dev.hostPath("/sdcard/big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dev)
	for i := 0; i < 5; i++ {
		c := dialServer(t, s)
		c.request("host:transport:127.0.0.1:5601")
		if got := c.readN(4); got != "OKAY" {
			t.Fatalf("transport reply %q", got)
		}
		c.request("exec:cat /sdcard/big")
		if got := c.readN(4); got != "OKAY" {
			t.Fatalf("service reply %q", got)
		}
		if _, err := c.nc.Write([]byte{4, 0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		// Let the command finish and the server close before reading.
		time.Sleep(20 * time.Millisecond)
		got, err := io.ReadAll(c.r)
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("run %d: read %d of %d bytes: %v", i, len(got), len(big), err)
		}
	}
}
