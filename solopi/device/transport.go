package device

import (
	"context"
	"io"
	"io/fs"
	"net"
	"time"
)

// Transport is how the host reaches one Android device. The adb client
// (solopi/adb, through the adb server) and the simulator's in-process front
// both implement it, and both pass the conformance suite in
// solopi/transporttest. Only stdlib types appear here so that the simulator
// can implement it without importing this package.
type Transport interface {
	// Serial names the device (the adb serial).
	Serial() string
	// Shell runs cmd through the device shell (`sh -c`, shell protocol v2):
	// separate stdout and stderr and the real exit code.
	Shell(ctx context.Context, cmd string) (stdout, stderr []byte, exitCode int, err error)
	// Exec runs cmd without a pty or shell protocol (adb `exec:`); the output
	// is binary-safe (screencap -p).
	Exec(ctx context.Context, cmd string) ([]byte, error)
	// DialTCP opens a stream to a TCP port on the device's loopback
	// (adb `tcp:PORT`); nothing is left behind when the stream closes.
	DialTCP(ctx context.Context, port int) (net.Conn, error)
	// Push writes r to remotePath with the given mode and mtime (sync SEND).
	Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error
	// Pull copies remotePath to w (sync RECV).
	Pull(ctx context.Context, remotePath string, w io.Writer) error
	// Stat describes remotePath; a missing path gives an error matching
	// fs.ErrNotExist.
	Stat(ctx context.Context, remotePath string) (fs.FileInfo, error)
}
