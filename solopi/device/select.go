package device

import (
	"context"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/adb"
)

// selectTimeout bounds device selection (the reference host gives
// `adb get-state` 10 s), so a wedged adb server cannot hang a caller.
const selectTimeout = 10 * time.Second

// SelectionCodes are the refusals of device selection: the user's to fix
// when they pointed a command at a device, an infrastructure failure when
// a device that was listed a moment ago went away.
var SelectionCodes = []string{fault.CodeNoDevice, fault.CodeDeviceNotFound, fault.CodeDeviceOffline, fault.CodeDeviceUnauthorized, fault.CodeDeviceNotReady}

// Selector is how a host reaches its devices: through the adb server on
// AdbServerPort (AdbPath starts one when nothing answers there), or through
// Connect when a test or the demo hands in the one device this process has.
type Selector struct {
	AdbPath       string
	AdbServerPort int
	// Connect, when set, replaces the adb server: it returns the device
	// this process reaches (an in-process simulator).
	Connect func(ctx context.Context) (Transport, error)
}

// Client is a client of the adb server the selector names.
func (s Selector) Client() (*adb.Client, error) {
	c, err := adb.NewClient(adb.WithPort(s.AdbServerPort), adb.WithAdbPath(s.AdbPath))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidOption, "the adb server port is invalid", err)
	}
	return c, nil
}

// Select picks serial, or the only online device when serial is "". With
// Connect the one device it returns is the selection whatever serial says.
func (s Selector) Select(ctx context.Context, serial string) (Transport, error) {
	if s.Connect != nil {
		return s.Connect(ctx)
	}
	return s.viaAdb(ctx, serial)
}

// Bind reaches exactly serial (a leased device): a device of another
// serial is device_not_found.
func (s Selector) Bind(ctx context.Context, serial string) (Transport, error) {
	if s.Connect == nil {
		return s.viaAdb(ctx, serial)
	}
	t, err := s.Connect(ctx)
	if err == nil && t.Serial() != serial {
		return nil, fault.New(fault.Invalid, fault.CodeDeviceNotFound, "the bound device is not the one this process reaches").
			With("serial", serial)
	}
	return t, err
}

// Online lists the serials the adb server reports in state "device".
func (s Selector) Online(ctx context.Context) ([]string, error) {
	if s.Connect != nil {
		t, err := s.Connect(ctx)
		if err != nil {
			return nil, err
		}
		return []string{t.Serial()}, nil
	}
	c, err := s.Client()
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, selectTimeout)
	defer cancel()
	list, err := c.Devices(lctx)
	if err != nil {
		return nil, mapAdbError(err, "")
	}
	var out []string
	for _, d := range list {
		if d.State == "device" {
			out = append(out, d.Serial)
		}
	}
	return out, nil
}

// viaAdb selects serial ("" for the only online device) through the adb
// server.
func (s Selector) viaAdb(ctx context.Context, serial string) (Transport, error) {
	c, err := s.Client()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, selectTimeout)
	defer cancel()
	d, err := c.Device(sctx, serial)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fault.From(ctx.Err())
		}
		if sctx.Err() != nil {
			return nil, fault.Wrap(fault.Timeout, fault.CodeAdbTimeout, "the adb server did not answer device selection in time", err).
				With("adbServer", c.Addr())
		}
		return nil, mapAdbError(err, serial)
	}
	return d, nil
}

// Describe is the `adb devices -l` line of a selected device (serial,
// state, model, product, device, transportId); a device reached without
// an adb server has only its serial and state.
func Describe(ctx context.Context, t Transport) map[string]any {
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

// mapAdbError turns the adb client's typed errors into fault errors:
// selection problems are the user's to fix (Invalid), an unreachable
// server or a broken stream is a transport failure.
func mapAdbError(err error, serial string) error {
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
				// stderr is solopi-ai's name for what adb said.
				e.With("adbMessage", ae.ServerMsg).With("stderr", ae.ServerMsg)
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
		// devices are the online serials, as solopi-ai lists them; the
		// details of every device the server knows go beside them.
		var online []string
		if ae != nil {
			for _, d := range ae.Devices {
				if d.State == "device" {
					online = append(online, d.Serial)
				}
			}
		}
		if online == nil {
			online = []string{}
		}
		return detail(fault.Wrap(fault.Invalid, fault.CodeMultipleDevices, "more than one Android device is online", err).
			With("devices", online).With("deviceDetails", devices()).
			WithUserAction("Pick one device with --serial SERIAL (or ANDROID_SERIAL); `adb devices -l` lists the serials."))
	case errors.Is(err, adb.ErrNoDevice):
		return detail(fault.Wrap(fault.Invalid, fault.CodeNoDevice, "no online Android device found", err).
			With("devices", devices()).
			WithUserAction("Plug in the device with USB debugging enabled (Settings > Developer options), unlock it, and accept the RSA prompt; or `adb connect HOST:PORT` for a network device."))
	case errors.Is(err, adb.ErrDeviceNotFound):
		return detail(fault.Wrap(fault.Invalid, fault.CodeDeviceNotFound, "the selected device is not known to the adb server", err).
			WithUserAction("Check the serial with `adb devices -l` and pass the right one with --serial; plug the device in (or `adb connect HOST:PORT`) first."))
	case errors.Is(err, adb.ErrUnauthorized):
		return detail(fault.Wrap(fault.Invalid, fault.CodeDeviceUnauthorized, "the device has not authorized this computer for USB debugging", err).
			WithUserAction("Unlock the phone and tap Allow on the \"Allow USB debugging?\" (RSA key) prompt; if none shows, replug the cable or revoke USB debugging authorizations in Developer options and replug."))
	case errors.Is(err, adb.ErrOffline):
		return detail(fault.Wrap(fault.Invalid, fault.CodeDeviceOffline, "the device is offline", err).
			WithUserAction("Reconnect the cable (or `adb disconnect` then `adb connect` for a network device), unlock the phone, and retry."))
	case errors.Is(err, adb.ErrNotReady):
		return detail(fault.Wrap(fault.Invalid, fault.CodeDeviceNotReady, "the device is not in the normal \"device\" state", err).
			WithUserAction("Boot the device normally (not recovery, bootloader or sideload) and check `adb devices -l`."))
	case errors.Is(err, adb.ErrServerUnreachable):
		e := fault.Wrap(fault.Transport, fault.CodeAdbServerUnreachable, "no adb server answers and it could not be started", err).
			WithUserAction("Start the adb server with `adb start-server`, pass the adb binary with --adb PATH so solopi can start it, or set ANDROID_ADB_SERVER_PORT to the server's port.")
		if errors.Is(err, adb.ErrAdbNotFound) {
			// No adb to start a server with: a setup problem of this
			// computer (Invalid, as solopi-ai).
			e = fault.Wrap(fault.Invalid, fault.CodeAdbNotFound, "no adb server answers and no adb executable was found to start one", err).
				WithUserAction("Install Android platform-tools (adb) and put it on PATH, pass it with --adb PATH, or set ANDROID_ADB_SERVER_PORT to a running server's port.")
		}
		if ae != nil && ae.Addr != "" {
			e.With("adbServer", ae.Addr)
		}
		return e
	case errors.Is(err, adb.ErrDeviceGone):
		return detail(fault.Wrap(fault.Transport, fault.CodeDeviceDisconnected, "the device disconnected", err).
			WithUserAction("Check the cable or network connection and retry."))
	}
	return detail(fault.Wrap(fault.Transport, fault.CodeAdbError, "the adb server refused the request", err))
}
