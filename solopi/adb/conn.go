package adb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// maxRequest is the longest request the framing can express: the length is
// 4 hex digits. (adb's client also caps at MAX_PAYLOAD, 1 MiB, which is
// larger, so 0xffff is the real limit for a shell command.)
const maxRequest = 0xffff

// maxHostReply caps a length-prefixed host reply. The hex4 length already
// limits it to 64 KiB; the constant documents that.
const maxHostReply = 0xffff

// conn is one TCP connection to the adb server carrying one logical request
// (optionally preceded by a transport switch). It ties the connection to a
// context: the context deadline becomes the socket deadline and cancellation
// closes the socket, so a blocked read or write returns at once.
type conn struct {
	net.Conn
	ctx  context.Context
	stop func() bool // unregisters the cancellation hook
}

func newConn(ctx context.Context, c net.Conn) *conn {
	cc := &conn{Conn: c, ctx: ctx}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	// Closing (not just expiring the deadline) guarantees that nothing stays
	// blocked even if a caller later resets deadlines.
	cc.stop = context.AfterFunc(ctx, func() { _ = c.Close() })
	return cc
}

// detach ends the context's hold on the socket: used when a stream outlives
// the call that opened it (DialTCP), like net.Dialer.DialContext does.
func (c *conn) detach() (net.Conn, error) {
	if !c.stop() {
		// The context ended first and its hook closed the socket.
		return nil, c.ctx.Err()
	}
	if err := c.Conn.SetDeadline(time.Time{}); err != nil {
		c.Conn.Close()
		return nil, err
	}
	return c.Conn, nil
}

func (c *conn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// ctxErr converts an I/O error caused by the context into the context's
// error, so callers can test errors.Is(err, context.Canceled).
func (c *conn) ctxErr(err error) error {
	if err == nil {
		return nil
	}
	if e := c.ctx.Err(); e != nil {
		return e
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if _, ok := c.ctx.Deadline(); ok {
			return context.DeadlineExceeded
		}
	}
	return err
}

// Read and Write translate errors so every reader built on conn (bufio,
// io.ReadFull) reports cancellation as the context error.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && err != io.EOF {
		err = c.ctxErr(err)
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	return n, c.ctxErr(err)
}

// send writes one smart-socket request: 4 lowercase hex digits of length,
// then the string (what the 29.0.6 client writes).
func (c *conn) send(req string) error {
	if len(req) > maxRequest {
		return fmt.Errorf("%w: request of %d bytes exceeds the protocol's %d; push long data as a file instead", errTooLong, len(req), maxRequest)
	}
	buf := make([]byte, 0, 4+len(req))
	buf = fmt.Appendf(buf, "%04x", len(req))
	buf = append(buf, req...)
	_, err := c.Write(buf)
	return err
}

// status reads OKAY or FAIL+hex4+msg. A FAIL returns (msg, errFail).
func (c *conn) status() (failMsg string, err error) {
	var st [4]byte
	if _, err := io.ReadFull(c, st[:]); err != nil {
		return "", err
	}
	switch string(st[:]) {
	case "OKAY":
		return "", nil
	case "FAIL":
		msg, err := c.hexPayload()
		if err != nil {
			return "", err
		}
		return string(msg), errFail
	}
	return "", fmt.Errorf("%w: expected OKAY or FAIL, got %q", ErrProtocol, st[:])
}

// errTooLong marks a request that cannot be framed; nothing was sent.
var errTooLong = errors.New("request too long")

// errFail marks that status() read a FAIL; callers classify the message.
var errFail = errors.New("FAIL")

// hexPayload reads hex4 length + that many bytes.
func (c *conn) hexPayload() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n, err := parseHex4(h[:])
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func parseHex4(h []byte) (int, error) {
	n, err := strconv.ParseUint(string(h), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("%w: bad length prefix %q", ErrProtocol, h)
	}
	return int(n), nil
}

// readTransportID reads the 8-byte little-endian id following the OKAY of
// host:tport:*.
func (c *conn) readTransportID() (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}
