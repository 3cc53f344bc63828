package adb

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// step is one exchange of a raw conversation: the exact bytes the client
// must send, then the exact bytes the server answers.
type step struct{ expect, reply string }

// rawServer serves one scripted conversation per accepted connection, in
// order, comparing the client's bytes exactly. It checks our framing against
// the bytes captured from Debian's adb 29.0.6 server (host services and the
// shell v2 exchange).
func rawServer(t *testing.T, convs ...[]step) *Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for i, conv := range convs {
			c, err := ln.Accept()
			if err != nil {
				t.Errorf("conversation %d: accept: %v", i, err)
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			for _, st := range conv {
				got := make([]byte, len(st.expect))
				if _, err := io.ReadFull(c, got); err != nil || string(got) != st.expect {
					t.Errorf("conversation %d: client sent %q (%v), want %q", i, got, err, st.expect)
					break
				}
				c.Write([]byte(st.reply))
			}
			c.Close()
		}
	}()
	c, err := NewClient(WithPort(ln.Addr().(*net.TCPAddr).Port), WithoutServerStart())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWireVersion(t *testing.T) {
	t.Parallel()
	c := rawServer(t, []step{{"000chost:version", "OKAY00040029"}})
	v, err := c.Version(context.Background())
	if err != nil || v != 41 {
		t.Fatalf("Version = %d, %v; want 41", v, err)
	}
}

func TestWireDevicesL(t *testing.T) {
	t.Parallel()
	c := rawServer(t,
		[]step{{"000ehost:devices-l", "OKAY0058127.0.0.1:5601         device product:simphone model:SimPhone device:sim transport_id:1\n"}},
		[]step{{"000ehost:devices-l", "OKAY0000"}},
	)
	ds, err := c.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceInfo{Serial: "127.0.0.1:5601", State: "device", Product: "simphone", Model: "SimPhone", Device: "sim", TransportID: 1}
	if len(ds) != 1 || ds[0].Serial != want.Serial || ds[0].State != want.State || ds[0].Product != want.Product ||
		ds[0].Model != want.Model || ds[0].Device != want.Device || ds[0].TransportID != 1 || ds[0].Extra != nil {
		t.Fatalf("Devices = %+v, want [%+v]", ds, want)
	}
	ds, err = c.Devices(context.Background())
	if err != nil || len(ds) != 0 {
		t.Fatalf("empty Devices = %+v, %v", ds, err)
	}
}

func TestWireConnect(t *testing.T) {
	t.Parallel()
	c := rawServer(t,
		[]step{{"001bhost:connect:127.0.0.1:5601", "OKAY001bconnected to 127.0.0.1:5601"}},
		[]step{{"001bhost:connect:127.0.0.1:5690", "OKAY0039failed to connect to '127.0.0.1:5690': Connection refused"}},
		[]step{{"001ehost:disconnect:127.0.0.1:5613", "OKAY001bdisconnected 127.0.0.1:5613"}},
		[]step{{"000ahost:bogus", "FAIL0014unknown host service"}},
	)
	ctx := context.Background()
	if err := c.Connect(ctx, "127.0.0.1:5601"); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	err := c.Connect(ctx, "127.0.0.1:5690")
	var ce *connectError
	if !errors.As(err, &ce) || ce.Msg != "failed to connect to '127.0.0.1:5690': Connection refused" || ce.Addr != "127.0.0.1:5690" {
		t.Fatalf("failed Connect = %v, want *ConnectError with the server text", err)
	}
	if err := c.Disconnect(ctx, "127.0.0.1:5613"); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	_, err = c.hostQuery(ctx, "bogus", "", "host:bogus")
	var fe *FailError
	if !errors.As(err, &fe) || fe.Msg != "unknown host service" {
		t.Fatalf("host:bogus = %v, want *FailError", err)
	}
}

// The shell v2 exchange as captured from Debian's adb 29.0.6, with our
// request (no TERM).
func TestWireShellV2(t *testing.T) {
	t.Parallel()
	cmd := "echo out; echo err >&2; exit 3"
	c := rawServer(t, []step{
		{"0020host:tport:serial:127.0.0.1:5601", "OKAY\x01\x00\x00\x00\x00\x00\x00\x00"},
		{"002bshell,v2,raw:" + cmd, "OKAY"},
		{"\x04\x00\x00\x00\x00", "\x01\x04\x00\x00\x00out\n\x02\x04\x00\x00\x00err\n\x03\x01\x00\x00\x00\x03"},
	})
	d := &Device{c: c, serial: "127.0.0.1:5601", features: []string{"shell_v2"}}
	out, errOut, code, err := d.Shell(context.Background(), cmd)
	if err != nil || string(out) != "out\n" || string(errOut) != "err\n" || code != 3 {
		t.Fatalf("Shell = %q, %q, %d, %v", out, errOut, code, err)
	}
}

func TestWireTransportErrors(t *testing.T) {
	t.Parallel()
	c := rawServer(t,
		[]step{{"0018host:tport:serial:nosuch", "FAIL0019device 'nosuch' not found"}},
		[]step{{"0018host:tport:serial:nosuch", "FAIL000edevice offline"}},
		[]step{{"0018host:tport:serial:nosuch", "OKAY\x02\x00\x00\x00\x00\x00\x00\x00"}, {"0011exec:screencap -p", "FAIL0006closed"}},
		[]step{{"001chost-serial:nosuch:get-state", "FAIL000edevice offline"}},
	)
	d := &Device{c: c, serial: "nosuch"}
	ctx := context.Background()
	if _, err := d.Exec(ctx, "ls"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("tport not found mid-use = %v, want ErrDeviceGone", err)
	}
	if _, err := d.Exec(ctx, "ls"); !errors.Is(err, ErrOffline) {
		t.Fatalf("tport offline = %v, want ErrOffline", err)
	}
	// FAIL closed, then get-state says offline: the device left.
	if _, err := d.Exec(ctx, "screencap -p"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("closed + offline = %v, want ErrDeviceGone", err)
	}
}

// An old server without host:tport gets the documented host:transport.
func TestWireTransportFallback(t *testing.T) {
	t.Parallel()
	c := rawServer(t,
		[]step{{"0017host:tport:serial:emu-1", "FAIL0014unknown host service"}},
		[]step{{"0014host:transport:emu-1", "OKAY"}, {"000bexec:echo x", "OKAYx\n"}},
		[]step{{"001bhost-serial:emu-1:get-state", "OKAY0006device"}},
	)
	d := &Device{c: c, serial: "emu-1"}
	out, err := d.Exec(context.Background(), "echo x")
	if err != nil || !bytes.Equal(out, []byte("x\n")) {
		t.Fatalf("Exec = %q, %v", out, err)
	}
}

// An adbd that cannot create the file answers FAIL at once and hangs up
// without reading the data (as adbd did before it learnt to drain): our
// next write fails, and the FAIL already received is what we report.
func TestWirePushRefusedAtOnce(t *testing.T) {
	t.Parallel()
	const spec = "/system/x,33188"
	fail := "FAIL\x27\x00\x00\x00couldn't create file: Permission denied"
	conv := []step{
		{"0013host:tport:serial:a", "OKAY\x01\x00\x00\x00\x00\x00\x00\x00"},
		{"0005sync:", "OKAY"},
		{"SEND\x0f\x00\x00\x00" + spec, fail},
	}
	// A large push fails writing its data; a tiny one may get as far as
	// DONE (or its reply).
	c := rawServer(t, conv, conv)
	d := &Device{c: c, serial: "a"}
	for _, size := range []int{8 << 20, 10} {
		err := d.Push(context.Background(), bytes.NewReader(make([]byte, size)), "/system/x", 0o644, time.Now())
		var se *syncError
		if !errors.As(err, &se) || se.Msg != "couldn't create file: Permission denied" || se.Path != "/system/x" {
			t.Fatalf("Push of %d bytes = %v, want the device's FAIL", size, err)
		}
	}
}
