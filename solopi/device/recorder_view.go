package device

import (
	"context"
	"io"
	"io/fs"

	"github.com/solopi-dev/solopi/clock"
)

// RecorderView is d as the screen recorder (solopi/video's Device) sees a
// phone: its shell, a pull verified against the device's SHA-256, stat and
// its clock. It lives here rather than in solopi/video so that the
// recorder stays below the device core (it is tested against any shell),
// and every run that records (run, verify-run, agent-run) adapts a device
// the same way.
func (d *Device) RecorderView() RecorderView { return RecorderView{d} }

// RecorderView: see Device.RecorderView.
type RecorderView struct{ d *Device }

// Shell runs cmd in the device's shell.
func (v RecorderView) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	return v.d.Transport().Shell(ctx, cmd)
}

// Pull copies remote into w, verified against the device's digest.
func (v RecorderView) Pull(ctx context.Context, remote string, w io.Writer) error {
	_, err := v.d.Pull(ctx, remote, w)
	return err
}

// Stat stats remote on the device.
func (v RecorderView) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	return v.d.Transport().Stat(ctx, remote)
}

// Clock is the device's clock.
func (v RecorderView) Clock() clock.Clock { return v.d.Clock() }
