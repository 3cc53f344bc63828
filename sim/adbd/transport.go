package adbd

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// transportConn is one host connection speaking the transport protocol.
type transportConn struct {
	a      *Adbd
	nc     net.Conn
	ctx    context.Context
	cancel context.CancelFunc

	wmu sync.Mutex // one message at a time on the wire

	version  atomic.Uint32 // negotiated; 0 before CNXN
	maxBytes atomic.Uint32 // negotiated largest payload we send

	mu      sync.Mutex
	streams map[uint32]*stream
	nextID  uint32
	online  bool

	auth      authMode // chosen at CNXN; only the read loop touches it
	authToken []byte
	services  sync.WaitGroup
}

func newTransportConn(a *Adbd, nc net.Conn) *transportConn {
	c := &transportConn{a: a, nc: nc, streams: make(map[uint32]*stream)}
	c.ctx, c.cancel = context.WithCancel(a.ctx)
	c.maxBytes.Store(maxPayloadV1)
	return c
}

func (c *transportConn) maxData() uint32 { return c.maxBytes.Load() }

// send writes one message. Until a version is negotiated, and for versions
// before versionSkipChecksum, data_check carries the byte sum.
func (c *transportConn) send(m message) error {
	withSum := c.version.Load() < versionSkipChecksum // 0 = not negotiated yet
	buf := appendHeader(make([]byte, 0, headerSize), m, withSum)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	bufs := net.Buffers{buf, m.Data}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return fmt.Errorf("adbd: sending %s: %w", m, err)
	}
	return nil
}

// abort resets the TCP connection; run notices and tears everything down.
func (c *transportConn) abort() {
	resetConn(c.nc) // first, so services cancelled below cannot send more
	c.cancel()
}

// teardown ends every stream without CLSE: the connection is gone.
func (c *transportConn) teardown() {
	c.cancel()
	c.nc.Close()
	c.mu.Lock()
	streams := make([]*stream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.shutdown(false)
	}
	c.services.Wait()
}

func (c *transportConn) forget(id uint32) {
	c.mu.Lock()
	delete(c.streams, id)
	c.mu.Unlock()
}

// lookup finds a live stream by our id and, when given, the host's id.
// Messages for unknown or closed streams are ignored: the real server sends
// late close-stdin WRTEs and duplicate CLSEs after a stream ended.
func (c *transportConn) lookup(local, remote uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[local]
	if s == nil || (remote != 0 && s.remote != remote) {
		return nil
	}
	return s
}

// run is the read loop. It dispatches every message without blocking on
// any single stream, so one slow service cannot stall the others.
func (c *transportConn) run() error {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		m, err := readMessage(r, maxPayload)
		if err != nil {
			if errors.Is(err, io.EOF) || c.ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("adbd: reading from %s: %w", c.nc.RemoteAddr(), err)
		}
		if err := c.handle(m); err != nil {
			return err
		}
	}
}

func (c *transportConn) handle(m message) error {
	switch m.Command {
	case cmdCNXN:
		return c.onConnect(m)
	case cmdAUTH:
		return c.onAuth(m)
	}
	c.mu.Lock()
	online := c.online
	c.mu.Unlock()
	if !online {
		// adbd ignores stream traffic before the handshake completes.
		return nil
	}
	switch m.Command {
	case cmdOPEN:
		c.onOpen(m)
	case cmdOKAY:
		if s := c.lookup(m.Arg1, m.Arg0); s != nil {
			s.onOkay()
		}
	case cmdWRTE:
		if s := c.lookup(m.Arg1, m.Arg0); s != nil {
			s.onWrite(m.Data)
		}
	case cmdCLSE:
		// A zero host id (a refusal of something we opened; we never
		// open anything) matches any stream, as in adbd.
		if s := c.lookup(m.Arg1, m.Arg0); s != nil {
			s.shutdown(true)
		}
	}
	return nil
}

// onConnect negotiates version and payload size (the minimum of both
// sides) and, unless AUTH is required first, answers with our CNXN.
func (c *transportConn) onConnect(m message) error {
	cfg := c.a.cfg
	if m.Arg0 < versionMin {
		return fmt.Errorf("adbd: host protocol version 0x%08x unsupported", m.Arg0)
	}
	c.mu.Lock()
	wasOnline := c.online
	c.online = false
	c.mu.Unlock()
	if wasOnline {
		// A second CNXN restarts the transport: adbd drops all streams.
		c.closeAllStreams()
	}
	c.version.Store(min(m.Arg0, cfg.version))
	hostMax := m.Arg1
	if hostMax == 0 {
		hostMax = maxPayloadV1
	}
	c.maxBytes.Store(min(hostMax, cfg.maxData))
	c.auth = c.a.authMode()
	if c.auth != authNone {
		return c.sendAuthToken()
	}
	return c.goOnline()
}

func (c *transportConn) goOnline() error {
	c.mu.Lock()
	c.online = true
	c.mu.Unlock()
	return c.send(message{
		Command: cmdCNXN,
		Arg0:    c.version.Load(),
		Arg1:    c.maxBytes.Load(),
		Data:    bannerBytes(c.a.dev),
	})
}

// bannerBytes caps the banner at what a host accepts before the handshake
// completes; only absurdly long props would reach the cap.
func bannerBytes(dev Device) []byte {
	b := []byte(banner(dev))
	return b[:min(len(b), int(maxPayloadV1))]
}

func (c *transportConn) sendAuthToken() error {
	tok := make([]byte, authTokenSize)
	rand.Read(tok)
	c.mu.Lock()
	c.authToken = tok
	c.mu.Unlock()
	return c.send(message{Command: cmdAUTH, Arg0: authToken, Data: tok})
}

// onAuth accepts or refuses the host's answers to our token. AUTH arriving
// when we never asked (AuthNone) is ignored, which keeps hosts that try
// auth eagerly working.
func (c *transportConn) onAuth(m message) error {
	c.mu.Lock()
	asked := c.authToken != nil
	online := c.online
	c.mu.Unlock()
	if !asked || online {
		return nil
	}
	switch m.Arg0 {
	case authSignature:
		if c.auth == authAny {
			return c.goOnline()
		}
		// Ask again: the host tries its next key, then offers its public key.
		return c.sendAuthToken()
	case authRSAPublicKey:
		if c.auth == authAny {
			return c.goOnline()
		}
		// AuthNever: the confirmation dialog is never answered.
	}
	return nil
}

func (c *transportConn) closeAllStreams() {
	c.mu.Lock()
	streams := make([]*stream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.shutdown(false)
	}
}

// openTimeout bounds the work done before a service is acknowledged
// (dialling a device port), so a hung dial cannot leave the host waiting.
const openTimeout = 10 * time.Second

// onOpen starts a service. Resolving it happens off the read loop because
// a tcp: service dials first; the host sends nothing for this stream until
// our OKAY, so ordering is preserved.
func (c *transportConn) onOpen(m message) {
	hostID := m.Arg0
	if hostID == 0 {
		return
	}
	name := strings.TrimRight(string(m.Data), "\x00")
	c.services.Add(1)
	go func() {
		defer c.services.Done()
		openCtx, cancel := context.WithTimeout(c.ctx, openTimeout)
		svc, err := openService(openCtx, c.a.dev, name)
		cancel()
		if err != nil {
			c.a.cfg.logger.Info("adbd refused service", "service", name, "err", err)
			c.send(message{Command: cmdCLSE, Arg0: 0, Arg1: hostID})
			return
		}
		s := c.register(hostID)
		if s == nil {
			svc(canceledContext(), eofReadWriter{}) // release what OpenService acquired
			return
		}
		if err := c.send(message{Command: cmdOKAY, Arg0: s.local, Arg1: hostID}); err != nil {
			s.shutdown(false)
		}
		if err := svc(s.ctx, s); err != nil && !isClosedErr(err) {
			c.a.cfg.logger.Warn("adbd service", "service", name, "err", err)
		}
		s.Close()
	}()
}

// register allocates a local id for a new stream; nil once the connection
// is going away.
func (c *transportConn) register(hostID uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return nil
	}
	for {
		c.nextID++
		if c.nextID != 0 && c.streams[c.nextID] == nil {
			break
		}
	}
	s := newStream(c.ctx, c, c.nextID, hostID)
	c.streams[s.local] = s
	return s
}

func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// eofReadWriter is a stream that is already over.
type eofReadWriter struct{}

func (eofReadWriter) Read([]byte) (int, error)  { return 0, io.EOF }
func (eofReadWriter) Write([]byte) (int, error) { return 0, errStreamClosed }
