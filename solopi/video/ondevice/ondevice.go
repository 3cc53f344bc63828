// Package ondevice adapts a SoloPi device channel to the screen
// recorder's small device interface (solopi/video stays below
// solopi/device, so that it can be tested against any shell).
package ondevice

import (
	"context"
	"io"
	"io/fs"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// Screen is d as the recorder's device: its shell, a pull verified
// against the device's SHA-256, stat and its clock.
func Screen(d *device.Device) video.Device { return onDevice{d} }

type onDevice struct{ d *device.Device }

func (v onDevice) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	return v.d.Transport().Shell(ctx, cmd)
}

func (v onDevice) Pull(ctx context.Context, remote string, w io.Writer) error {
	_, err := v.d.Pull(ctx, remote, w)
	return err
}

func (v onDevice) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	return v.d.Transport().Stat(ctx, remote)
}

func (v onDevice) Clock() clock.Clock { return v.d.Clock() }
