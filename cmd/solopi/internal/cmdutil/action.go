package cmdutil

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"
)

// The two adapters from a command's run function to urfave/cli: Local for
// a command that touches no device, OnDevice for one that reaches the
// device the globals select. Both read the globals and the command's
// seconds flags (a bad value is a parse error, the parser's text on stderr,
// before anything runs), run the command, and finish it: print its one
// JSON object and end the process with the exit code (ExitCode, returned
// to Run).

// Local adapts a command that touches no device.
func Local(e Env, run func(ctx context.Context, g *Globals) (Result, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		g, err := readGlobals(c, e)
		var res Result
		if err == nil {
			err = readSeconds(c)
		}
		var parse usageError
		if errors.As(err, &parse) {
			if g != nil {
				g.Progress.Done()
			}
			return parse
		}
		if err == nil {
			res, err = run(c.Context, g)
		}
		return finish(e, g, res, err)
	}
}

// OnDevice adapts a device command: run gets the device dependencies, the
// one place sessions are opened.
func OnDevice(e Env, run func(ctx context.Context, d DeviceDeps) (Result, error)) cli.ActionFunc {
	return Local(e, func(ctx context.Context, g *Globals) (Result, error) { return onDevice(ctx, g, run) })
}

// exitCode is how a finished command hands its exit code to Run.
type exitCode int

func (c exitCode) Error() string { return "exit status" }

// finish prints the command's result or error (unless it printed its
// object already) and returns its exit code.
func finish(e Env, g *Globals, res Result, err error) error {
	pretty := g != nil && g.Pretty
	if g != nil {
		// The status line goes before the JSON: on a terminal both share
		// the screen.
		g.Progress.Done()
		if g.printed >= 0 && err == nil {
			return exitCode(g.printed)
		}
	}
	return exitCode(printObject(e.Stdout, res, err, pretty))
}

// Print prints the command's one object now, for a command that serves
// until it is interrupted after it announced itself (`sim serve`); the
// adapter then prints nothing more, and the exit code is this one's. It
// returns the exit code.
func (g *Globals) Print(res Result) int {
	g.Progress.Done()
	g.printed = printObject(g.Env.Stdout, res, nil, g.Pretty)
	return g.printed
}
