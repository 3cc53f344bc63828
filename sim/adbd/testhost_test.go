package adbd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

// testHost is a hand-written adb-server side of the transport protocol,
// strict where the real server is: it checks magic and, when the version
// calls for it, the device's data_check.
type testHost struct {
	t  testing.TB
	nc net.Conn

	wmu     sync.Mutex
	version uint32 // negotiated; decides whether we checksum

	mu       sync.Mutex
	streams  map[uint32]*testStream
	nextID   uint32
	ctrl     chan message // CNXN, AUTH and messages for unknown ids
	readErr  error
	done     chan struct{}
	badSums  int // device messages whose data_check was wrong for the version
	received []message
}

const testHostBanner = "host::features=remount_shell,abb_exec,abb,apex,fixed_push_mkdir,ls_v2,stat_v2,fixed_push_symlink_timestamp,cmd,shell_v2"

func dialHost(t testing.TB, addr string) *testHost {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	h := &testHost{
		t: t, nc: nc, version: versionMin,
		streams: make(map[uint32]*testStream),
		ctrl:    make(chan message, 64),
		done:    make(chan struct{}),
	}
	t.Cleanup(func() { nc.Close(); <-h.done })
	go h.readLoop()
	return h
}

func (h *testHost) readLoop() {
	defer close(h.done)
	r := bufio.NewReader(h.nc)
	for {
		m, err := readMessage(r, 1<<24)
		if err != nil {
			h.mu.Lock()
			h.readErr = err
			for _, s := range h.streams {
				close(s.in)
			}
			h.streams = map[uint32]*testStream{}
			h.mu.Unlock()
			close(h.ctrl)
			return
		}
		h.mu.Lock()
		h.received = append(h.received, m)
		if m.Command != cmdCNXN && m.Command != cmdAUTH {
			want := uint32(0)
			if h.version < versionSkipChecksum {
				want = checksum(m.Data)
			}
			if m.DataCheck != want {
				h.badSums++
			}
		}
		s := h.streams[m.Arg1]
		h.mu.Unlock()
		if m.Command != cmdCNXN && m.Command != cmdAUTH && s != nil {
			s.in <- m
			continue
		}
		h.ctrl <- m
	}
}

func (h *testHost) send(m message) {
	h.t.Helper()
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if _, err := h.nc.Write(appendMessage(nil, m, h.version < versionSkipChecksum)); err != nil {
		h.t.Errorf("host send %s: %v", m, err)
	}
}

// sendRaw writes m with an arbitrary data_check.
func (h *testHost) sendRaw(m message, check uint32) {
	b := appendMessage(nil, m, false)
	binary.LittleEndian.PutUint32(b[16:], check)
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.nc.Write(b)
}

func (h *testHost) ctrlMessage(timeout time.Duration) (message, bool) {
	select {
	case m, ok := <-h.ctrl:
		return m, ok
	case <-time.After(timeout):
		return message{}, false
	}
}

// connect performs the handshake and returns the device's CNXN.
func (h *testHost) connect(version, maxData uint32) message {
	h.t.Helper()
	h.send(message{Command: cmdCNXN, Arg0: version, Arg1: maxData, Data: []byte(testHostBanner)})
	m, ok := h.ctrlMessage(5 * time.Second)
	if !ok || m.Command != cmdCNXN {
		h.t.Fatalf("expected CNXN, got %v (ok=%v)", m, ok)
	}
	h.setVersion(m.Arg0)
	return m
}

func (h *testHost) setVersion(v uint32) {
	h.wmu.Lock()
	h.mu.Lock()
	h.version = v
	h.mu.Unlock()
	h.wmu.Unlock()
}

var errRefused = errors.New("refused by device")

// open sends OPEN and waits for OKAY (accepted) or CLSE (refused).
func (h *testHost) open(service string) (*testStream, error) {
	h.t.Helper()
	h.mu.Lock()
	h.nextID++
	s := &testStream{h: h, local: h.nextID, in: make(chan message, 4096), autoAck: true}
	h.streams[s.local] = s
	h.mu.Unlock()
	h.send(message{Command: cmdOPEN, Arg0: s.local, Data: append([]byte(service), 0)})
	m, ok := s.next(5 * time.Second)
	switch {
	case !ok:
		return nil, errors.New("no answer to OPEN")
	case m.Command == cmdOKAY:
		s.remote = m.Arg0
		s.canWrite = true
		return s, nil
	case m.Command == cmdCLSE && m.Arg0 == 0:
		return nil, errRefused
	}
	return nil, errors.New("unexpected answer to OPEN: " + m.String())
}

// testStream is one stream of the testHost. It is driven by the test
// goroutine only: pump processes messages in order.
type testStream struct {
	h        *testHost
	local    uint32
	remote   uint32
	in       chan message
	data     bytes.Buffer
	canWrite bool
	closed   bool
	gone     bool // connection ended
	autoAck  bool
	wrtes    []int // sizes of WRTEs received
}

func (s *testStream) next(timeout time.Duration) (message, bool) {
	select {
	case m, ok := <-s.in:
		return m, ok
	case <-time.After(timeout):
		return message{}, false
	}
}

// handle applies one device message to the stream state.
func (s *testStream) handle(m message) {
	switch m.Command {
	case cmdWRTE:
		s.data.Write(m.Data)
		s.wrtes = append(s.wrtes, len(m.Data))
		if s.autoAck {
			s.ack()
		}
	case cmdOKAY:
		s.canWrite = true
	case cmdCLSE:
		s.closed = true
	}
}

func (s *testStream) ack() {
	s.h.send(message{Command: cmdOKAY, Arg0: s.local, Arg1: s.remote})
}

// pump handles messages until cond holds; false on timeout or connection end.
func (s *testStream) pump(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for !cond() {
		select {
		case m, ok := <-s.in:
			if !ok {
				s.gone = true
				return false
			}
			s.handle(m)
		case <-deadline:
			return false
		}
	}
	return true
}

// write sends p as one WRTE after the previous one was acknowledged.
func (s *testStream) write(p []byte) {
	s.h.t.Helper()
	if !s.pump(10*time.Second, func() bool { return s.canWrite || s.closed }) {
		s.h.t.Fatalf("stream %d: no OKAY for previous WRTE", s.local)
	}
	if s.closed {
		s.h.t.Fatalf("stream %d: closed by device while writing", s.local)
	}
	s.canWrite = false
	s.h.send(message{Command: cmdWRTE, Arg0: s.local, Arg1: s.remote, Data: p})
}

// writeSplit sends p in WRTEs of the given sizes, cycling through them.
func (s *testStream) writeSplit(p []byte, sizes ...int) {
	for i := 0; len(p) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(p))
		s.write(p[:n])
		p = p[n:]
	}
}

// readAll collects output until the device closes the stream, then echoes
// CLSE like the real server.
func (s *testStream) readAll(timeout time.Duration) []byte {
	s.h.t.Helper()
	if !s.pump(timeout, func() bool { return s.closed }) {
		s.h.t.Fatalf("stream %d: not closed by device (gone=%v) after %d bytes", s.local, s.gone, s.data.Len())
	}
	s.close()
	return s.data.Bytes()
}

// readN collects output until at least n bytes arrived.
func (s *testStream) readN(n int, timeout time.Duration) []byte {
	s.h.t.Helper()
	if !s.pump(timeout, func() bool { return s.data.Len() >= n || s.closed }) || s.data.Len() < n {
		s.h.t.Fatalf("stream %d: wanted %d bytes, have %d (closed=%v)", s.local, n, s.data.Len(), s.closed)
	}
	out := make([]byte, n)
	s.data.Read(out)
	return out
}

func (s *testStream) close() {
	s.h.send(message{Command: cmdCLSE, Arg0: s.local, Arg1: s.remote})
}

// shellPackets splits shell v2 output into stdout, stderr and exit code.
func shellPackets(t testing.TB, b []byte) (stdout, stderr []byte, exit int) {
	t.Helper()
	exit = -1
	r := bytes.NewReader(b)
	for {
		p, err := adbwire.ReadShellPacket(r)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("shell packets: %v", err)
		}
		switch p.ID {
		case adbwire.ShellStdout:
			stdout = append(stdout, p.Data...)
		case adbwire.ShellStderr:
			stderr = append(stderr, p.Data...)
		case adbwire.ShellExit:
			if len(p.Data) != 1 {
				t.Fatalf("exit packet with %d bytes", len(p.Data))
			}
			exit = int(p.Data[0])
		default:
			t.Fatalf("unexpected shell packet id %d", p.ID)
		}
	}
}
