package adbd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
)

// authMode selects how the fake adbd treats the AUTH handshake.
type authMode int

const (
	// authNone answers CNXN at once, like an insecure (eng/userdebug) adbd.
	authNone authMode = iota
	// authAny asks for AUTH and accepts any signature or public key, to
	// exercise the host's key path without real RSA.
	authAny
	// authNever asks for AUTH and never accepts, so the host shows the
	// device as "unauthorized" (the user never confirms the dialog).
	authNever
)

// adbdOption configures ListenAdbd.
type adbdOption func(*adbdConfig)

type adbdConfig struct {
	version uint32
	maxData uint32
	auth    authMode
	logger  *slog.Logger
}

// withProtocolVersion makes the device advertise version v, e.g.
// 0x01000000 to force checksummed messages in both directions.
func withProtocolVersion(v uint32) adbdOption { return func(c *adbdConfig) { c.version = v } }

// withMaxData lowers the largest payload the device accepts and sends, to
// test splitting at small message sizes (old devices used 4096).
func withMaxData(n uint32) adbdOption {
	return func(c *adbdConfig) { c.maxData = max(1, min(n, maxPayload)) }
}

// withAuth selects the AUTH behaviour.
func withAuth(m authMode) adbdOption { return func(c *adbdConfig) { c.auth = m } }

// Adbd is a fake adbd for one device, listening on a loopback TCP port for
// `adb connect`. Each accepted connection is an independent transport.
type Adbd struct {
	dev    Device
	cfg    adbdConfig
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[*transportConn]struct{}
	offline bool
	auth    authMode // for handshakes from now on; starts as cfg.auth
}

// emulatorPorts is the range a fresh adb server scans for emulators; a fake
// there would show up as emulator-XXXX in every adb server on the machine.
const emulatorPortLow, emulatorPortHigh = 5555, 5585

// ListenAdbd starts a fake adbd for dev on addr (use "127.0.0.1:0"). The
// adbd stops when ctx is done or Close is called.
func ListenAdbd(ctx context.Context, addr string, dev Device, opts ...adbdOption) (*Adbd, error) {
	cfg := adbdConfig{version: versionSkipChecksum, maxData: maxPayload}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if err := checkNotEmulatorPort(addr); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("adbd: listen %s: %w", addr, err)
	}
	if err := checkNotEmulatorPort(ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	a := &Adbd{dev: dev, cfg: cfg, ln: ln, conns: make(map[*transportConn]struct{}), auth: cfg.auth}
	a.ctx, a.cancel = context.WithCancel(ctx)
	a.wg.Add(1)
	go a.acceptLoop()
	context.AfterFunc(a.ctx, func() { a.ln.Close() })
	return a, nil
}

func checkNotEmulatorPort(addr string) error {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("adbd: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return fmt.Errorf("adbd: address %q: port %q: %w", addr, p, err)
	}
	if port >= emulatorPortLow && port <= emulatorPortHigh {
		return fmt.Errorf("adbd: port %d is in the adb emulator scan range %d-%d", port, emulatorPortLow, emulatorPortHigh)
	}
	return nil
}

// Addr is the listening address, "127.0.0.1:PORT". The real adb server
// uses exactly this string as the device's serial after `adb connect`.
func (a *Adbd) Addr() string { return a.ln.Addr().String() }

// Device returns the simulated device behind this adbd.
func (a *Adbd) Device() Device { return a.dev }

// Drop abruptly closes every current connection (TCP reset), like a phone
// vanishing from the network mid-call. New connections are still accepted,
// so the adb server's reconnect loop brings the device back.
func (a *Adbd) Drop() {
	a.mu.Lock()
	conns := make([]*transportConn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	for _, c := range conns {
		c.abort()
	}
}

// SetOnline(false) drops every connection and rejects new ones until
// SetOnline(true), so the device stays "offline" in the adb server.
func (a *Adbd) SetOnline(online bool) {
	a.mu.Lock()
	a.offline = !online
	a.mu.Unlock()
	if !online {
		a.Drop()
	}
}

// SetAuth changes the AUTH behaviour for handshakes from now on; current
// connections keep theirs. SetAuth(AuthNever) followed by Drop makes the
// real adb server reconnect and then report the device "unauthorized".
func (a *Adbd) SetAuth(m authMode) {
	a.mu.Lock()
	a.auth = m
	a.mu.Unlock()
}

func (a *Adbd) authMode() authMode {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.auth
}

// Close stops listening, drops all connections and waits for their
// goroutines, including running services.
func (a *Adbd) Close() error {
	a.cancel()
	a.Drop()
	a.wg.Wait()
	return nil
}

func (a *Adbd) acceptLoop() {
	defer a.wg.Done()
	for {
		nc, err := a.ln.Accept()
		if err != nil {
			if a.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				a.cfg.logger.Error("adbd accept", "err", err)
			}
			return
		}
		a.mu.Lock()
		if a.offline || a.ctx.Err() != nil {
			a.mu.Unlock()
			resetConn(nc)
			continue
		}
		c := newTransportConn(a, nc)
		a.conns[c] = struct{}{}
		a.wg.Add(1)
		a.mu.Unlock()
		go func() {
			defer a.wg.Done()
			err := c.run()
			c.teardown()
			a.mu.Lock()
			delete(a.conns, c)
			a.mu.Unlock()
			if err != nil && !isClosedErr(err) && a.ctx.Err() == nil {
				a.cfg.logger.Warn("adbd transport", "remote", nc.RemoteAddr().String(), "err", err)
			}
		}()
	}
}

// resetConn closes with SO_LINGER 0, which sends RST instead of FIN: the
// peer sees "connection reset", as when a device disappears.
func resetConn(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	nc.Close()
}
