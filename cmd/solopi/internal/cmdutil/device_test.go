package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/solopi/adb"
)

// ---- adb typed errors → outcome errors ----

func TestMapAdbErrors(t *testing.T) {
	cases := []struct {
		err  error
		code string
		exit int
	}{
		{&adb.Error{Kind: adb.ErrNoDevice, Op: "select device"}, CodeNoDevice, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrMultipleDevices, Devices: []adb.DeviceInfo{{Serial: "A", State: "device", Model: "Pixel"}, {Serial: "B", State: "device"}}}, CodeMultipleDevices, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrDeviceNotFound, Serial: "X1"}, CodeDeviceNotFound, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrUnauthorized, Serial: "X1", ServerMsg: "device unauthorized."}, CodeDeviceUnauthorized, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrOffline, Serial: "X1"}, CodeDeviceOffline, outcome.ExitUsage},
		{fmt.Errorf("select: %w", &adb.Error{Kind: adb.ErrNotReady, Serial: "X1"}), CodeDeviceNotReady, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037"}, CodeAdbServerUnreachable, outcome.ExitTransport},
		{&adb.Error{Kind: adb.ErrServerUnreachable, Addr: "127.0.0.1:5037", Err: adb.ErrAdbNotFound}, CodeAdbNotFound, outcome.ExitUsage},
		{&adb.Error{Kind: adb.ErrDeviceGone, Serial: "X1"}, CodeDeviceDisconnected, outcome.ExitTransport},
		{&adb.FailError{Service: "host:features", Msg: "unknown host service"}, CodeAdbError, outcome.ExitTransport},
	}
	for _, c := range cases {
		err := MapAdbError(c.err, "X1")
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != c.code || outcome.ExitFor(e.Kind) != c.exit {
			t.Errorf("%v → %v", c.err, err)
			continue
		}
		if c.exit == outcome.ExitUsage && e.UserAction == "" {
			t.Errorf("%s has no userActionRequired", c.code)
		}
		out, code := printed(t, "error", outcome.Result{}, err)
		if code != c.exit {
			t.Errorf("%s printed exit %d", c.code, code)
		}
		if c.code == CodeMultipleDevices && !strings.Contains(string(out), `"devices":[{"model":"Pixel","serial":"A","state":"device"},{"serial":"B","state":"device"}]`) {
			t.Errorf("devices list missing: %s", out)
		}
	}
}

// printed renders a result the way the CLI prints it and checks it
// against the schema.
func printed(t *testing.T, schema string, res outcome.Result, err error) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	code := outcome.Print(&buf, res, err, false)
	schemas.Validate(t, schema, buf.Bytes())
	return buf.Bytes(), code
}
