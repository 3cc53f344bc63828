package adb

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"time"
)

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
