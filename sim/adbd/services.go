package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// service serves one accepted device service over rw, the raw byte stream to
// the client. It returns when the service is finished; the caller then closes
// the stream. ctx must be cancelled when the stream goes away, so that a
// running shell command is stopped like adbd kills the subprocess.
//
// A Service must be called exactly once: it may own resources acquired when
// it was opened (the device connection of a tcp: service).
type service func(ctx context.Context, rw io.ReadWriter) error

// ErrRefused is wrapped by OpenService for services the device refuses. The
// transport front answers CLSE(0, id); the server front answers FAIL "closed",
// which is what the real adb server tells its client in that case.
var ErrRefused = errors.New("service refused")

// openService resolves a device service string the way adbd's
// daemon_service_to_fd does, so the same names are accepted and refused.
// Work that can fail visibly to the host (dialling a tcp: port) happens here,
// before the service is acknowledged.
func openService(ctx context.Context, dev Device, name string) (service, error) {
	switch {
	case strings.HasPrefix(name, "shell"):
		opts, err := parseShellService(strings.TrimPrefix(name, "shell"))
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, rw io.ReadWriter) error {
			if opts.v2 {
				return serveShellV2(ctx, dev, opts, rw)
			}
			return serveRaw(ctx, dev, opts.cmd, opts.pty, rw)
		}, nil
	case strings.HasPrefix(name, "exec:"):
		cmd := strings.TrimPrefix(name, "exec:")
		return func(ctx context.Context, rw io.ReadWriter) error {
			return serveRaw(ctx, dev, cmd, false, rw)
		}, nil
	case strings.HasPrefix(name, "sync:"):
		return func(ctx context.Context, rw io.ReadWriter) error {
			return serveSync(ctx, dev, rw)
		}, nil
	case strings.HasPrefix(name, "tcp:"):
		return openTCP(ctx, dev, strings.TrimPrefix(name, "tcp:"))
	}
	return nil, fmt.Errorf("adbd: %q: %w", name, ErrRefused)
}

// shellOptions is a parsed `shell[,args]:command` service.
type shellOptions struct {
	cmd  string
	v2   bool   // shell protocol framing with exit code
	pty  bool   // emulate a terminal: CRLF line ends, stderr merged
	term string // TERM for the command; kept for the record, the device has no terminfo
}

// parseShellService parses what follows "shell" in a service name. It splits
// at the FIRST ':' because the command itself may contain colons (URLs,
// component names), and ignores unknown arguments like adbd does, for
// forward compatibility.
func parseShellService(rest string) (shellOptions, error) {
	args, cmd, ok := strings.Cut(rest, ":")
	if !ok {
		return shellOptions{}, fmt.Errorf("adbd: shell service without ':': %w", ErrRefused)
	}
	// adbd defaults: a pty for an interactive shell, raw for a command.
	o := shellOptions{cmd: cmd, pty: cmd == "", term: "dumb"}
	for _, a := range strings.Split(args, ",") {
		switch {
		case a == "raw":
			o.pty = false
		case a == "pty":
			o.pty = true
		case a == "v2":
			o.v2 = true
		case strings.HasPrefix(a, "TERM="):
			o.term = strings.TrimPrefix(a, "TERM=")
		}
	}
	return o, nil
}

// serveRaw runs a command with no framing: shell v1 and exec. adbd points
// both stdout and stderr of such a subprocess at the socket, so the client
// sees them mixed and gets no exit code.
func serveRaw(ctx context.Context, dev Device, cmd string, pty bool, rw io.ReadWriter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out io.Writer = &lockedWriter{w: rw}
	if pty {
		out = &crlfWriter{w: out}
	}
	dev.RunShell(ctx, cmd, &eofCancelReader{r: rw, cancel: cancel}, out, out)
	return nil
}

// lockedWriter serialises writes, so output written concurrently to stdout
// and stderr interleaves only at Write boundaries.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// crlfWriter turns "\n" into "\r\n" like a pty's onlcr does, which is how a
// pty-mode shell corrupts binary output on a real device.
type crlfWriter struct {
	w io.Writer
}

func (c *crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write([]byte(strings.ReplaceAll(string(p), "\n", "\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// eofCancelReader cancels the service when the stream ends. On the transport
// a stream has no half-close: EOF means the host sent CLSE, i.e. the client
// went away, and adbd then kills the subprocess.
type eofCancelReader struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (e *eofCancelReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.cancel()
	}
	return n, err
}

// openTCP dials the device port for a `tcp:<port>[:<host>]` service. Only
// the device's own loopback is reachable: the simulated device has no
// network beyond it.
func openTCP(ctx context.Context, dev Device, spec string) (service, error) {
	portStr, host, _ := strings.Cut(spec, ":")
	switch host {
	case "", "localhost", "127.0.0.1", "::1":
	default:
		return nil, fmt.Errorf("adbd: tcp: host %q unreachable from the simulated device: %w", host, ErrRefused)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return nil, fmt.Errorf("adbd: tcp: bad port %q: %w", portStr, ErrRefused)
	}
	conn, err := dev.DialTCP(ctx, port)
	if err != nil {
		return nil, fmt.Errorf("adbd: tcp:%d: %w (%w)", port, ErrRefused, err)
	}
	return func(ctx context.Context, rw io.ReadWriter) error {
		return pipe(ctx, rw, conn)
	}, nil
}

// pipe copies both ways between the client stream and a device connection
// until either side ends, then closes the device connection. A finished
// direction ends the whole pipe because adb streams cannot half-close.
func pipe(ctx context.Context, rw io.ReadWriter, conn io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, rw)
		done <- err
	}()
	go func() {
		_, err := io.Copy(rw, conn)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	conn.Close()
	// The other direction unblocks once the caller closes the stream; its
	// result is not interesting.
	if err != nil && !isClosedErr(err) {
		return fmt.Errorf("adbd: tcp pipe: %w", err)
	}
	return nil
}
