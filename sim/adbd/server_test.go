package adbd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

func startServer(t *testing.T, devs ...Device) *Server {
	t.Helper()
	s, err := ListenServer(context.Background(), "127.0.0.1:0", devs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawClient is a smart-socket client that only moves bytes, so tests can
// compare replies byte for byte with the captures.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialServer(t *testing.T, s *Server) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawClient{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (c *rawClient) request(req string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.nc, "%04x%s", len(req), req); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) readN(n int) string {
	c.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		c.t.Fatalf("reading %d bytes: %v (got %q)", n, err, b)
	}
	return string(b)
}

func (c *rawClient) readAll() string {
	c.t.Helper()
	b, err := io.ReadAll(c.r)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(b)
}

// hex4 frames s the way the server must, written out independently of
// adbwire so that these tests pin the bytes.
func hex4(s string) string { return fmt.Sprintf("%04x%s", len(s), s) }

// query sends one request on a fresh connection and returns the whole
// reply up to the server's close.
func query(t *testing.T, s *Server, req string) string {
	t.Helper()
	c := dialServer(t, s)
	c.request(req)
	return c.readAll()
}

func TestServerHostQueries(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "127.0.0.1:5601")
	s := startServer(t, dev)
	tests := []struct{ req, want string }{
		{"host:version", "OKAY00040029"},
		{"host:devices-l", "OKAY0058127.0.0.1:5601         device product:simphone model:SimPhone device:sim transport_id:1\n"},
		{"host:devices", "OKAY0016127.0.0.1:5601\tdevice\n"},
		{"host-serial:127.0.0.1:5601:features", "OKAY" + hex4(features)},
		{"host:features", "OKAY" + hex4(features)},
		{"host:host-features", "OKAY0072push_sync,remount_shell,abb_exec,abb,apex,fixed_push_mkdir,ls_v2,stat_v2,fixed_push_symlink_timestamp,cmd,shell_v2"},
		{"host-serial:127.0.0.1:5601:get-state", "OKAY0006device"},
		{"host-serial:127.0.0.1:5601:get-serialno", "OKAY000e127.0.0.1:5601"},
		{"host-serial:127.0.0.1:5601:get-devpath", "OKAY0007unknown"},
		{"host-transport-id:1:get-state", "OKAY0006device"},
		{"host:connect:127.0.0.1:5690", "OKAY0039failed to connect to '127.0.0.1:5690': Connection refused"},
		{"host:connect:127.0.0.1:5601", "OKAY" + hex4("already connected to 127.0.0.1:5601")},
		{"host:bogus", "FAIL0014unknown host service"},
		{"host:transport:nosuch", "FAIL0019device 'nosuch' not found"},
		{"host:tport:serial:nosuch", "FAIL0019device 'nosuch' not found"},
		{"host-serial:x:get-state", "FAIL0014device 'x' not found"},
		{"host-serial:127.0.0.1:1:get-state", "FAIL001edevice '127.0.0.1:1' not found"},
		{"host:transport-id:5", "FAIL001fno device with transport id '5'"},
		{"host:transport-usb", "FAIL0010no devices found"},
		{"host:disconnect:foo", "FAIL0019no such device 'foo:5555'"},
		{"host:list-forward", "OKAY0000"},
		{"shell:echo hi", "FAIL0014unknown host service"},
	}
	for _, tc := range tests {
		if got := query(t, s, tc.req); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.req, got, tc.want)
		}
	}
}

func TestServerNoDevices(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for req, want := range map[string]string{
		"host:devices":       "OKAY0000",
		"host:devices-l":     "OKAY0000",
		"host:transport-any": "FAIL001ano devices/emulators found",
		"host:tport:any":     "FAIL001ano devices/emulators found",
		"host:features":      "FAIL001ano devices/emulators found",
		"host:get-state":     "FAIL001ano devices/emulators found",
		"host:disconnect:":   "OKAY0017disconnected everything",
	} {
		if got := query(t, s, req); got != want {
			t.Errorf("%s: got %q, want %q", req, got, want)
		}
	}
}

func TestServerShellV2(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "127.0.0.1:5601")
	s := startServer(t, dev)
	c := dialServer(t, s)
	c.request("host:tport:serial:127.0.0.1:5601")
	if got := c.readN(12); got != "OKAY\x01\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("tport reply %q", got)
	}
	c.request("shell,v2,TERM=xterm,raw:echo out; echo err >&2; exit 3")
	if got := c.readN(4); got != "OKAY" {
		t.Fatalf("service reply %q", got)
	}
	c.nc.Write([]byte{4, 0, 0, 0, 0})
	want := "\x01\x04\x00\x00\x00out\n\x02\x04\x00\x00\x00err\n\x03\x01\x00\x00\x00\x03"
	if got := c.readAll(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestServerTransportForms(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	s := startServer(t, dev)
	for _, sw := range []string{"host:transport:SIM0001", "host:transport-any", "host:transport-local", "host:transport-id:1"} {
		c := dialServer(t, s)
		c.request(sw)
		if got := c.readN(4); got != "OKAY" {
			t.Fatalf("%s: %q", sw, got)
		}
		c.request("exec:screencap -p")
		if got := c.readAll(); got != "OKAY"+string(fakePNG) {
			t.Errorf("%s: exec-out %q", sw, got)
		}
	}
	// A refused service after the switch: the real server says "closed".
	c := dialServer(t, s)
	c.request("host:transport:SIM0001")
	c.readN(4)
	c.request("abb:activity\x00start")
	if got := c.readAll(); got != "FAIL0006closed" {
		t.Errorf("refused service: %q", got)
	}
	// Direct tcp: tunnel, no forward state.
	c = dialServer(t, s)
	c.request("host:transport:SIM0001")
	c.readN(4)
	c.request("tcp:23342")
	if got := c.readN(4); got != "OKAY" {
		t.Fatalf("tcp: %q", got)
	}
	fmt.Fprintf(c.nc, "GET /status.json HTTP/1.0\r\n\r\n")
	if got := c.readAll(); !strings.HasSuffix(got, "echo GET /status.json ") {
		t.Errorf("tunnel response %q", got)
	}
}

func TestServerSync(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	s := startServer(t, dev)
	c := dialServer(t, s)
	c.request("host:transport:SIM0001")
	c.readN(4)
	c.request("sync:")
	c.readN(4)
	content := pattern(150000)
	c.nc.Write(pushBytes("/data/local/tmp/big.bin", 33188, content, 1700000000))
	if got := c.readN(8); got != "OKAY\x00\x00\x00\x00" {
		t.Fatalf("SEND reply %q", got)
	}
	c.nc.Write(syncReq(adbwire.SyncRECV, "/data/local/tmp/big.bin"))
	var got []byte
	for {
		hdr := c.readN(8)
		n := int(binary.LittleEndian.Uint32([]byte(hdr[4:])))
		if hdr[:4] == adbwire.SyncDONE {
			break
		}
		got = append(got, c.readN(n)...)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("pulled %d bytes, differ", len(got))
	}
	c.nc.Write(syncWord(adbwire.SyncQUIT, 0))
	if rest := c.readAll(); rest != "" {
		t.Errorf("after QUIT: %q", rest)
	}
}

func TestServerMultipleDevicesAndStates(t *testing.T) {
	t.Parallel()
	a, b := newFakeDevice(t, "SIM0001"), newFakeDevice(t, "SIM0002")
	s := startServer(t, a, b)
	if got, want := query(t, s, "host:transport-any"), "FAIL001dmore than one device/emulator"; got != want {
		t.Errorf("any: %q", got)
	}
	if got, want := query(t, s, "host:tport:local"), "FAIL"+hex4("more than one emulator"); got != want {
		t.Errorf("local: %q", got)
	}
	if got, want := query(t, s, "host:devices"), "OKAY001eSIM0001\tdevice\nSIM0002\tdevice\n"; got != want {
		t.Errorf("devices: %q", got)
	}

	if err := s.SetState("SIM0001", StateOffline); err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{"host-serial:SIM0001:get-state", "host:transport:SIM0001", "host-serial:SIM0001:features"} {
		if got := query(t, s, req); got != "FAIL000edevice offline" {
			t.Errorf("offline %s: %q", req, got)
		}
	}
	wantL := "OKAY" + hex4("SIM0001                offline product:simphone model:SimPhone device:sim transport_id:1\n"+
		"SIM0002                device product:simphone model:SimPhone device:sim transport_id:2\n")
	if got := query(t, s, "host:devices-l"); got != wantL {
		t.Errorf("devices-l: %q, want %q", got, wantL)
	}

	s.SetState("SIM0001", stateUnauthorized)
	if got := query(t, s, "host:transport:SIM0001"); got != "FAIL"+hex4(unauthorizedText) {
		t.Errorf("unauthorized: %q", got)
	}
	if !strings.HasPrefix(unauthorizedText, "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n") {
		t.Error("unauthorized text drifted")
	}
	if got := query(t, s, "host:devices"); got != "OKAY0024SIM0001\tunauthorized\nSIM0002\tdevice\n" {
		t.Errorf("devices: %q", got)
	}

	s.Remove("SIM0001")
	if got := query(t, s, "host-serial:SIM0001:get-state"); got != "FAIL001adevice 'SIM0001' not found" {
		t.Errorf("removed: %q", got)
	}
	// One device left: "any" works again.
	if got := query(t, s, "host:get-serialno"); got != "OKAY0007SIM0002" {
		t.Errorf("any after remove: %q", got)
	}
	if got := query(t, s, "host:disconnect:SIM0002"); got != "OKAY"+hex4("disconnected SIM0002") {
		t.Errorf("disconnect: %q", got)
	}
}

func TestServerKickMidCall(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"remove", "offline", "kick"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			dev := newFakeDevice(t, "SIM0001")
			s := startServer(t, dev)
			c := dialServer(t, s)
			c.request("host:transport:SIM0001")
			c.readN(4)
			c.request("shell,v2,raw:echo started; sleep 30")
			c.readN(4 + 5 + len("started\n"))
			start := time.Now()
			switch fault {
			case "remove":
				s.Remove("SIM0001")
			case "offline":
				s.SetState("SIM0001", StateOffline)
			case "kick":
				s.Kick("SIM0001")
			}
			rest, _ := io.ReadAll(c.r)
			if len(rest) != 0 || time.Since(start) > 3*time.Second {
				t.Errorf("after %s: %q after %v", fault, rest, time.Since(start))
			}
			if fault == "kick" {
				if got := query(t, s, "host-serial:SIM0001:get-state"); got != "OKAY0006device" {
					t.Errorf("after kick: %q", got)
				}
			}
		})
	}
}

func TestServerForward(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "127.0.0.1:5601")
	s := startServer(t, dev)
	c := dialServer(t, s)
	c.request("host:tport:serial:127.0.0.1:5601")
	c.readN(12)
	c.request("host:forward:tcp:0;tcp:23342")
	if got := c.readN(8); got != "OKAYOKAY" {
		t.Fatalf("forward: %q", got)
	}
	port := c.readAll()
	if len(port) < 5 {
		t.Fatalf("forward port reply %q", port)
	}
	local := "tcp:" + port[4:]
	resp, err := http.Get("http://127.0.0.1:" + port[4:] + "/status.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "echo GET /status.json " {
		t.Errorf("body %q", body)
	}
	if got, want := query(t, s, "host:list-forward"), "OKAY"+hex4("127.0.0.1:5601 "+local+" tcp:23342\n"); got != want {
		t.Errorf("list-forward %q, want %q", got, want)
	}
	if got := query(t, s, "host-serial:127.0.0.1:5601:forward:norebind:"+local+";tcp:1"); got != "FAIL001dcannot rebind existing socket" {
		t.Errorf("norebind: %q", got)
	}
	if got := query(t, s, "host:killforward:"+local); got != "OKAYOKAY" {
		t.Errorf("killforward: %q", got)
	}
	if got := query(t, s, "host:killforward:"+local); got != "FAIL"+hex4("listener '"+local+"' not found") {
		t.Errorf("killforward again: %q", got)
	}
	if got := query(t, s, "host-serial:127.0.0.1:5601:forward:tcp:0;tcp:23342"); !strings.HasPrefix(got, "OKAYOKAY0005") {
		t.Errorf("host-serial forward: %q", got)
	}
	if got := query(t, s, "host:killforward-all"); got != "OKAYOKAY" {
		t.Errorf("killforward-all: %q", got)
	}
	if got := query(t, s, "host:list-forward"); got != "OKAY0000" {
		t.Errorf("list after kill-all: %q", got)
	}
}

func TestServerTrackAndWait(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	s := startServer(t, dev)
	track := dialServer(t, s)
	track.request("host:track-devices")
	if got := track.readN(4 + 4 + len("SIM0001\tdevice\n")); got != "OKAY000fSIM0001\tdevice\n" {
		t.Fatalf("track: %q", got)
	}
	s.SetState("SIM0001", StateOffline)
	if got := track.readN(4 + len("SIM0001\toffline\n")); got != "0010SIM0001\toffline\n" {
		t.Fatalf("track change: %q", got)
	}

	wait := dialServer(t, s)
	wait.request("host-serial:SIM0001:wait-for-any-device")
	if got := wait.readN(4); got != "OKAY" {
		t.Fatalf("wait: %q", got)
	}
	time.Sleep(50 * time.Millisecond)
	s.SetState("SIM0001", StateDevice)
	if got := wait.readAll(); got != "OKAY" {
		t.Errorf("wait second reply %q", got)
	}
	if got := track.readN(4 + len("SIM0001\tdevice\n")); got != "000fSIM0001\tdevice\n" {
		t.Fatalf("track change back: %q", got)
	}
}

func TestServerKill(t *testing.T) {
	t.Parallel()
	s := startServer(t, newFakeDevice(t, "SIM0001"))
	if got := query(t, s, "host:kill"); got != "OKAY" {
		t.Fatalf("kill: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			return
		}
		nc.Close()
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("server still listening after host:kill")
}

func TestSplitSerial(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, serial, cmd string }{
		{"127.0.0.1:5601:features", "127.0.0.1:5601", "features"},
		{"SIM0001:forward:tcp:0;tcp:23342", "SIM0001", "forward:tcp:0;tcp:23342"},
		{"127.0.0.1:5601:forward:tcp:0;tcp:1", "127.0.0.1:5601", "forward:tcp:0;tcp:1"},
		{"tcp:host:5555:get-state", "tcp:host:5555", "get-state"},
		{"[::1]:5555:get-state", "[::1]:5555", "get-state"},
		{"emulator-5554:get-state", "emulator-5554", "get-state"},
	}
	for _, tc := range tests {
		serial, cmd, ok := splitSerial(tc.in)
		if !ok || serial != tc.serial || cmd != tc.cmd {
			t.Errorf("splitSerial(%q) = %q, %q, %v", tc.in, serial, cmd, ok)
		}
	}
}
