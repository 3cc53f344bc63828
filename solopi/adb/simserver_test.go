package adb

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/adbd"
)

// The adb server of these tests is the simulator's adb-server front
// (sim/adbd: the smart-socket protocol of port 5037) hosting simulated
// phones (their mvdan.cc/sh shell and file system). Between our client and
// it sits link, a TCP proxy that can damage the connection the way a real
// link or a dying server does; wire_test.go pins our bytes against those
// captured from Debian's adb.

// simServer is a simulated farm behind its adb-server front, reached
// through a link.
type simServer struct {
	farm *sim.Farm
	link *link
}

// newSimServer starts n simulated phones (serials from serials, or
// sim-0001…) behind the adb-server front.
func newSimServer(t *testing.T, serials ...string) *simServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := max(1, len(serials))
	f, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: n, TimeScale: 50, NoAdbd: true,
		Configure: func(i int, o *sim.Options) {
			if i < len(serials) {
				o.Serial = serials[i]
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &simServer{farm: f, link: newLink(t, f.Server().Addr())}
}

func (s *simServer) server() *adbd.Server { return s.farm.Server() }

func (s *simServer) device(serial string) *sim.Device {
	d, ok := s.farm.Device(serial)
	if !ok {
		panic("no simulated device " + serial)
	}
	return d
}

func (s *simServer) client(t testing.TB, opts ...option) *Client {
	t.Helper()
	c, err := NewClient(append([]option{WithPort(s.link.port()), WithoutServerStart()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// link is a loopback TCP proxy in front of an adb server.
type link struct {
	t      testing.TB
	ln     net.Listener
	target string

	mu sync.Mutex
	// split writes what the server sends in odd-sized pieces with pauses,
	// so the client's reads see packets split at arbitrary points.
	split bool
	// stall holds back everything the server sends.
	stall bool
	// cut, when set, ends the next connection after that many bytes from
	// the server, calling onCut first (with both sides still open).
	cut   int
	onCut func()
	wg    sync.WaitGroup
}

func newLink(t testing.TB, target string) *link {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &link{t: t, ln: ln, target: target}
	l.wg.Add(1)
	go l.accept()
	t.Cleanup(func() { ln.Close(); l.wg.Wait() })
	return l
}

func (l *link) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

func (l *link) set(fn func(l *link)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(l)
}

// cutNext ends the next connection after n bytes from the server; onCut
// runs just before.
func (l *link) cutNext(n int, onCut func()) {
	l.set(func(l *link) { l.cut, l.onCut = n, onCut })
}

func (l *link) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.serve(c)
		}()
	}
}

// serve proxies one connection. The damage settings are taken when the
// client sends its first bytes, so a bare connect (the client checking
// that the server is alive) does not use them up.
func (l *link) serve(c net.Conn) {
	defer c.Close()
	first := make([]byte, 4096)
	n, err := c.Read(first)
	if err != nil {
		return
	}
	up, err := net.Dial("tcp", l.target)
	if err != nil {
		return
	}
	defer up.Close()
	l.mu.Lock()
	cut, onCut := l.cut, l.onCut
	l.cut, l.onCut = 0, nil
	l.mu.Unlock()
	if _, err := up.Write(first[:n]); err != nil {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		_, _ = io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
	}()
	l.relay(c, up, cut, onCut)
}

// relay copies the server's bytes to the client, damaged as configured;
// the caller closes both.
func (l *link) relay(c, up net.Conn, cut int, onCut func()) {
	buf := make([]byte, 32<<10)
	sent := 0
	for {
		n, err := up.Read(buf)
		b := buf[:n]
		if cut > 0 && sent+len(b) >= cut {
			b = b[:cut-sent]
			_ = l.write(c, b)
			if onCut != nil {
				onCut()
			}
			return
		}
		for {
			l.mu.Lock()
			stall := l.stall
			l.mu.Unlock()
			if !stall {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if werr := l.write(c, b); werr != nil {
			return
		}
		sent += len(b)
		if err != nil {
			c.(*net.TCPConn).CloseWrite()
			return
		}
	}
}

func (l *link) write(c net.Conn, b []byte) error {
	l.mu.Lock()
	split := l.split
	l.mu.Unlock()
	if !split {
		_, err := c.Write(b)
		return err
	}
	sizes := []int{1, 2, 3, 5, 7, 11, 4096, 1, 999}
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), sizes[i%len(sizes)])
		if _, err := c.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if i%4 == 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
	return nil
}

// tportReply is what the server sends for host:tport:serial (OKAY and the
// transport id) and the service's OKAY: the bytes before a service's own.
const tportReply = 12 + 4

// shellCmd renders a command that prints s with no newline translation.
func shellCmd(s string) string { return fmt.Sprintf("printf %%s '%s'", s) }
