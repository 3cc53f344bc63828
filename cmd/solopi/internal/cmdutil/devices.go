package cmdutil

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// CodeInvalidDevices: --devices names no phone, or one twice.

// DevicesFlag binds --devices, the phones a command spreads its work over.
func DevicesFlag(into *string, usage string) cli.Flag {
	return &cli.StringFlag{Name: "devices", Destination: into, Usage: usage}
}

// DeviceSerials are the phones --devices names (spec; given says the flag
// was on the command line): every online one for "all", a comma-separated
// list, or, without the flag, the one device the globals select.
func (g *Globals) DeviceSerials(ctx context.Context, spec string, given bool) ([]string, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" && !given:
		t, err := g.Selector().Select(ctx, g.Serial)
		if err != nil {
			return nil, err
		}
		return []string{t.Serial()}, nil
	case spec == "all":
		list, err := g.Selector().Online(ctx)
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, fault.Usage(fault.CodeNoDevice, "--devices all: no device is online").
				WithUserAction("Connect a phone (adb devices must list it as device), or name the phones.")
		}
		return list, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fault.Usage(fault.CodeInvalidDevices, "--devices must be all or a comma-separated list of serials")
		}
		if seen[p] {
			return nil, fault.Usagef(fault.CodeInvalidDevices, "--devices names %s twice", p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// SessionOn opens the SoloPi session on exactly serial, taking its lock
// for the rest of the command.
func (d DeviceDeps) SessionOn(ctx context.Context, serial string, preserveForeground bool) (*device.Session, error) {
	t, err := d.G.Selector().Bind(ctx, serial)
	if err != nil {
		return nil, err
	}
	if err := d.lock(ctx, t.Serial()); err != nil {
		return nil, err
	}
	return device.OpenSession(ctx, t, d.SessionOptions(preserveForeground))
}
