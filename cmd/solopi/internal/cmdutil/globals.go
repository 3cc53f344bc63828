package cmdutil

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// Env is the process environment a command sees; tests supply their own.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Stdin is the command's standard input (planner-parse reads the model
	// answer from it; agent-run asks a human on it when it is a terminal).
	Stdin *os.File
	// Transport, when set, replaces device selection through the adb
	// server: `solopi demo` and in-process tests hand in a simulated device
	// so that the whole command path (flags, session, JSON, exit code) runs
	// unchanged.
	Transport func(ctx context.Context) (device.Transport, error)
	// Secrets, when set, replaces the user cache's store of case-import's
	// records of encrypted parameters (the demo keeps its own).
	Secrets *replay.SecretsStore
}

// SecretsStore is where case-import records which parameters are
// encrypted and where run looks them up.
func (e Env) SecretsStore() replay.SecretsStore {
	if e.Secrets != nil {
		return *e.Secrets
	}
	return replay.DefaultSecretsStore()
}

// Globals are the options shared by every command, compatible with the
// upstream solopi-ai CLI (they must come before the command name).
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
}

// GlobalFlags are solopi-ai's global options, with its names and defaults.
func GlobalFlags() []cli.Flag {
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
	}
}

// Seconds converts a positive, finite flag value to a duration.
func Seconds(name string, v float64) (time.Duration, error) {
	if !(v > 0) || v > 1e7 {
		return 0, fault.Usagef("invalid_option", "--%s must be a positive number of seconds", name)
	}
	return time.Duration(v * float64(time.Second)), nil
}

func readGlobals(c *cli.Context, e Env) (*Globals, error) {
	g := &Globals{
		AdbPath:       c.String("adb"),
		Serial:        c.String("serial"),
		Package:       c.String("package"),
		DevicePort:    c.Int("device-port"),
		AdbServerPort: c.Int("adb-server-port"),
		Pretty:        c.Bool("pretty"),
		Env:           e,
	}
	var err error
	if g.RequestTimeout, err = Seconds("request-timeout", c.Float64("request-timeout")); err != nil {
		return nil, err
	}
	if g.StartupTimeout, err = Seconds("startup-timeout", c.Float64("startup-timeout")); err != nil {
		return nil, err
	}
	if g.DevicePort < 1 || g.DevicePort > 65535 {
		return nil, fault.Usage("invalid_option", "--device-port must be between 1 and 65535")
	}
	if g.AdbServerPort < 1 || g.AdbServerPort > 65535 {
		return nil, fault.Usage("invalid_option", "--adb-server-port (ANDROID_ADB_SERVER_PORT) must be between 1 and 65535")
	}
	if !protocol.ValidPackageName(g.Package) {
		return nil, fault.Usage("invalid_option", "--package must look like com.example.app")
	}
	if f, ok := e.Stderr.(*os.File); ok {
		g.Progress = progress.New(f, e.Getenv, nil)
	}
	g.Events = &deviceTally{line: g.Progress}
	return g, nil
}

// Action adapts a command's run function to urfave/cli: it reads the globals,
// runs the command, prints exactly one JSON object and records the exit code.
func Action(exit *int, e Env, fn func(ctx context.Context, g *Globals, c *cli.Context) (outcome.Result, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		g, err := readGlobals(c, e)
		var res outcome.Result
		if err == nil {
			res, err = fn(c.Context, g, c)
		}
		pretty := g != nil && g.Pretty
		if g != nil {
			// The status line goes before the JSON: on a terminal both
			// share the screen.
			g.Progress.Done()
		}
		*exit = outcome.Print(e.Stdout, res, err, pretty)
		return nil
	}
}
