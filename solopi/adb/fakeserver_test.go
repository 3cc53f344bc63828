package adb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

// fakeServer is a scripted adb server (the 5037 side) on 127.0.0.1:0. It
// answers host services from a device table with the exact reply bytes
// captured from Debian's adb 29.0.6 and runs device services (shell v2/v1,
// exec, sync, tcp:) against in-memory devices. Hooks let a test take over a
// connection to inject faults.
type fakeServer struct {
	t  testing.TB
	ln net.Listener

	mu       sync.Mutex
	devices  []*fakeDevice
	requests []string // every request string received, in order
	// hostHook, when set, sees each first request and may handle it.
	hostHook func(fc *fakeConn, req string) bool
	wg       sync.WaitGroup
}

type fakeFile struct {
	data  []byte
	mode  uint32
	mtime uint32
}

type fakeDevice struct {
	serial, state          string
	product, model, device string
	features               []string
	tid                    uint64
	shell                  func(cmd string) (stdout, stderr []byte, code int)
	exec                   func(cmd string) []byte
	tcp                    map[int]string // device port -> host address
	splitWrites            bool           // write replies a few bytes at a time
	serviceHook            func(fc *fakeConn, service string) bool
	mu                     sync.Mutex
	files                  map[string]*fakeFile
	chunks                 []int // DATA chunk sizes received by SEND
}

func newFakeServer(t testing.TB, devs ...*fakeDevice) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, ln: ln, devices: devs}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *fakeServer) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(append([]Option{WithPort(s.port()), WithoutServerStart()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *fakeServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(&fakeConn{Conn: c, br: bufio.NewReader(c)})
		}()
	}
}

func (s *fakeServer) setDevices(devs ...*fakeDevice) {
	s.mu.Lock()
	s.devices = devs
	s.mu.Unlock()
}

func (s *fakeServer) removeDevice(serial string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range s.devices {
		if d.serial == serial {
			s.devices = append(s.devices[:i:i], s.devices[i+1:]...)
			return
		}
	}
}

func (s *fakeServer) reqLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// fakeConn is the server end of one client connection.
type fakeConn struct {
	net.Conn
	br    *bufio.Reader
	split bool
}

func (fc *fakeConn) readReq() (string, error) {
	var h [4]byte
	if _, err := io.ReadFull(fc.br, h[:]); err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(fc.br, b)
	return string(b), err
}

func (fc *fakeConn) write(b []byte) error {
	if !fc.split {
		_, err := fc.Conn.Write(b)
		return err
	}
	// Writes of odd sizes (1 byte to 4 KiB) with pauses, so the client's
	// reads see packets split at arbitrary points, as after the server
	// relays transport messages.
	sizes := []int{1, 2, 3, 5, 7, 11, 4096, 1, 999}
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), sizes[i%len(sizes)])
		if _, err := fc.Conn.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if i%4 == 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
	return nil
}

func (fc *fakeConn) okay()               { fc.write([]byte("OKAY")) }
func (fc *fakeConn) fail(msg string)     { fc.write(fmt.Appendf(nil, "FAIL%04x%s", len(msg), msg)) }
func (fc *fakeConn) okayData(msg string) { fc.write(fmt.Appendf(nil, "OKAY%04x%s", len(msg), msg)) }

func (s *fakeServer) find(serial string) *fakeDevice {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.serial == serial {
			return d
		}
	}
	return nil
}

const unauthorizedMsg = "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\nTry 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device."

// usable returns the device if it can carry services, else writes the FAIL
// the real server sends.
func (s *fakeServer) usable(fc *fakeConn, serial string) *fakeDevice {
	d := s.find(serial)
	switch {
	case d == nil:
		fc.fail("device '" + serial + "' not found")
	case d.state == "offline":
		fc.fail("device offline")
	case d.state == "unauthorized":
		fc.fail(unauthorizedMsg)
	default:
		return d
	}
	return nil
}

func (s *fakeServer) serve(fc *fakeConn) {
	req, err := fc.readReq()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	hook := s.hostHook
	s.mu.Unlock()
	if hook != nil && hook(fc, req) {
		return
	}
	switch {
	case req == "host:version":
		fc.okayData("0029")
	case req == "host:devices-l":
		var b strings.Builder
		s.mu.Lock()
		for _, d := range s.devices {
			fmt.Fprintf(&b, "%-22s %s", d.serial, d.state)
			if d.state == "device" {
				fmt.Fprintf(&b, " product:%s model:%s device:%s", d.product, d.model, d.device)
			}
			fmt.Fprintf(&b, " transport_id:%d\n", d.tid)
		}
		s.mu.Unlock()
		fc.okayData(b.String())
	case strings.HasPrefix(req, "host:connect:"):
		addr := strings.TrimPrefix(req, "host:connect:")
		if s.find(addr) != nil {
			fc.okayData("already connected to " + addr)
		} else {
			fc.okayData("failed to connect to '" + addr + "': Connection refused")
		}
	case strings.HasPrefix(req, "host:disconnect:"):
		addr := strings.TrimPrefix(req, "host:disconnect:")
		if s.find(addr) == nil {
			fc.fail("no such device '" + addr + "'")
			return
		}
		s.removeDevice(addr)
		fc.okayData("disconnected " + addr)
	case strings.HasPrefix(req, "host-serial:") && strings.HasSuffix(req, ":get-state"):
		serial := strings.TrimSuffix(strings.TrimPrefix(req, "host-serial:"), ":get-state")
		if d := s.usable(fc, serial); d != nil {
			fc.okayData(d.state)
		}
	case strings.HasPrefix(req, "host-serial:") && strings.HasSuffix(req, ":features"):
		serial := strings.TrimSuffix(strings.TrimPrefix(req, "host-serial:"), ":features")
		if d := s.usable(fc, serial); d != nil {
			fc.okayData(strings.Join(d.features, ","))
		}
	case strings.HasPrefix(req, "host-serial:") && strings.Contains(req, ":forward:"):
		serial, spec, _ := strings.Cut(strings.TrimPrefix(req, "host-serial:"), ":forward:")
		if d := s.usable(fc, serial); d != nil {
			local, _, _ := strings.Cut(spec, ";")
			if local == "tcp:1" {
				fc.okay()
				fc.fail("cannot rebind existing socket")
				return
			}
			fc.write([]byte("OKAYOKAY"))
			port := strings.TrimPrefix(local, "tcp:")
			if port == "0" {
				port = "42315"
			}
			fc.write(fmt.Appendf(nil, "%04x%s", len(port), port))
		}
	case strings.HasPrefix(req, "host-serial:") && strings.Contains(req, ":killforward:"):
		fc.write([]byte("OKAYOKAY"))
	case strings.HasPrefix(req, "host:tport:serial:"):
		d := s.usable(fc, strings.TrimPrefix(req, "host:tport:serial:"))
		if d == nil {
			return
		}
		var id [12]byte
		copy(id[:], "OKAY")
		binary.LittleEndian.PutUint64(id[4:], d.tid)
		fc.write(id[:])
		s.service(fc, d)
	case strings.HasPrefix(req, "host:transport:"):
		d := s.usable(fc, strings.TrimPrefix(req, "host:transport:"))
		if d == nil {
			return
		}
		fc.okay()
		s.service(fc, d)
	default:
		fc.fail("unknown host service")
	}
}

func (s *fakeServer) service(fc *fakeConn, d *fakeDevice) {
	svc, err := fc.readReq()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, svc)
	s.mu.Unlock()
	fc.split = d.splitWrites
	if d.serviceHook != nil && d.serviceHook(fc, svc) {
		return
	}
	switch {
	case strings.HasPrefix(svc, "shell,v2,raw:"):
		fc.okay()
		var cs [5]byte
		if _, err := io.ReadFull(fc.br, cs[:]); err != nil || cs != [5]byte{4, 0, 0, 0, 0} {
			s.t.Errorf("fake: expected close-stdin packet, got %x (%v)", cs, err)
			return
		}
		out, errOut, code := d.shell(strings.TrimPrefix(svc, "shell,v2,raw:"))
		var b []byte
		b = appendShellPacket(b, adbwire.ShellStdout, out)
		b = appendShellPacket(b, adbwire.ShellStderr, errOut)
		b = appendShellPacket(b, adbwire.ShellExit, []byte{byte(code)})
		fc.write(b)
	case strings.HasPrefix(svc, "shell:"):
		fc.okay()
		out, errOut, _ := d.shell(strings.TrimPrefix(svc, "shell:"))
		fc.write(append(out, errOut...))
	case strings.HasPrefix(svc, "exec:"):
		fc.okay()
		fc.write(d.exec(strings.TrimPrefix(svc, "exec:")))
	case svc == "sync:":
		fc.okay()
		d.serveSync(s.t, fc)
	case strings.HasPrefix(svc, "tcp:"):
		port, _ := strconv.Atoi(strings.TrimPrefix(svc, "tcp:"))
		addr, ok := d.tcp[port]
		if !ok {
			fc.fail("closed")
			return
		}
		up, err := net.Dial("tcp", addr)
		if err != nil {
			fc.fail("closed")
			return
		}
		defer up.Close()
		fc.okay()
		done := make(chan struct{})
		go func() { io.Copy(fc.Conn, up); fc.Conn.(*net.TCPConn).CloseWrite(); close(done) }()
		io.Copy(up, fc.br)
		up.(*net.TCPConn).CloseWrite()
		<-done
	default:
		fc.fail("closed")
	}
}

func appendShellPacket(b []byte, id byte, data []byte) []byte {
	if len(data) == 0 && id != adbwire.ShellExit {
		return b
	}
	b = append(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func syncMsg(id string, n uint32, data []byte) []byte {
	b := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], n)
	return append(b, data...)
}

// serveSync implements STAT, STA2, LIST, SEND, RECV and QUIT on d.files.
func (d *fakeDevice) serveSync(t testing.TB, fc *fakeConn) {
	le := binary.LittleEndian
	for {
		var h [8]byte
		if _, err := io.ReadFull(fc.br, h[:]); err != nil {
			return
		}
		id, n := string(h[:4]), le.Uint32(h[4:])
		if id == "QUIT" {
			return
		}
		if n > 1024 {
			fc.write(syncMsg("FAIL", 14, []byte("path too long!")))
			return
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(fc.br, p); err != nil {
			return
		}
		path := string(p)
		d.mu.Lock()
		f := d.files[path]
		d.mu.Unlock()
		switch id {
		case "STAT":
			b := syncMsg("STAT", 0, make([]byte, 8))
			if f != nil {
				le.PutUint32(b[4:], f.mode)
				le.PutUint32(b[8:], uint32(len(f.data)))
				le.PutUint32(b[12:], f.mtime)
			}
			fc.write(b)
		case "STA2":
			b := syncMsg("STA2", 0, make([]byte, 64))
			if f == nil {
				le.PutUint32(b[4:], 2) // ENOENT
			} else {
				le.PutUint32(b[8+16:], f.mode)
				le.PutUint32(b[8+20:], 1)
				le.PutUint64(b[8+32:], uint64(len(f.data)))
				le.PutUint64(b[8+48:], uint64(f.mtime))
			}
			fc.write(b)
		case "LIST":
			var b []byte
			d.mu.Lock()
			for _, name := range []string{".", ".."} {
				b = append(b, syncMsg("DENT", 0o40755, make([]byte, 12))...)
				le.PutUint32(b[len(b)-4:], uint32(len(name)))
				b = append(b, name...)
			}
			for fp, ff := range d.files {
				if dir, name, ok := strings.Cut(strings.TrimPrefix(fp, path), "/"); ok && dir == "" && !strings.Contains(name, "/") && strings.HasPrefix(fp, path) {
					e := syncMsg("DENT", ff.mode, make([]byte, 12))
					le.PutUint32(e[8:], uint32(len(ff.data)))
					le.PutUint32(e[12:], ff.mtime)
					le.PutUint32(e[16:], uint32(len(name)))
					b = append(append(b, e...), name...)
				}
			}
			d.mu.Unlock()
			fc.write(append(b, syncMsg("DONE", 0, make([]byte, 12))...))
		case "RECV":
			if f == nil {
				msg := "open failed: No such file or directory"
				fc.write(syncMsg("FAIL", uint32(len(msg)), []byte(msg)))
				continue
			}
			var b []byte
			for off := 0; off < len(f.data); off += adbwire.SyncDataMax {
				chunk := f.data[off:min(off+adbwire.SyncDataMax, len(f.data))]
				b = append(b, syncMsg("DATA", uint32(len(chunk)), chunk)...)
			}
			fc.write(append(b, syncMsg("DONE", 0, nil)...))
		case "SEND":
			i := strings.LastIndexByte(path, ',')
			mode, _ := strconv.ParseUint(path[i+1:], 10, 32)
			path = path[:i]
			if strings.HasPrefix(path, "/readonly/") {
				// Like adbd: FAIL at once and hang up without draining.
				msg := "couldn't create file: Permission denied"
				fc.write(syncMsg("FAIL", uint32(len(msg)), []byte(msg)))
				return
			}
			nf := &fakeFile{mode: uint32(mode)}
			for {
				if _, err := io.ReadFull(fc.br, h[:]); err != nil {
					return
				}
				id, n := string(h[:4]), le.Uint32(h[4:])
				if id == "DONE" {
					nf.mtime = n
					break
				}
				if id != "DATA" || n > adbwire.SyncDataMax {
					t.Errorf("fake: bad SEND packet %q len %d", id, n)
					return
				}
				chunk := make([]byte, n)
				if _, err := io.ReadFull(fc.br, chunk); err != nil {
					return
				}
				nf.data = append(nf.data, chunk...)
				d.mu.Lock()
				d.chunks = append(d.chunks, int(n))
				d.mu.Unlock()
			}
			d.mu.Lock()
			if d.files == nil {
				d.files = map[string]*fakeFile{}
			}
			d.files[path] = nf
			d.mu.Unlock()
			fc.write(syncMsg("OKAY", 0, nil))
		default:
			t.Errorf("fake: unexpected sync request %q", id)
			return
		}
	}
}

// phone returns a ready device with shell_v2 and stat_v2 whose shell
// understands "echo X", "exit N" and writes "err" to stderr for "warn".
func phone(serial string) *fakeDevice {
	return &fakeDevice{
		serial: serial, state: "device", product: "simphone", model: "SimPhone", device: "sim", tid: 1,
		features: []string{"shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir"},
		shell:    scriptShell,
		exec:     func(cmd string) []byte { return []byte("exec:" + cmd) },
		files:    map[string]*fakeFile{},
	}
}

// scriptShell is a toy `sh -c`: commands separated by "; ".
func scriptShell(cmd string) (stdout, stderr []byte, code int) {
	for _, part := range strings.Split(cmd, "; ") {
		switch f := strings.Fields(part); {
		case len(f) == 0:
		case f[0] == "echo":
			stdout = append(stdout, strings.Join(f[1:], " ")+"\n"...)
		case f[0] == "warn":
			stderr = append(stderr, strings.Join(f[1:], " ")+"\n"...)
		case f[0] == "exit":
			n, _ := strconv.Atoi(f[1])
			return stdout, stderr, n
		case f[0] == "true":
		default:
			stderr = append(stderr, "sh: "+f[0]+": not found\n"...)
			code = 127
		}
	}
	return stdout, stderr, code
}
