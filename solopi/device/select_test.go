package device

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/adb"
)

// ---- adb typed errors → fault errors ----

func TestMapAdbErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		code string
		kind fault.Kind
	}{
		{&adb.Error{Kind: adb.ErrNoDevice, Op: "select device"}, fault.CodeNoDevice, fault.Invalid},
		{&adb.Error{Kind: adb.ErrMultipleDevices, Devices: []adb.DeviceInfo{{Serial: "A", State: "device", Model: "Pixel"}, {Serial: "B", State: "device"}}}, fault.CodeMultipleDevices, fault.Invalid},
		{&adb.Error{Kind: adb.ErrDeviceNotFound, Serial: "X1"}, fault.CodeDeviceNotFound, fault.Invalid},
		{&adb.Error{Kind: adb.ErrUnauthorized, Serial: "X1", ServerMsg: "device unauthorized."}, fault.CodeDeviceUnauthorized, fault.Invalid},
		{&adb.Error{Kind: adb.ErrOffline, Serial: "X1"}, fault.CodeDeviceOffline, fault.Invalid},
		{fmt.Errorf("select: %w", &adb.Error{Kind: adb.ErrNotReady, Serial: "X1"}), fault.CodeDeviceNotReady, fault.Invalid},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037"}, fault.CodeAdbServerUnreachable, fault.Transport},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037", Err: adb.ErrAdbNotFound}, fault.CodeAdbNotFound, fault.Invalid},
		{&adb.Error{Kind: adb.ErrDeviceGone, Serial: "X1"}, fault.CodeDeviceDisconnected, fault.Transport},
		{&adb.FailError{Service: "host:features", Msg: "unknown host service"}, fault.CodeAdbError, fault.Transport},
	}
	for _, c := range cases {
		err := mapAdbError(c.err, "X1")
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != c.code || e.Kind != c.kind {
			t.Errorf("%v → %v", c.err, err)
			continue
		}
		if c.kind == fault.Invalid && e.UserAction == "" {
			t.Errorf("%s has no userActionRequired", c.code)
		}
		switch c.code {
		case fault.CodeMultipleDevices:
			// solopi-ai's devices are the online serials; the details
			// go beside them.
			if s, _ := e.Details["devices"].([]string); len(s) != 2 || s[0] != "A" || s[1] != "B" {
				t.Errorf("devices %v", e.Details["devices"])
			}
			ds, _ := e.Details["deviceDetails"].([]map[string]any)
			if len(ds) != 2 || ds[0]["model"] != "Pixel" || ds[1]["serial"] != "B" {
				t.Errorf("deviceDetails %v", e.Details["deviceDetails"])
			}
		case fault.CodeDeviceUnauthorized:
			if e.Details["serial"] != "X1" || e.Details["adbMessage"] != "device unauthorized." || e.Details["stderr"] != "device unauthorized." {
				t.Errorf("details %v", e.Details)
			}
		case fault.CodeAdbServerUnreachable:
			if e.Details["adbServer"] != "127.0.0.1:5037" {
				t.Errorf("details %v", e.Details)
			}
		}
	}
}

// oneDevice is a transport that names a serial and nothing else.
type oneDevice struct {
	Transport
	serial string
}

func (o oneDevice) Serial() string { return o.serial }

// A selector with Connect selects the one device it hands in, and a bound
// serial must be that device's.
func TestSelectorConnect(t *testing.T) {
	t.Parallel()
	s := Selector{Connect: func(context.Context) (Transport, error) { return oneDevice{serial: "sim-1"}, nil }}
	ctx := context.Background()
	if tr, err := s.Select(ctx, "other"); err != nil || tr.Serial() != "sim-1" {
		t.Fatalf("select %v %v", tr, err)
	}
	if tr, err := s.Bind(ctx, "sim-1"); err != nil || tr.Serial() != "sim-1" {
		t.Fatalf("bind %v %v", tr, err)
	}
	if _, err := s.Bind(ctx, "sim-2"); fault.CodeOf(err) != fault.CodeDeviceNotFound {
		t.Fatalf("bind to another serial: %v", err)
	}
	if got, err := s.Online(ctx); err != nil || len(got) != 1 || got[0] != "sim-1" {
		t.Fatalf("online %v %v", got, err)
	}
	if m := Describe(ctx, oneDevice{serial: "sim-1"}); m["serial"] != "sim-1" || m["state"] != "device" {
		t.Fatalf("describe %v", m)
	}
}

// Without any adb server and no adb binary to start one, selection is the
// user's setup problem; a bad port is a usage error.
func TestSelectorWithoutServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Selector{AdbPath: "/nonexistent/adb", AdbServerPort: 1}
	if _, err := s.Select(ctx, ""); fault.CodeOf(err) != fault.CodeAdbNotFound {
		t.Fatalf("select: %v", err)
	}
	if _, err := s.Online(ctx); fault.CodeOf(err) != fault.CodeAdbNotFound {
		t.Fatalf("online: %v", err)
	}
	if _, err := (Selector{AdbPath: "adb", AdbServerPort: -1}).Client(); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("client: %v", err)
	}
}
