package adbd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

// State is a device's connection state as the adb server reports it.
type State string

// States a simulated device can be put in for fault injection.
const (
	StateDevice       State = "device"
	StateOffline      State = "offline"
	stateUnauthorized State = "unauthorized"
	// stateRecovery is a device booted into recovery: listed, but not a
	// device a host runs its work on.
	stateRecovery State = "recovery"
)

// serverVersion is ADB_SERVER_VERSION 41, which Debian's 29.0.6 and current
// platform-tools both report.
const serverVersion = "0029"

// hostFeatures is what Debian's adb 29.0.6 server answers to
// host:host-features (captured).
const hostFeatures = "push_sync,remount_shell,abb_exec,abb,apex,fixed_push_mkdir,ls_v2,stat_v2,fixed_push_symlink_timestamp,cmd,shell_v2"

// unauthorizedText is adb's FAIL text for an unauthorized device, with
// $ADB_VENDOR_KEYS unset.
const unauthorizedText = "device unauthorized.\n" +
	"This adb server's $ADB_VENDOR_KEYS is not set\n" +
	"Try 'adb kill-server' if that seems wrong.\n" +
	"Otherwise check for a confirmation dialog on your device."

// Server is a fake adb server: it speaks the smart-socket protocol of port
// 5037 for simulated devices directly, without a transport in between, so
// a Go adb client can be tested without the adb binary.
type Server struct {
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	devs     map[string]*serverDevice
	nextID   uint64
	changed  chan struct{} // closed and replaced on every device list change
	forwards []*forward
}

// serverDevice is a device registered with the Server.
type serverDevice struct {
	dev   Device
	id    uint64 // transport id
	state State
	// session ends every connection bound to the device; it is cancelled
	// when the device leaves the "device" state, is kicked or removed, the
	// way the real server closes a transport's sockets.
	session context.Context
	end     context.CancelFunc
}

// ListenServer starts a fake adb server on addr (use "127.0.0.1:0") hosting
// devs, all in state "device". It stops when ctx is done or Close is called.
func ListenServer(ctx context.Context, addr string, devs ...Device) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("adbd: server listen %s: %w", addr, err)
	}
	s := &Server{
		ln:      ln,
		devs:    make(map[string]*serverDevice),
		changed: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	for _, d := range devs {
		if err := s.Add(d); err != nil {
			ln.Close()
			s.cancel()
			return nil, err
		}
	}
	context.AfterFunc(s.ctx, func() { s.ln.Close() })
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the listening port, for ANDROID_ADB_SERVER_PORT or `adb -P`.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server, closes every connection and forward listener and
// waits for their goroutines.
func (s *Server) Close() error {
	s.cancel()
	s.mu.Lock()
	fwds := s.forwards
	s.forwards = nil
	for _, d := range s.devs {
		d.end()
	}
	s.mu.Unlock()
	for _, f := range fwds {
		f.ln.Close()
	}
	s.wg.Wait()
	return nil
}

// Add registers a device in state "device" with the next transport id.
func (s *Server) Add(dev Device) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	serial := dev.Serial()
	if serial == "" {
		return errors.New("adbd: device with empty serial")
	}
	if _, dup := s.devs[serial]; dup {
		return fmt.Errorf("adbd: device %q already added", serial)
	}
	s.nextID++
	d := &serverDevice{dev: dev, id: s.nextID, state: StateDevice}
	d.session, d.end = context.WithCancel(s.ctx)
	s.devs[serial] = d
	s.notifyLocked()
	return nil
}

// Remove takes a device away as if it were unplugged: its connections
// break mid-call, its forwards go, and later requests get "not found".
func (s *Server) Remove(serial string) error {
	s.mu.Lock()
	d := s.devs[serial]
	if d == nil {
		s.mu.Unlock()
		return fmt.Errorf("adbd: remove %q: no such device", serial)
	}
	delete(s.devs, serial)
	d.end()
	var gone []*forward
	s.forwards = slices.DeleteFunc(s.forwards, func(f *forward) bool {
		if f.dev == d {
			gone = append(gone, f)
			return true
		}
		return false
	})
	s.notifyLocked()
	s.mu.Unlock()
	for _, f := range gone {
		f.ln.Close()
	}
	return nil
}

// SetState changes a device's state. Leaving "device" breaks its current
// connections, like a transport going offline does.
func (s *Server) SetState(serial string, st State) error {
	switch st {
	case StateDevice, StateOffline, stateUnauthorized, stateRecovery:
	default:
		return fmt.Errorf("adbd: unsupported state %q", st)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devs[serial]
	if d == nil {
		return fmt.Errorf("adbd: set state of %q: no such device", serial)
	}
	if d.state == st {
		return nil
	}
	if st != StateDevice {
		d.end()
	} else {
		d.session, d.end = context.WithCancel(s.ctx)
	}
	d.state = st
	s.notifyLocked()
	return nil
}

// Kick breaks the device's current connections without changing its state:
// a call in flight fails, the next one works.
func (s *Server) Kick(serial string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devs[serial]
	if d == nil {
		return fmt.Errorf("adbd: kick %q: no such device", serial)
	}
	d.end()
	if d.state == StateDevice {
		d.session, d.end = context.WithCancel(s.ctx)
	}
	return nil
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// bufConn reads through the buffered reader that parsed the requests, so no
// byte the client sent right after a request is lost, and writes directly.
type bufConn struct {
	*bufio.Reader
	net.Conn
}

func (b bufConn) Read(p []byte) (int, error) { return b.Reader.Read(p) }

// serveConn serves one client connection: one host request, or a transport
// switch followed by one more request.
func (s *Server) serveConn(nc net.Conn) {
	defer s.closeConn(nc)
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	c := bufConn{bufio.NewReader(nc), nc}
	req, err := adbwire.ReadHex4(c)
	if err != nil {
		return
	}
	// Errors here only mean the client went away or a service ended
	// abnormally; the client has already seen the consequence.
	_ = s.dispatch(ctx, c, string(req), nil)
}

// lingerTimeout bounds how long a finished connection waits for the client
// to close its end (see closeConn).
const lingerTimeout = 500 * time.Millisecond

// closeConn ends a client connection without turning the close into a
// reset. The client may still have bytes in flight that no service reads,
// typically the shell close-stdin packet, which a command that ignores its
// input (logcat -d) never waits for. Closing a socket with unread input
// makes the kernel answer RST, and the client then loses the part of the
// output it has not read yet ("connection reset by peer" in the middle of
// a large logcat). The real adb server always reads its clients, so it
// never resets them. Here the front half-closes first (FIN after the last
// output byte), discards what the client still sends until the client
// closes its end, at most lingerTimeout and never past Close, then closes.
func (s *Server) closeConn(nc net.Conn) {
	defer nc.Close()
	cw, ok := nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return // not TCP, or already closed (a dropped device session)
	}
	if nc.SetReadDeadline(time.Now().Add(lingerTimeout)) != nil {
		return
	}
	stop := context.AfterFunc(s.ctx, func() { nc.SetReadDeadline(time.Now()) })
	defer stop()
	_, _ = io.Copy(io.Discard, nc)
}

// dispatch serves one request. bound is the device selected by an earlier
// transport switch on this connection, if any.
func (s *Server) dispatch(ctx context.Context, c bufConn, req string, bound *serverDevice) error {
	if sel, tport, ok := parseTransportSwitch(req); ok {
		d, msg := s.acquire(sel, false)
		if d == nil {
			return adbwire.WriteFail(c, msg)
		}
		reply := []byte(adbwire.StatusOkay)
		if tport {
			reply = adbwire.AppendTransportID(reply, d.id)
		}
		if _, err := c.Write(reply); err != nil {
			return err
		}
		next, err := adbwire.ReadHex4(c)
		if err != nil {
			return nil
		}
		// From here on the connection belongs to the device and dies with
		// its session.
		// The socket closes before the service is cancelled, so nothing a
		// dying command still writes (an exit code) reaches the client:
		// it sees the connection break, as when a real transport drops.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(d.sessionContext(s), func() {
			c.Conn.Close()
			cancel()
		})
		defer stop()
		return s.dispatch(ctx, c, string(next), d)
	}
	if sel, cmd, ok := parseHostRequest(req); ok {
		if bound != nil && sel.kind == selAny {
			sel = selector{kind: selID, id: bound.id}
		}
		return s.hostCommand(ctx, c, sel, cmd)
	}
	if bound == nil {
		return adbwire.WriteFail(c, "unknown host service")
	}
	return s.deviceService(ctx, c, bound, req)
}

func (d *serverDevice) sessionContext(s *Server) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.session
}

// deviceService opens a service on the device. A refusal reaches the client
// as FAIL "closed", exactly what the real server relays for a device CLSE.
func (s *Server) deviceService(ctx context.Context, c bufConn, d *serverDevice, name string) error {
	svc, err := openService(ctx, d.dev, name)
	if err != nil {
		return adbwire.WriteFail(c, "closed")
	}
	if err := adbwire.WriteOkay(c); err != nil {
		svc(canceledContext(), eofReadWriter{})
		return err
	}
	return svc(ctx, c)
}
