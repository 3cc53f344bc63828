package adb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/adbwire"
)

// Device is one device reached through the server. It is immutable after
// Client.Device returns and safe for concurrent use: every call opens its own
// server connection (host:tport:serial:<s>, then the service).
type Device struct {
	c        *Client
	serial   string
	features []string
}

// Serial names the device (the adb serial).
func (d *Device) Serial() string { return d.serial }

// Client returns the client the device was selected from.
func (d *Device) Client() *Client { return d.c }

// Features returns the device's feature list, read once at selection.
func (d *Device) Features() []string { return slices.Clone(d.features) }

// HasFeature reports whether the device advertised f (shell_v2, stat_v2, ...).
func (d *Device) HasFeature(f string) bool { return slices.Contains(d.features, f) }

// Device selects a device. With a serial, the server must know it and its
// state must be "device". With an empty serial, exactly one device must be in
// state "device". (The caller resolves --serial / ANDROID_SERIAL.)
func (c *Client) Device(ctx context.Context, serial string) (*Device, error) {
	const op = "select device"
	if serial == "" {
		list, err := c.Devices(ctx)
		if err != nil {
			return nil, err
		}
		var ready []DeviceInfo
		for _, d := range list {
			if d.State == stateDevice {
				ready = append(ready, d)
			}
		}
		switch {
		case len(ready) > 1:
			return nil, &Error{Kind: ErrMultipleDevices, Op: op, Devices: ready}
		case len(ready) == 0 && len(list) == 1:
			// One device that is not ready: say exactly what is wrong with it.
			return nil, stateError(op, list[0].Serial, list[0].State)
		case len(ready) == 0:
			return nil, &Error{Kind: ErrNoDevice, Op: op, Devices: list}
		}
		serial = ready[0].Serial
	} else {
		st, err := c.GetState(ctx, serial)
		if err != nil {
			return nil, err
		}
		if st != stateDevice {
			return nil, stateError(op, serial, st)
		}
	}
	feats, err := c.Features(ctx, serial)
	if err != nil {
		return nil, err
	}
	return &Device{c: c, serial: serial, features: feats}, nil
}

func stateError(op, serial, state string) error {
	switch state {
	case stateUnauthorized:
		return &Error{Kind: ErrUnauthorized, Op: op, Serial: serial}
	case stateOffline:
		return &Error{Kind: ErrOffline, Op: op, Serial: serial}
	}
	return &Error{Kind: ErrNotReady, Op: op, Serial: serial, ServerMsg: "state " + state}
}

// open connects to the server, switches to this device and starts service.
// On success the connection is a raw stream to the service.
func (d *Device) open(ctx context.Context, op, service string) (*conn, error) {
	cn, err := d.c.dial(ctx)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*conn, error) {
		cn.Close()
		return nil, err
	}
	if err := d.selectTransport(cn, op, "host:tport:serial:"+d.serial, true); err != nil {
		var fe *FailError
		if !errors.As(err, &fe) || fe.Msg != "unknown host service" {
			return fail(err)
		}
		// Servers older than version 40 lack tport; use the documented form.
		cn.Close()
		if cn, err = d.c.dial(ctx); err != nil {
			return nil, err
		}
		if err := d.selectTransport(cn, op, "host:transport:"+d.serial, false); err != nil {
			return fail(err)
		}
	}
	if err := adbwire.WriteRequest(cn, service); err != nil {
		if errors.Is(err, adbwire.ErrTooLong) {
			return fail(fmt.Errorf("adb: %s: %w", op, err))
		}
		return fail(d.ioError(cn, op, err))
	}
	err = adbwire.ReadStatus(cn)
	if err == nil {
		return cn, nil
	}
	msg, ok := failMsg(err)
	if !ok {
		return fail(d.ioError(cn, op, err))
	}
	cn.Close()
	if msg == "closed" {
		// The device closed the stream right away: either it refused the
		// service (nothing on that tcp port, unknown service) or it left.
		return nil, d.checkGone(ctx, op, &Error{Kind: errServiceRefused, Op: op, Serial: d.serial, ServerMsg: msg})
	}
	return nil, d.midCall(classifyFail(op, d.serial, service, msg))
}

func (d *Device) selectTransport(cn *conn, op, req string, tport bool) error {
	if err := adbwire.WriteRequest(cn, req); err != nil {
		return d.ioError(cn, op, err)
	}
	if err := adbwire.ReadStatus(cn); err != nil {
		if msg, ok := failMsg(err); ok {
			return d.midCall(classifyFail(op, d.serial, req, msg))
		}
		return d.ioError(cn, op, err)
	}
	if tport {
		if _, err := adbwire.ReadTransportID(cn); err != nil {
			return d.ioError(cn, op, err)
		}
	}
	return nil
}

// midCall turns "not found" into ErrDeviceGone: the device was there when it
// was selected, so it has since disappeared.
func (d *Device) midCall(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrDeviceNotFound {
		e.Kind = ErrDeviceGone
	}
	return err
}

// ioError classifies an I/O error on a service stream: the context's error if
// it caused it, otherwise the device (or its server link) went away.
func (d *Device) ioError(cn *conn, op string, err error) error {
	if err = cn.ctxErr(err); errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("adb: %s: %w", op, err)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if errors.Is(err, errProtocol) {
		return fmt.Errorf("adb: %s on %s: %w", op, d.serial, err)
	}
	// A broken stream means the device left, unless the server itself died
	// (killed, crashed): a bare connect tells them apart without starting a
	// new server as a side effect.
	if !d.c.serverAlive(cn.ctx) {
		return &Error{Kind: ErrServerUnreachable, Op: op, Serial: d.serial, Addr: d.c.Addr(), Err: err}
	}
	return &Error{Kind: ErrDeviceGone, Op: op, Serial: d.serial, Err: err}
}

// checkGone asks the server whether the device is still ready after a stream
// ended in a way the protocol cannot tell apart from the device leaving (a
// raw exec/shell v1 stream's EOF, a FAIL "closed"). If it is still there,
// ifPresent is returned (nil for "the EOF was a normal end").
func (d *Device) checkGone(ctx context.Context, op string, ifPresent error) error {
	st, err := d.c.GetState(ctx, d.serial)
	if err == nil && st == stateDevice {
		return ifPresent
	}
	if ctx.Err() != nil {
		return fmt.Errorf("adb: %s: %w", op, ctx.Err())
	}
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrServerUnreachable {
		return err
	}
	gone := &Error{Kind: ErrDeviceGone, Op: op, Serial: d.serial, Err: err}
	if err == nil {
		gone.ServerMsg = "state " + st
	}
	return gone
}

// opName formats an operation with its argument for error messages, keeping
// long shell commands readable.
func opName(verb, arg string) string {
	if len(arg) > 80 {
		arg = arg[:77] + "..."
	}
	arg = strings.ReplaceAll(arg, "\n", `\n`)
	return verb + " " + arg
}
