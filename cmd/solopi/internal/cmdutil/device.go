package cmdutil

import (
	"context"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/urfave/cli/v2"
)

// Error codes of device selection.
const (
	CodeNoDevice             = "no_device"
	CodeMultipleDevices      = "multiple_devices"
	CodeDeviceNotFound       = "device_not_found"
	CodeDeviceUnauthorized   = "device_unauthorized"
	CodeDeviceOffline        = "device_offline"
	CodeDeviceNotReady       = "device_not_ready"
	CodeDeviceDisconnected   = "device_disconnected"
	CodeAdbServerUnreachable = "adb_server_unreachable"
	CodeAdbNotFound          = "adb_not_found"
	CodeAdbError             = "adb_error"
	CodeAdbTimeout           = "adb_timeout"
)

// SelectTimeout bounds device selection (the reference host gives
// `adb get-state` 10 s), so a wedged adb server cannot hang a command.
const SelectTimeout = 10 * time.Second

// AdbClient returns a client of the adb server the globals name.
func (g *Globals) AdbClient() (*adb.Client, error) {
	c, err := adb.NewClient(adb.WithPort(g.AdbServerPort), adb.WithAdbPath(g.AdbPath))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, "invalid_option", "the adb server port is invalid", err)
	}
	return c, nil
}

// Transport selects the device (--serial / ANDROID_SERIAL, else the only
// online one) through the adb server, starting the server with --adb when
// nothing answers on its port.
func (g *Globals) Transport(ctx context.Context) (device.Transport, error) {
	if g.Env.Transport != nil {
		return g.Env.Transport(ctx)
	}
	return g.adbTransport(ctx, g.Serial)
}

// adbTransport selects serial ("" for the only online device) through the
// adb server.
func (g *Globals) adbTransport(ctx context.Context, serial string) (device.Transport, error) {
	c, err := g.AdbClient()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, SelectTimeout)
	defer cancel()
	d, err := c.Device(sctx, serial)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fault.From(ctx.Err())
		}
		if sctx.Err() != nil {
			return nil, fault.Wrap(fault.Timeout, CodeAdbTimeout, "the adb server did not answer device selection in time", err).
				With("adbServer", c.Addr())
		}
		return nil, MapAdbError(err, serial)
	}
	return d, nil
}

// MapAdbError turns the adb client's typed errors into outcome errors:
// selection problems are the user's to fix (exit 3), an unreachable server
// or a broken stream is a transport failure (exit 4).
func MapAdbError(err error, serial string) error {
	var ae *adb.Error
	errors.As(err, &ae)
	detail := func(e *fault.Error) *fault.Error {
		if ae != nil {
			if ae.Serial != "" {
				e.With("serial", ae.Serial)
			} else if serial != "" {
				e.With("serial", serial)
			}
			if ae.ServerMsg != "" {
				e.With("adbMessage", ae.ServerMsg)
			}
		}
		return e
	}
	devices := func() []map[string]any {
		out := []map[string]any{}
		if ae == nil {
			return out
		}
		for _, d := range ae.Devices {
			m := map[string]any{"serial": d.Serial, "state": d.State}
			if d.Model != "" {
				m["model"] = d.Model
			}
			if d.Product != "" {
				m["product"] = d.Product
			}
			out = append(out, m)
		}
		return out
	}
	switch {
	case errors.Is(err, adb.ErrMultipleDevices):
		return detail(fault.Wrap(fault.Invalid, CodeMultipleDevices, "more than one Android device is online", err).
			With("devices", devices()).
			WithUserAction("Pick one device with --serial SERIAL (or ANDROID_SERIAL); `adb devices -l` lists the serials."))
	case errors.Is(err, adb.ErrNoDevice):
		return detail(fault.Wrap(fault.Invalid, CodeNoDevice, "no online Android device found", err).
			With("devices", devices()).
			WithUserAction("Plug in the device with USB debugging enabled (Settings > Developer options), unlock it, and accept the RSA prompt; or `adb connect HOST:PORT` for a network device."))
	case errors.Is(err, adb.ErrDeviceNotFound):
		return detail(fault.Wrap(fault.Invalid, CodeDeviceNotFound, "the selected device is not known to the adb server", err).
			WithUserAction("Check the serial with `adb devices -l` and pass the right one with --serial; plug the device in (or `adb connect HOST:PORT`) first."))
	case errors.Is(err, adb.ErrUnauthorized):
		return detail(fault.Wrap(fault.Invalid, CodeDeviceUnauthorized, "the device has not authorized this computer for USB debugging", err).
			WithUserAction("Unlock the phone and tap Allow on the \"Allow USB debugging?\" (RSA key) prompt; if none shows, replug the cable or revoke USB debugging authorizations in Developer options and replug."))
	case errors.Is(err, adb.ErrOffline):
		return detail(fault.Wrap(fault.Invalid, CodeDeviceOffline, "the device is offline", err).
			WithUserAction("Reconnect the cable (or `adb disconnect` then `adb connect` for a network device), unlock the phone, and retry."))
	case errors.Is(err, adb.ErrNotReady):
		return detail(fault.Wrap(fault.Invalid, CodeDeviceNotReady, "the device is not in the normal \"device\" state", err).
			WithUserAction("Boot the device normally (not recovery, bootloader or sideload) and check `adb devices -l`."))
	case errors.Is(err, adb.ErrServerUnreachable):
		e := fault.Wrap(fault.Transport, CodeAdbServerUnreachable, "no adb server answers and it could not be started", err).
			WithUserAction("Start the adb server with `adb start-server`, pass the adb binary with --adb PATH so solopi can start it, or set ANDROID_ADB_SERVER_PORT to the server's port.")
		if errors.Is(err, adb.ErrAdbNotFound) {
			// No adb to start a server with: a setup problem of this
			// computer (exit 3, as solopi-ai).
			e = fault.Wrap(fault.Invalid, CodeAdbNotFound, "no adb server answers and no adb executable was found to start one", err).
				WithUserAction("Install Android platform-tools (adb) and put it on PATH, pass it with --adb PATH, or set ANDROID_ADB_SERVER_PORT to a running server's port.")
		}
		if ae != nil && ae.Addr != "" {
			e.With("adbServer", ae.Addr)
		}
		return e
	case errors.Is(err, adb.ErrDeviceGone):
		return detail(fault.Wrap(fault.Transport, CodeDeviceDisconnected, "the device disconnected", err).
			WithUserAction("Check the cable or network connection and retry."))
	}
	return detail(fault.Wrap(fault.Transport, CodeAdbError, "the adb server refused the request", err))
}

// SessionOptions are the SoloPi session options the globals describe.
func (g *Globals) SessionOptions(preserveForeground bool) device.SessionOptions {
	return device.SessionOptions{
		Device: device.DeviceOptions{
			Package:        g.Package,
			Port:           g.DevicePort,
			RequestTimeout: g.RequestTimeout,
			Progress:       g.DeviceProgress(),
		},
		StartupTimeout:     g.StartupTimeout,
		PreserveForeground: preserveForeground,
	}
}

// DeviceDeps is how a device command reaches its device (replay, agent and
// device commands all start here): through the adb
// server, or through Env.Transport when a test or the demo hands one in.
type DeviceDeps struct {
	G *Globals
	// Serial, when set, binds the command to exactly that device (a managed
	// worker's leased serial) instead of the globals' selection. A bound
	// device reports nothing to the status line: the worker's line counts
	// its shards.
	Serial string
}

func (g *Globals) Deps() DeviceDeps { return DeviceDeps{G: g} }

// DepsOn binds the device dependencies to exactly serial.
func (g *Globals) DepsOn(serial string) DeviceDeps { return DeviceDeps{G: g, Serial: serial} }

func (d DeviceDeps) Transport(ctx context.Context) (device.Transport, error) {
	switch {
	case d.Serial == "":
		return d.G.Transport(ctx)
	case d.G.Env.Transport == nil:
		return d.G.adbTransport(ctx, d.Serial)
	}
	t, err := d.G.Env.Transport(ctx)
	if err == nil && t.Serial() != d.Serial {
		return nil, fault.New(fault.Invalid, CodeDeviceNotFound, "the bound device is not the one this process reaches").
			With("serial", d.Serial)
	}
	return t, err
}

// Progress is the observer of the device's events (nil for none).
func (d DeviceDeps) Progress() device.Progress {
	if d.Serial != "" {
		return nil
	}
	return d.G.DeviceProgress()
}

func (d DeviceDeps) SessionOptions(preserveForeground bool) device.SessionOptions {
	o := d.G.SessionOptions(preserveForeground)
	o.Device.Progress = d.Progress()
	return o
}

func (d DeviceDeps) Session(ctx context.Context, preserveForeground bool) (*device.Session, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return nil, err
	}
	return device.OpenSession(ctx, t, d.SessionOptions(preserveForeground))
}

// Device reports the selected Device for doctor's Device{} object.
func (d DeviceDeps) Device(ctx context.Context, t device.Transport) map[string]any {
	return describeAdbDevice(ctx, t)
}

// describeAdbDevice is the devices -l line of the selected device: serial,
// state, model, product, device, transportId.
func describeAdbDevice(ctx context.Context, t device.Transport) map[string]any {
	m := map[string]any{"serial": t.Serial(), "state": "device"}
	ad, ok := t.(*adb.Device)
	if !ok {
		return m
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	list, err := ad.Client().Devices(lctx)
	if err != nil {
		// Only descriptive: the device was selected a moment ago.
		return m
	}
	for _, d := range list {
		if d.Serial != t.Serial() {
			continue
		}
		m["state"] = d.State
		for k, v := range map[string]string{"model": d.Model, "product": d.Product, "device": d.Device} {
			if v != "" {
				m[k] = v
			}
		}
		if d.TransportID != 0 {
			m["transportId"] = d.TransportID
		}
	}
	return m
}

// DeviceAction adapts a device command: its run function gets the
// command's device dependencies, the one place sessions are opened.
func DeviceAction(exit *int, e Env, fn func(ctx context.Context, c *cli.Context, d DeviceDeps) (outcome.Result, error)) cli.ActionFunc {
	return Action(exit, e, func(ctx context.Context, g *Globals, c *cli.Context) (outcome.Result, error) {
		return fn(ctx, c, g.Deps())
	})
}

// WithSession opens the SoloPi session (installed, control service ready)
// without preserving the foreground, runs fn on it and releases it.
func WithSession(ctx context.Context, d DeviceDeps, fn func(s *device.Session) (outcome.Result, error)) (outcome.Result, error) {
	s, err := d.Session(ctx, false)
	if err != nil {
		return outcome.Result{}, err
	}
	defer s.Close()
	return fn(s)
}

// WithDevice is withSession for commands that need only the channel.
func WithDevice(ctx context.Context, d DeviceDeps, fn func(dev *device.Device) (outcome.Result, error)) (outcome.Result, error) {
	return WithSession(ctx, d, func(s *device.Session) (outcome.Result, error) { return fn(s.Device) })
}
