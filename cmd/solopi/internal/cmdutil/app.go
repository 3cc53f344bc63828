package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// usageError marks a parser failure: text on stderr, exit by fault.Invalid.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// App describes the binary: its version and its commands.
type App struct {
	Version  string
	Commands func(e Env) []*cli.Command
}

// newApp builds the app for one invocation: its commands bind their flags
// to fresh options. An unknown command on the help path is the only
// outcome the parser decides itself (unknown).
func (a App) newApp(e Env, unknown *bool) *cli.App {
	app := &cli.App{
		Name:      "solopi",
		Usage:     "drive Android test automation through SoloPi",
		UsageText: "solopi [global options] <command> [command options]",
		Description: "Every command prints exactly one JSON object on stdout. Exit codes: 0 ok, 2 business failure or\n" +
			"not ready, 3 usage or device selection, 4 adb/HTTP/protocol error, 124 timeout, 130 interrupted.\n\n" +
			"Examples:\n  solopi demo\n  solopi --serial emulator-5554 doctor\n  solopi run --case smoke --artifacts ./out",
		Version:              a.Version,
		Writer:               e.Stdout,
		ErrWriter:            e.Stderr,
		Flags:                GlobalFlags(),
		Commands:             a.Commands(e),
		HideVersion:          true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageError{msg: err.Error()}
		},
		CommandNotFound: func(c *cli.Context, name string) {
			*unknown = true
			fmt.Fprintf(e.Stderr, "solopi: unknown command %q; run 'solopi help' for the list\n", name)
		},
	}
	// A usage error in any command is the parser's text on stderr: stdout
	// stays empty so that scripts never mistake help text for JSON.
	var mark func(cmds []*cli.Command)
	mark = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.OnUsageError = app.OnUsageError
			mark(c.Subcommands)
		}
	}
	mark(app.Commands)
	app.Action = func(c *cli.Context) error {
		*unknown = true
		if c.Args().Present() {
			fmt.Fprintf(e.Stderr, "solopi: unknown command %q; run 'solopi help' for the list\n", c.Args().First())
			return nil
		}
		c.App.Writer = e.Stderr
		return cli.ShowAppHelp(c)
	}
	return app
}

// helpRequested reports whether the user asked for help explicitly; only
// then does help text go to stdout. urfave/cli also prints a command's help
// when a required flag is missing, and that must land on stderr with the
// parser's message so that stdout never holds anything but JSON.
func helpRequested(args []string) bool {
	for i, a := range args {
		if a == "--help" || a == "-h" || (a == "help" && i > 0) {
			return true
		}
		if a == "--" {
			break
		}
	}
	return false
}

// Run executes the CLI with args (args[0] is the program name) and returns
// the process exit code.
func (a App) Run(ctx context.Context, args []string, e Env) int {
	unknown := false
	app := a.newApp(e, &unknown)
	if !helpRequested(args) {
		app.Writer = e.Stderr
	}
	err := app.RunContext(ctx, args)
	var code ExitCode
	switch {
	case errors.As(err, &code):
		return int(code)
	case err != nil:
		var ue usageError
		msg := err.Error()
		if errors.As(err, &ue) {
			msg = ue.msg
		}
		fmt.Fprintf(e.Stderr, "solopi: %s\nRun 'solopi help' or 'solopi <command> --help' for usage.\n", msg)
		return outcome.ExitFor(fault.Invalid)
	case unknown || len(args) <= 1:
		// An unknown command, or a bare invocation that printed usage
		// text: nothing ran.
		return outcome.ExitFor(fault.Invalid)
	}
	// Help was printed as asked.
	return outcome.ExitOK
}
