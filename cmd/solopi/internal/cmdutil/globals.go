package cmdutil

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Globals are the options shared by every command, compatible with the
// upstream solopi-ai CLI. They may come before the command name, as
// solopi-ai's must, or after it.
type Globals struct {
	AdbPath        string
	Serial         string
	Package        string
	DevicePort     int
	AdbServerPort  int
	RequestTimeout time.Duration
	StartupTimeout time.Duration
	Pretty         bool
	// Progress is the command's status line on stderr (off unless stderr
	// is a terminal); events reports device events on it.
	Progress *progress.Line
	Events   *deviceTally
	Env      Env

	cli *cli.Context
	// printed is the exit code of an object the command printed early
	// (Print), -1 while none was.
	printed int
}

// globalFlags are solopi-ai's global options, with its names and defaults.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "adb", Usage: "adb binary, run only to start the adb server when none answers", EnvVars: []string{"ADB"}, Value: "adb"},
		&cli.StringFlag{Name: "serial", Aliases: []string{"s"}, Usage: "device serial (default: the only online device)", EnvVars: []string{"ANDROID_SERIAL"}},
		&cli.StringFlag{Name: "package", Usage: "SoloPi package on the device", Value: protocol.DefaultPackage},
		&cli.IntFlag{Name: "device-port", Usage: "SoloPi control port on the device", Value: protocol.DefaultDevicePort},
		&cli.IntFlag{Name: "local-port", Usage: "accepted for compatibility; solopi opens direct tcp: streams and never leaves a forward", Value: 0},
		&cli.IntFlag{Name: "adb-server-port", Usage: "adb server port", EnvVars: []string{"ANDROID_ADB_SERVER_PORT"}, Value: 5037},
		&cli.Float64Flag{Name: "request-timeout", Usage: "seconds per device HTTP request", Value: 5},
		&cli.Float64Flag{Name: "startup-timeout", Usage: "seconds to wait for the SoloPi control service", Value: 15},
		&cli.BoolFlag{Name: "pretty", Usage: "indent the JSON output"},
		DeviceWaitFlag(),
	}
}

func readGlobals(c *cli.Context, e Env) (*Globals, error) {
	at := func(name string) *cli.Context { return globalContext(c, name) }
	g := &Globals{
		AdbPath:       at("adb").String("adb"),
		Serial:        at("serial").String("serial"),
		Package:       at("package").String("package"),
		DevicePort:    at("device-port").Int("device-port"),
		AdbServerPort: at("adb-server-port").Int("adb-server-port"),
		Pretty:        at("pretty").Bool("pretty"),
		Env:           e,
		cli:           c,
		printed:       -1,
	}
	var err error
	if g.RequestTimeout, err = ParseSeconds("request-timeout", at("request-timeout").Float64("request-timeout"), positive); err != nil {
		return nil, parseError(err)
	}
	if g.StartupTimeout, err = ParseSeconds("startup-timeout", at("startup-timeout").Float64("startup-timeout"), positive); err != nil {
		return nil, parseError(err)
	}
	if g.DevicePort < 1 || g.DevicePort > 65535 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--device-port must be between 1 and 65535")
	}
	if g.AdbServerPort < 1 || g.AdbServerPort > 65535 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--adb-server-port (ANDROID_ADB_SERVER_PORT) must be between 1 and 65535")
	}
	if !protocol.ValidPackageName(g.Package) {
		return nil, fault.Usage(fault.CodeInvalidOption, "--package must look like com.example.app")
	}
	if f, ok := e.Stderr.(*os.File); ok {
		g.Progress = progress.New(f, e.Getenv, nil)
	}
	g.Events = &deviceTally{line: g.Progress}
	return g, nil
}

// Changed reports whether the user gave the flag name on the command line
// (or through its environment variable), as gh's Flags().Changed does.
func (g *Globals) Changed(name string) bool { return g.cli.IsSet(name) }

// Args are the command's positional arguments.
func (g *Globals) Args() []string { return g.cli.Args().Slice() }

// Selector is how this invocation reaches devices: the adb server the
// globals name, or the device Env.Transport hands in.
func (g *Globals) Selector() device.Selector {
	return device.Selector{AdbPath: g.AdbPath, AdbServerPort: g.AdbServerPort, Connect: g.Env.Transport}
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
