package adbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

func startAdbd(t *testing.T, dev Device, opts ...adbdOption) *Adbd {
	t.Helper()
	a, err := ListenAdbd(context.Background(), "127.0.0.1:0", dev, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// connectedHost starts an adbd for a fresh fake device and completes the
// handshake like Debian's adb 29 (version 0x01000001, 1 MiB).
func connectedHost(t *testing.T, opts ...adbdOption) (*testHost, *fakeDevice, *Adbd) {
	t.Helper()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev, opts...)
	h := dialHost(t, a.Addr())
	h.connect(versionSkipChecksum, maxPayload)
	return h, dev, a
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev)
	wantBanner := "device::ro.product.name=simphone;ro.product.model=SimPhone;ro.product.device=sim;features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir"

	tests := []struct {
		name                 string
		version, maxData     uint32
		wantVersion, wantMax uint32
		wantCheck            uint32
	}{
		{"adb29", versionSkipChecksum, 0x100000, versionSkipChecksum, 0x100000, 0},
		{"old host checksums", versionMin, 0x40000, versionMin, 0x40000, checksum([]byte(wantBanner))},
		{"newer host, bigger max", 0x01000002, 16 << 20, versionSkipChecksum, maxPayload, 0},
		{"tiny max", versionSkipChecksum, 4096, versionSkipChecksum, 4096, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := dialHost(t, a.Addr())
			m := h.connect(tc.version, tc.maxData)
			if m.Arg0 != tc.wantVersion || m.Arg1 != tc.wantMax {
				t.Errorf("CNXN(0x%x, 0x%x), want (0x%x, 0x%x)", m.Arg0, m.Arg1, tc.wantVersion, tc.wantMax)
			}
			if string(m.Data) != wantBanner {
				t.Errorf("banner %q, want %q", m.Data, wantBanner)
			}
			if m.DataCheck != tc.wantCheck {
				t.Errorf("data_check 0x%x, want 0x%x", m.DataCheck, tc.wantCheck)
			}
			// The negotiated checksum rule holds for stream traffic too.
			s, err := h.open("shell:echo hi")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.readAll(5 * time.Second); string(got) != "hi\n" {
				t.Errorf("output %q", got)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.badSums != 0 {
				t.Errorf("%d device messages with a wrong data_check", h.badSums)
			}
		})
	}
}

func TestAcceptsAnyChecksumAndNULVariants(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev)
	h := dialHost(t, a.Addr())
	// dadb-style banner with a trailing NUL and a garbage data_check.
	h.sendRaw(message{Command: cmdCNXN, Arg0: versionMin, Arg1: 4096, Data: []byte("host::\x00")}, 0xdeadbeef)
	m, ok := h.ctrlMessage(5 * time.Second)
	if !ok || m.Command != cmdCNXN {
		t.Fatalf("no CNXN: %v", m)
	}
	h.setVersion(m.Arg0)
	h.mu.Lock()
	h.nextID++
	s := &testStream{h: h, local: h.nextID, in: make(chan message, 64), autoAck: true}
	h.streams[s.local] = s
	h.mu.Unlock()
	h.sendRaw(message{Command: cmdOPEN, Arg0: s.local, Data: []byte("exec:echo ok\x00\x00")}, 0xdeadbeef)
	m, _ = s.next(5 * time.Second)
	if m.Command != cmdOKAY {
		t.Fatalf("OPEN answered %v", m)
	}
	s.remote = m.Arg0
	if got := s.readAll(5 * time.Second); string(got) != "ok\n" {
		t.Errorf("output %q", got)
	}
}

func TestStreamTrafficBeforeHandshakeIgnored(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev)
	h := dialHost(t, a.Addr())
	h.send(message{Command: cmdOPEN, Arg0: 1, Data: []byte("shell:echo hi\x00")})
	if m, ok := h.ctrlMessage(200 * time.Millisecond); ok {
		t.Fatalf("answer before CNXN: %v", m)
	}
	h.connect(versionSkipChecksum, maxPayload)
	if len(dev.commands()) != 0 {
		t.Errorf("command ran before handshake: %q", dev.commands())
	}
}

func TestShellV2(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	s, err := h.open("shell,v2,TERM=xterm,raw:echo out; echo err >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	s.write([]byte{adbwire.ShellCloseStdin, 0, 0, 0, 0})
	raw := s.readAll(5 * time.Second)
	want := "\x01\x04\x00\x00\x00out\n\x02\x04\x00\x00\x00err\n\x03\x01\x00\x00\x00\x03"
	if string(raw) != want {
		t.Errorf("raw output %q, want %q", raw, want)
	}
	// The server sends close-stdin and CLSE again after the device closed;
	// both must be ignored without harming the connection.
	s.h.send(message{Command: cmdWRTE, Arg0: s.local, Arg1: s.remote, Data: []byte{4, 0, 0, 0, 0}})
	s.close()
	s2, err := h.open("shell,v2,raw:echo again")
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := shellPackets(t, s2.readAll(5*time.Second))
	if string(out) != "again\n" || code != 0 {
		t.Errorf("second shell: %q exit %d", out, code)
	}
}

func TestShellV2StdinSplitAcrossMessages(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	s, err := h.open("shell,v2,raw:cat")
	if err != nil {
		t.Fatal(err)
	}
	input := pattern(200000)
	var stream []byte
	for off := 0; off < len(input); off += 30000 {
		stream = adbwire.AppendShellPacket(stream, adbwire.ShellStdin, input[off:min(off+30000, len(input))])
	}
	stream = adbwire.AppendShellPacket(stream, adbwire.ShellWindowSize, []byte("24x80,0x0\x00"))
	stream = adbwire.AppendShellPacket(stream, adbwire.ShellCloseStdin, nil)
	// Odd sizes put packet headers across message boundaries.
	s.writeSplit(stream, 1, 3, 7, 4093, 65537)
	out, errOut, code := shellPackets(t, s.readAll(10*time.Second))
	if !bytes.Equal(out, input) || len(errOut) != 0 || code != 0 {
		t.Errorf("cat: %d bytes out (equal=%v), stderr %q, exit %d", len(out), bytes.Equal(out, input), errOut, code)
	}
}

func TestShellV1ExecAndPty(t *testing.T) {
	t.Parallel()
	h, dev, _ := connectedHost(t)
	tests := []struct {
		service, want, cmd string
	}{
		{"shell:echo out; echo err >&2; exit 4", "out\nerr\n", "echo out; echo err >&2; exit 4"},
		{"exec:screencap '-p'", string(fakePNG), "screencap '-p'"},
		{"shell,v2,pty:echo a", "\x01\x03\x00\x00\x00a\r\n\x03\x01\x00\x00\x00\x00", "echo a"},
		{"shell,raw:echo x:y", "x:y\n", "echo x:y"},
		{"shellx:echo ignored-arg", "ignored-arg\n", "echo ignored-arg"},
	}
	for _, tc := range tests {
		s, err := h.open(tc.service)
		if err != nil {
			t.Fatalf("%s: %v", tc.service, err)
		}
		if got := s.readAll(5 * time.Second); string(got) != tc.want {
			t.Errorf("%s: got %q, want %q", tc.service, got, tc.want)
		}
		if cmds := dev.commands(); cmds[len(cmds)-1] != tc.cmd {
			t.Errorf("%s: device ran %q, want %q", tc.service, cmds[len(cmds)-1], tc.cmd)
		}
	}
}

func TestRefusedServices(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	for _, svc := range []string{"abb:activity\x00start", "bogus", "shell", "tcp:1", "tcp:23342:example.com", "tcp:x", "jdwp:1"} {
		if _, err := h.open(svc); err != errRefused {
			t.Errorf("%q: %v, want refused", svc, err)
		}
	}
	// Still healthy afterwards.
	s, err := h.open("exec:echo ok")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.readAll(5 * time.Second); string(got) != "ok\n" {
		t.Errorf("got %q", got)
	}
}

func TestUnknownIDsIgnored(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	h.send(message{Command: cmdOKAY, Arg0: 7, Arg1: 999})
	h.send(message{Command: cmdWRTE, Arg0: 7, Arg1: 999, Data: []byte("x")})
	h.send(message{Command: cmdCLSE, Arg0: 7, Arg1: 999})
	h.send(message{Command: cmdCLSE, Arg0: 0, Arg1: 0})
	h.send(message{Command: cmdOPEN, Arg0: 0, Data: []byte("shell:echo bad\x00")})
	if m, ok := h.ctrlMessage(200 * time.Millisecond); ok {
		t.Errorf("device answered stray message: %v", m)
	}
	s, err := h.open("exec:echo ok")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.readAll(5 * time.Second); string(got) != "ok\n" {
		t.Errorf("got %q", got)
	}
}

func TestFlowControl(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev)
	h := dialHost(t, a.Addr())
	h.connect(versionSkipChecksum, 4096)
	const total = 100000
	s, err := h.open(fmt.Sprintf("exec:blob %d", total))
	if err != nil {
		t.Fatal(err)
	}
	s.autoAck = false
	for i := 0; i < 3; i++ {
		if !s.pump(5*time.Second, func() bool { return len(s.wrtes) == i+1 }) {
			t.Fatalf("WRTE %d did not arrive", i+1)
		}
		// Without our OKAY the device must stay quiet.
		if m, ok := s.next(150 * time.Millisecond); ok {
			t.Fatalf("device sent %v before the OKAY for WRTE %d", m, i+1)
		}
		s.ack()
	}
	s.autoAck = true
	got := s.readAll(10 * time.Second)
	if !bytes.Equal(got, pattern(total)) {
		t.Errorf("payload mismatch: %d bytes", len(got))
	}
	for i, n := range s.wrtes {
		if n > 4096 {
			t.Fatalf("WRTE %d has %d bytes over the negotiated 4096", i, n)
		}
	}
}

func TestLargeWritesUseMaxPayload(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	const total = 3_000_000
	s, err := h.open(fmt.Sprintf("exec:blob %d", total))
	if err != nil {
		t.Fatal(err)
	}
	got := s.readAll(20 * time.Second)
	if !bytes.Equal(got, pattern(total)) {
		t.Fatalf("payload mismatch: %d bytes", len(got))
	}
	for _, n := range s.wrtes {
		if n > int(maxPayload) {
			t.Fatalf("WRTE of %d bytes", n)
		}
	}
}

func TestConcurrentStreams(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	const n = 24
	streams := make([]*testStream, n)
	for i := range streams {
		s, err := h.open(fmt.Sprintf("shell,v2,raw:blob %d", 10000+i*7919))
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = s
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.pump(20*time.Second, func() bool { return s.closed }) {
				errs <- fmt.Errorf("stream %d not closed", i)
				return
			}
			s.close()
			out, _, code := shellPackets(t, s.data.Bytes())
			if !bytes.Equal(out, pattern(10000+i*7919)) || code != 0 {
				errs <- fmt.Errorf("stream %d: %d bytes exit %d", i, len(out), code)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTCPService(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	s, err := h.open("tcp:23342")
	if err != nil {
		t.Fatal(err)
	}
	s.writeSplit([]byte("POST /status.json HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello"), 5, 9)
	got := string(s.readAll(5 * time.Second))
	if !strings.HasPrefix(got, "HTTP/1.0 200 OK") || !strings.HasSuffix(got, "echo POST /status.json hello") {
		t.Errorf("response %q", got)
	}
}

func TestDropMidCall(t *testing.T) {
	t.Parallel()
	h, _, a := connectedHost(t)
	s, err := h.open("shell,v2,raw:echo started; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	s.readN(5+len("started\n"), 5*time.Second)
	start := time.Now()
	a.Drop()
	if s.pump(5*time.Second, func() bool { return false }); !s.gone {
		t.Fatal("connection still alive after Drop")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("drop noticed after %v", d)
	}
	// A new connection works: the phone "comes back".
	h2 := dialHost(t, a.Addr())
	h2.connect(versionSkipChecksum, maxPayload)
	s2, err := h2.open("exec:echo back")
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.readAll(5 * time.Second); string(got) != "back\n" {
		t.Errorf("got %q", got)
	}
}

func TestOfflineRejectsConnections(t *testing.T) {
	t.Parallel()
	dev := newFakeDevice(t, "SIM0001")
	a := startAdbd(t, dev)
	a.SetOnline(false)
	// The connection is reset at once; depending on timing the dial itself
	// or the first read reports it.
	if nc, err := net.Dial("tcp", a.Addr()); err == nil {
		nc.Write(appendMessage(nil, message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)}, true))
		nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, err := nc.Read(make([]byte, 1)); n != 0 || err == nil || os.IsTimeout(err) {
			t.Fatalf("offline device: read %d bytes, err %v", n, err)
		}
		nc.Close()
	}
	a.SetOnline(true)
	h2 := dialHost(t, a.Addr())
	h2.connect(versionSkipChecksum, maxPayload)
}

func TestClientCloseStopsCommand(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	s, err := h.open("shell,v2,raw:sleep 30; echo never")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	s.close()
	// The device echoes CLSE (or had nothing to send); either way the
	// stream must be finished quickly and the command cancelled.
	if !s.pump(3*time.Second, func() bool { return s.closed }) {
		t.Fatal("no CLSE echo")
	}
	if bytes.Contains(s.data.Bytes(), []byte("never")) {
		t.Error("command kept running after CLSE")
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	t.Run("any", func(t *testing.T) {
		t.Parallel()
		a := startAdbd(t, newFakeDevice(t, "S"), withAuth(authAny))
		h := dialHost(t, a.Addr())
		h.send(message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)})
		m, _ := h.ctrlMessage(5 * time.Second)
		if m.Command != cmdAUTH || m.Arg0 != authToken || len(m.Data) != authTokenSize {
			t.Fatalf("want AUTH TOKEN, got %v", m)
		}
		h.send(message{Command: cmdAUTH, Arg0: authSignature, Data: make([]byte, 256)})
		if m, _ := h.ctrlMessage(5 * time.Second); m.Command != cmdCNXN {
			t.Fatalf("want CNXN after signature, got %v", m)
		}
	})
	t.Run("never", func(t *testing.T) {
		t.Parallel()
		a := startAdbd(t, newFakeDevice(t, "S"), withAuth(authNever))
		h := dialHost(t, a.Addr())
		h.send(message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)})
		if m, _ := h.ctrlMessage(5 * time.Second); m.Command != cmdAUTH {
			t.Fatalf("want AUTH, got %v", m)
		}
		h.send(message{Command: cmdAUTH, Arg0: authSignature, Data: make([]byte, 256)})
		if m, _ := h.ctrlMessage(5 * time.Second); m.Command != cmdAUTH || m.Arg0 != authToken {
			t.Fatalf("want another TOKEN, got %v", m)
		}
		h.send(message{Command: cmdAUTH, Arg0: authRSAPublicKey, Data: []byte("QAAAA... host\x00")})
		if m, ok := h.ctrlMessage(200 * time.Millisecond); ok {
			t.Fatalf("unauthorized device answered %v", m)
		}
	})
	t.Run("SetAuth applies to new handshakes", func(t *testing.T) {
		t.Parallel()
		a := startAdbd(t, newFakeDevice(t, "S"))
		a.SetAuth(authNever)
		h := dialHost(t, a.Addr())
		h.send(message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)})
		if m, _ := h.ctrlMessage(5 * time.Second); m.Command != cmdAUTH {
			t.Fatalf("want AUTH, got %v", m)
		}
	})
	t.Run("none ignores AUTH", func(t *testing.T) {
		t.Parallel()
		h, _, _ := connectedHost(t)
		h.send(message{Command: cmdAUTH, Arg0: authSignature, Data: make([]byte, 256)})
		s, err := h.open("exec:echo ok")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.readAll(5 * time.Second); string(got) != "ok\n" {
			t.Errorf("got %q", got)
		}
	})
}

func TestReconnectDropsStreams(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	s, err := h.open("shell,v2,raw:sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	h.send(message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)})
	if m, _ := h.ctrlMessage(5 * time.Second); m.Command != cmdCNXN {
		t.Fatalf("want CNXN, got %v", m)
	}
	// The old stream is gone: an OKAY for it is ignored, a new one works.
	h.send(message{Command: cmdOKAY, Arg0: s.local, Arg1: s.remote})
	s2, err := h.open("exec:echo ok")
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.readAll(5 * time.Second); string(got) != "ok\n" {
		t.Errorf("got %q", got)
	}
}

func TestEmulatorPortsRefused(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:5555", "127.0.0.1:5585", "127.0.0.1:5570"} {
		if _, err := ListenAdbd(context.Background(), addr, newFakeDevice(t, "S")); err == nil {
			t.Errorf("%s accepted", addr)
		}
	}
}

func TestOversizedMessageDropsConnection(t *testing.T) {
	t.Parallel()
	h, _, _ := connectedHost(t)
	hdr := appendHeader(nil, message{Command: cmdWRTE, Arg0: 1, Arg1: 1}, false)
	binary.LittleEndian.PutUint32(hdr[12:], maxPayload+1)
	h.nc.Write(hdr)
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("connection kept after oversized header")
	}
}
