package adb

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// DialTCP opens a stream to 127.0.0.1:port on the device (service tcp:PORT)
// through the server. Nothing is installed in the server: the stream is the
// whole tunnel, so no `adb forward` is left behind if the process dies. It
// fits http.Transport.DialContext:
//
//	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
//		return dev.DialTCP(ctx, 23342)
//	}}
//
// As with net.Dialer, ctx bounds only the dial; once connected, the stream
// lives until Close. Nothing listening on the port gives ErrServiceRefused.
func (d *Device) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("adb: dial tcp:%d: port out of range", port)
	}
	op := "dial tcp:" + strconv.Itoa(port)
	cn, err := d.open(ctx, op, "tcp:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	raw, err := cn.detach()
	if err != nil {
		return nil, fmt.Errorf("adb: %s: %w", op, err)
	}
	return &tunnelConn{Conn: raw, serial: d.serial, port: port}, nil
}

// tunnelConn is the raw byte stream to the device port. Reads, writes,
// deadlines and addresses are those of the socket to the adb server, which
// relays the bytes unchanged; String names the real endpoint for logs.
type tunnelConn struct {
	net.Conn
	serial string
	port   int
}

func (t *tunnelConn) String() string {
	return fmt.Sprintf("adb tunnel to %s tcp:%d via %s", t.serial, t.port, t.Conn.RemoteAddr())
}

// CloseWrite half-closes the stream toward the device when the socket to the
// server supports it.
func (t *tunnelConn) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
