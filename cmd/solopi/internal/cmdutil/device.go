package cmdutil

import (
	"context"

	"github.com/solopi-dev/solopi/solopi/device"
)

// DeviceDeps is how a device command reaches its device (replay, agent,
// session and device commands all start here): the one the globals select
// (--serial / ANDROID_SERIAL, else the only online one) through the adb
// server, or the one Env.Transport hands in.
type DeviceDeps struct {
	G *Globals
}

// Transport selects the device.
func (d DeviceDeps) Transport(ctx context.Context) (device.Transport, error) {
	return d.G.Selector().Select(ctx, d.G.Serial)
}

// Progress is the observer of the device's events (nil for none).
func (d DeviceDeps) Progress() device.Progress { return d.G.DeviceProgress() }

// SessionOptions are the session options of the globals.
func (d DeviceDeps) SessionOptions(preserveForeground bool) device.SessionOptions {
	return d.G.SessionOptions(preserveForeground)
}

// Session selects the device and opens the SoloPi session on it
// (installed, control service ready).
func (d DeviceDeps) Session(ctx context.Context, preserveForeground bool) (*device.Session, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return nil, err
	}
	return device.OpenSession(ctx, t, d.SessionOptions(preserveForeground))
}

// WithSession opens the SoloPi session without preserving the foreground,
// runs fn on it and releases it.
func WithSession(ctx context.Context, d DeviceDeps, fn func(s *device.Session) (Result, error)) (Result, error) {
	s, err := d.Session(ctx, false)
	if err != nil {
		return Result{}, err
	}
	defer s.Close()
	return fn(s)
}

// WithDevice is WithSession for commands that need only the channel.
func WithDevice(ctx context.Context, d DeviceDeps, fn func(dev *device.Device) (Result, error)) (Result, error) {
	return WithSession(ctx, d, func(s *device.Session) (Result, error) { return fn(s.Device) })
}
