// Package adbd puts a simulated Android device on the network the way a real
// phone appears to adb tooling. It has two fronts:
//
//   - Adbd speaks the adbd transport protocol (CNXN/OPEN/OKAY/WRTE/CLSE) on a
//     loopback TCP port, so Debian's real adb server can `adb connect` to it and
//     every adb command exercises the real client and server code.
//   - Server speaks the adb server's smart-socket protocol (the one on port
//     5037), so our own Go adb client can talk to simulated devices without any
//     adb binary installed.
//
// Both fronts hand device services (shell, exec, sync, tcp) to the same code
// (OpenService), so a behaviour tested through one front holds for the other.
// The device itself (shell interpreter, file system, apps) is behind the
// Device interface and lives elsewhere in the simulator.
//
// Fault injection, for tests of how callers cope:
//
//   - Adbd.Drop resets the device's connections mid-call (the adb server
//     then reconnects); Adbd.SetOnline(false) keeps it offline;
//     Adbd.SetAuth(AuthNever) plus Drop makes it "unauthorized".
//   - Server.SetState, Server.Kick and Server.Remove do the same for the
//     Server front, with the real server's FAIL texts ("device offline",
//     "device unauthorized.\n...", "device '<s>' not found").
//
// Semantics worth knowing when writing a client: closing a stream (CLSE, or
// closing the socket to the Server front) cancels the command behind it;
// a dropped device never sends a shell v2 exit packet, so a client must
// treat a stream ending without one as an error (adb 29's own client
// reports exit code 0 then).
package adbd

import (
	"context"
	"io"
	"io/fs"
	"net"
	"time"
)

// Device is one simulated Android device as the adb fronts see it.
type Device interface {
	// Serial is the device's serial number as the Server front reports it.
	// (Debian's adb server names a connected Adbd by its address instead.)
	Serial() string
	// Props for the CNXN banner and `adb devices -l`: product, model, device names.
	Props() (product, model, device string)
	// RunShell runs cmd like `sh -c cmd`, streaming output; returns the exit code.
	// An empty cmd means an interactive shell that reads commands from stdin.
	// RunShell must return soon after ctx is done: the adb stream is gone then.
	// stdout and stderr may be the same writer (shell v1, exec), and writes to
	// them may fail once the client has gone away.
	RunShell(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int
	// File system (absolute device paths):
	Stat(path string) (fs.FileInfo, error) // fs.ErrNotExist when missing
	ReadDir(path string) ([]fs.FileInfo, error)
	Open(path string) (io.ReadCloser, error)
	// WriteFile creates or replaces path with the contents of r, creating
	// missing parent directories: the banner advertises fixed_push_mkdir,
	// which promises the host that adbd does so.
	WriteFile(path string, mode fs.FileMode, mtime time.Time, r io.Reader) error
	// DialTCP connects to a TCP port on the device's loopback (the SoloPi HTTP server on 23342).
	DialTCP(ctx context.Context, port int) (net.Conn, error)
}

// features is the feature list both fronts advertise for a device. It is the
// truthful minimum the services here implement: no sendrecv_v2* (the host
// would then send compressed data) and no delayed_ack (a different flow
// control scheme).
const features = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir"

// banner is the CNXN payload identifying the device to the adb server.
// The serial field stays empty like modern adbd: the server names TCP
// devices by their address anyway.
func banner(dev Device) string {
	product, model, device := dev.Props()
	return "device::ro.product.name=" + product +
		";ro.product.model=" + model +
		";ro.product.device=" + device +
		";features=" + features
}
