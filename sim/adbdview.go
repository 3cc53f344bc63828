package sim

import (
	"context"
	"io"
	"io/fs"
	"net"
	"time"

	"github.com/solopi-dev/solopi/sim/adbd"
)

// adbdView is the device as the adb fronts see it: the phone's shell and
// files, and DialTCP to SoloPi's control service.
type adbdView struct{ d *Device }

var _ adbd.Device = adbdView{}

func (v adbdView) Serial() string                         { return v.d.Serial() }
func (v adbdView) Props() (product, model, device string) { return v.d.Props() }
func (v adbdView) RunShell(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int {
	return v.d.Phone.RunShell(ctx, cmd, stdin, stdout, stderr)
}
func (v adbdView) Stat(path string) (fs.FileInfo, error)      { return v.d.Phone.Stat(path) }
func (v adbdView) ReadDir(path string) ([]fs.FileInfo, error) { return v.d.Phone.ReadDir(path) }
func (v adbdView) Open(path string) (io.ReadCloser, error)    { return v.d.Phone.Open(path) }
func (v adbdView) WriteFile(path string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	return v.d.Phone.WriteFile(path, mode, mtime, r)
}
func (v adbdView) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	return v.d.DialTCP(ctx, port)
}
