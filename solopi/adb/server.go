// Package adb is a client of the adb server's smart-socket protocol (tcp
// 5037). It speaks the protocol directly instead of running the adb binary per
// call: one TCP connection per call, real shell exit codes (shell protocol
// v2), binary-safe exec, sync push/pull/stat, and tcp: tunnels that leave no
// `adb forward` behind. The adb binary is only run to start the server.
//
// Every call takes a context: its deadline becomes the socket deadline and
// cancelling it closes the socket, so no call outlives its context.
package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
	"github.com/solopi-dev/solopi/clock"
)

// defaultPort is the adb server's standard port.
const defaultPort = 5037

// Client talks to one adb server. It is safe for concurrent use; each call
// opens its own connection.
type Client struct {
	host    string
	port    int
	adbPath string // "" = look up "adb" on PATH when the server must be started
	noStart bool

	// startMu serializes start-server so that 32 concurrent calls hitting a
	// dead server start it once, not 32 times.
	startMu sync.Mutex
}

// option configures a Client.
type option func(*Client)

// WithPort selects the server port (the CLI's -P / --adb-port). Zero keeps
// the default: env ANDROID_ADB_SERVER_PORT, else 5037.
func WithPort(port int) option { return func(c *Client) { c.port = port } }

// WithAdbPath gives the adb binary used to start the server (--adb).
func WithAdbPath(path string) option { return func(c *Client) { c.adbPath = path } }

// WithoutServerStart disables starting the server: a refused connection is
// reported as ErrServerUnreachable at once.
func WithoutServerStart() option { return func(c *Client) { c.noStart = true } }

// NewClient returns a client of the server on 127.0.0.1. The port comes from
// WithPort, else env ANDROID_ADB_SERVER_PORT, else 5037. Nothing is dialled
// yet.
func NewClient(opts ...option) (*Client, error) {
	c := &Client{host: "127.0.0.1"}
	for _, o := range opts {
		o(c)
	}
	if c.port == 0 {
		c.port = defaultPort
		if s := os.Getenv("ANDROID_ADB_SERVER_PORT"); s != "" {
			p, err := strconv.Atoi(s)
			if err != nil || p <= 0 || p > 65535 {
				return nil, fmt.Errorf("adb: ANDROID_ADB_SERVER_PORT=%q is not a port number (1-65535)", s)
			}
			c.port = p
		}
	}
	if c.port <= 0 || c.port > 65535 {
		return nil, fmt.Errorf("adb: server port %d out of range (1-65535)", c.port)
	}
	return c, nil
}

// Addr is the server address, host:port.
func (c *Client) Addr() string { return net.JoinHostPort(c.host, strconv.Itoa(c.port)) }

// Port is the server port.
func (c *Client) Port() int { return c.port }

// dial connects to the server, starting it once if the port refuses.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	nc, err := c.dialOnce(ctx)
	if err == nil {
		return newConn(ctx, nc), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("adb: connecting to the server at %s: %w", c.Addr(), ctx.Err())
	}
	if !errors.Is(err, syscall.ECONNREFUSED) || c.noStart {
		return nil, &Error{Kind: ErrServerUnreachable, Addr: c.Addr(), Err: err}
	}
	nc, err = c.startServer(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("adb: starting the server at %s: %w", c.Addr(), ctx.Err())
		}
		return nil, err
	}
	return newConn(ctx, nc), nil
}

// serverAlive reports whether something still accepts connections on the
// server port (it never starts a server).
func (c *Client) serverAlive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	nc, err := c.dialOnce(ctx)
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

func (c *Client) dialOnce(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", c.Addr())
}

// startServer runs `adb -P <port> start-server` and dials again. Under
// startMu a concurrent caller that already started it is noticed by dialling
// first.
func (c *Client) startServer(ctx context.Context) (net.Conn, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if nc, err := c.dialOnce(ctx); err == nil {
		return nc, nil
	}
	bin := c.adbPath
	if bin == "" {
		p, err := exec.LookPath("adb")
		if err != nil {
			return nil, &Error{Kind: ErrServerUnreachable, Addr: c.Addr(),
				Err: fmt.Errorf("%w: adb is not on PATH to start it (install Android platform-tools or pass --adb)", ErrAdbNotFound)}
		}
		bin = p
	}
	// A wedged adb must not hang a caller whose context has no deadline.
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(sctx, bin, "-P", strconv.Itoa(c.port), "start-server")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The server daemonizes; without WaitDelay a daemon inheriting our pipes
	// would keep Wait blocked until it exits.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, &Error{Kind: ErrServerUnreachable, Addr: c.Addr(),
				Err: fmt.Errorf("%w: %s does not exist or is not executable", ErrAdbNotFound, bin)}
		}
		msg := bytes.TrimSpace(out.Bytes())
		if len(msg) > 512 {
			msg = msg[len(msg)-512:]
		}
		return nil, &Error{Kind: ErrServerUnreachable, Addr: c.Addr(),
			Err: fmt.Errorf("starting it with `%s -P %d start-server` failed (%v): %s", bin, c.port, err, msg)}
	}
	// start-server returns once the server listens, but allow a short grace
	// period (20 dials, 50 ms apart) for servers that report early.
	var nc net.Conn
	grace := clock.Retry{Attempts: 20, Backoff: clock.Backoff{Base: 50 * time.Millisecond, Max: 50 * time.Millisecond}}
	err := grace.Do(ctx, func(ctx context.Context) (err error) {
		nc, err = c.dialOnce(ctx)
		return err
	})
	switch {
	case err == nil:
		return nc, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, &Error{Kind: ErrServerUnreachable, Addr: c.Addr(),
		Err: fmt.Errorf("`%s start-server` succeeded but the port still refuses: %w", bin, err)}
}

// hostRequest sends one request on a fresh connection and checks its status.
// The caller reads any payload and closes the connection.
func (c *Client) hostRequest(ctx context.Context, op, serial, req string) (*conn, error) {
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := adbwire.WriteRequest(cn, req); err != nil {
		cn.Close()
		return nil, fmt.Errorf("adb: %s: %w", op, cn.ctxErr(err))
	}
	if err := adbwire.ReadStatus(cn); err != nil {
		cn.Close()
		if msg, ok := failMsg(err); ok {
			return nil, classifyFail(op, serial, req, msg)
		}
		return nil, fmt.Errorf("adb: %s: %w", op, cn.ctxErr(err))
	}
	return cn, nil
}

// hostQuery sends a host request whose reply is OKAY + hex4 payload.
func (c *Client) hostQuery(ctx context.Context, op, serial, req string) ([]byte, error) {
	cn, err := c.hostRequest(ctx, op, serial, req)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	p, err := adbwire.ReadHex4(cn)
	if err != nil {
		return nil, fmt.Errorf("adb: %s: %w", op, cn.ctxErr(err))
	}
	return p, nil
}

// failMsg reports whether err is a FAIL reply, and its text.
func failMsg(err error) (string, bool) {
	var f adbwire.Fail
	ok := errors.As(err, &f)
	return string(f), ok
}
