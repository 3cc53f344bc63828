package adbd

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/adbwire"
)

// forward is one `adb forward` listener of the Server: each local
// connection opens the remote spec as a device service.
type forward struct {
	local  string // "tcp:<port>", resolved when the request said tcp:0
	remote string // a device service name, e.g. "tcp:23342"
	dev    *serverDevice
	ln     net.Listener
}

// forward serves forward:[norebind:]<local>;<remote>. The reply is OKAY
// (request accepted), OKAY (listener installed), then the bound port,
// which 29.0.6 sends for fixed ports too.
func (s *Server) forward(c bufConn, sel selector, spec string) error {
	norebind := false
	if rest, ok := strings.CutPrefix(spec, "norebind:"); ok {
		norebind, spec = true, rest
	}
	local, remote, ok := strings.Cut(spec, ";")
	if !ok || remote == "" {
		return adbwire.WriteFail(c, "bad forward: "+spec)
	}
	portStr, ok := strings.CutPrefix(local, "tcp:")
	port, err := strconv.Atoi(portStr)
	if !ok || err != nil || port < 0 || port > 65535 {
		return adbwire.WriteFail(c, "cannot bind listener: the simulator forwards tcp:<port> only, not "+local)
	}
	d, msg := s.acquire(sel, false)
	if d == nil {
		return adbwire.WriteFail(c, msg)
	}

	s.mu.Lock()
	if port != 0 {
		for _, f := range s.forwards {
			if f.local == local {
				if norebind {
					s.mu.Unlock()
					return adbwire.WriteFail(c, "cannot rebind existing socket")
				}
				// Rebinding keeps the listener and points it elsewhere.
				f.remote, f.dev = remote, d
				s.mu.Unlock()
				return writeOkayOkayPort(c, port)
			}
		}
	}
	s.mu.Unlock()

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", portStr))
	if err != nil {
		return adbwire.WriteFail(c, "cannot bind listener: "+err.Error())
	}
	port = ln.Addr().(*net.TCPAddr).Port
	f := &forward{local: "tcp:" + strconv.Itoa(port), remote: remote, dev: d, ln: ln}
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		ln.Close()
		return adbwire.WriteFail(c, "server shutting down")
	}
	s.forwards = append(s.forwards, f)
	s.wg.Add(1)
	s.mu.Unlock()
	go s.serveForward(f)
	return writeOkayOkayPort(c, port)
}

func writeOkayOkayPort(c bufConn, port int) error {
	_, err := c.Write(adbwire.AppendHex4([]byte(adbwire.StatusOkay+adbwire.StatusOkay), strconv.Itoa(port)))
	return err
}

// serveForward accepts local connections until the forward is removed.
func (s *Server) serveForward(f *forward) {
	defer s.wg.Done()
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		d, remote := f.dev, f.remote
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			if d.stateNow(s) != StateDevice {
				return // like the real server: the local client just sees a close
			}
			ctx, cancel := context.WithCancel(d.sessionContext(s))
			defer cancel()
			stop := context.AfterFunc(ctx, func() { nc.Close() })
			defer stop()
			svc, err := openService(ctx, d.dev, remote)
			if err != nil {
				return
			}
			svc(ctx, nc)
		}()
	}
}

// killForward removes one listener.
func (s *Server) killForward(c bufConn, local string) error {
	s.mu.Lock()
	var found *forward
	for i, f := range s.forwards {
		if f.local == local {
			found = f
			s.forwards = append(s.forwards[:i:i], s.forwards[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if found == nil {
		return adbwire.WriteFail(c, fmt.Sprintf("listener '%s' not found", local))
	}
	found.ln.Close()
	return writeOkayOkay(c)
}

// killForwardAll removes every listener, or only one device's when the
// request named a device.
func (s *Server) killForwardAll(c bufConn, sel selector) error {
	var only *serverDevice
	if sel.kind != selAny {
		d, msg := s.acquire(sel, true)
		if d == nil {
			return adbwire.WriteFail(c, msg)
		}
		only = d
	}
	s.mu.Lock()
	var keep, gone []*forward
	for _, f := range s.forwards {
		if only == nil || f.dev == only {
			gone = append(gone, f)
		} else {
			keep = append(keep, f)
		}
	}
	s.forwards = keep
	s.mu.Unlock()
	for _, f := range gone {
		f.ln.Close()
	}
	return writeOkayOkay(c)
}

// forwardList renders list-forward: "<serial> <local> <remote>\n" lines.
func (s *Server) forwardList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, f := range s.forwards {
		fmt.Fprintf(&b, "%s %s %s\n", f.dev.dev.Serial(), f.local, f.remote)
	}
	return b.String()
}

func writeOkayOkay(c bufConn) error {
	_, err := c.Write([]byte(adbwire.StatusOkay + adbwire.StatusOkay))
	return err
}
