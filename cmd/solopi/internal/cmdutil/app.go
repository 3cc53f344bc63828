package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// usageError marks a parser failure: text on stderr, exit by fault.Invalid.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// parseError is a flag value's check failing, as the parser says it.
func parseError(err error) usageError { return usageError{msg: fault.From(err).Message} }

// App describes the binary: its version and its commands.
type App struct {
	// Version is what --version prints after "solopi version ".
	Version  string
	Commands func(e Env) []*cli.Command
}

// commandSpec is one runnable command of the app as the parser sees it:
// its path ("sim serve"), its one line and the command.
type commandSpec struct {
	Path    string
	Usage   string
	Command *cli.Command
}

// built is the app of one invocation with what the wiring derived.
type built struct {
	app   *cli.App
	specs []commandSpec
}

// build builds the app for one invocation: its commands bind their flags
// to fresh options. Every runnable command also accepts the global flags
// after its name, checks its requirements before it runs (usage rules),
// lists the global flags and its examples in its help, and answers a
// parse error with the parser's text and a suggestion.
func (a App) build(e Env, unknown *bool, args []string) built {
	cmds := append(a.Commands(e), newCmdCompletion(e))
	// Only a command args name can run or show its help: build prepares
	// those (their usage rules, the global flags they accept, their help
	// text) and leaves the others as declared. Preparing all of them was a
	// third of `solopi version`'s time. The completion script lists every
	// command's flags, so a completion prepares all.
	named := map[string]bool{}
	for _, a := range args[min(1, len(args)):] {
		named[a] = true
	}
	prepared := func(c *cli.Command) bool {
		if named["completion"] || named[c.Name] {
			return true
		}
		for _, al := range c.Aliases {
			if named[al] {
				return true
			}
		}
		return false
	}
	app := &cli.App{
		Name:                 "solopi",
		Usage:                "drive Android test automation through SoloPi",
		UsageText:            "solopi [global options] <command> [command options]",
		Writer:               e.Stdout,
		ErrWriter:            e.Stderr,
		Flags:                append(globalFlags(), &cli.BoolFlag{Name: "version", Usage: "print the version and exit", DisableDefaultText: true}),
		Commands:             cmds,
		HideVersion:          true,
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
	app.OnUsageError = func(c *cli.Context, err error, isSub bool) error {
		msg := err.Error()
		if s := flagSuggestion(c, err); s != "" {
			msg += "; did you mean " + s + "?"
		}
		return usageError{msg: msg}
	}
	app.CommandNotFound = func(c *cli.Context, name string) {
		*unknown = true
		unknownCommand(e.Stderr, name, cmds)
	}
	var specs []commandSpec
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(prefix + " " + c.Name)
			// A usage error in any command is the parser's text on stderr:
			// stdout stays empty so that scripts never mistake help text
			// for JSON.
			c.OnUsageError = app.OnUsageError
			if !prepared(c) {
				if len(c.Subcommands) > 0 {
					walk(path, c.Subcommands)
				} else {
					specs = append(specs, commandSpec{Path: path, Usage: c.Usage, Command: c})
				}
				continue
			}
			if len(c.Subcommands) > 0 {
				c.CustomHelpTemplate = cli.SubcommandHelpTemplate + literal(examplesSection(path, c))
				walk(path, c.Subcommands)
				continue
			}
			spec := commandSpec{Path: path, Usage: c.Usage, Command: c}
			if !c.SkipFlagParsing {
				applyUsageRules(path, c, e.Getenv)
				// Every run builds every command: the names are read once
				// per flag (urfave/cli's Names is not cheap).
				own := map[string]bool{}
				for _, fl := range c.Flags {
					for _, n := range flagNames(fl) {
						own[n] = true
					}
				}
				for i, g := range globalFlags() {
					if !own[globalNames[i]] {
						hide(g)
						c.Flags = append(c.Flags, g)
					}
				}
			}
			c.CustomHelpTemplate = cli.CommandHelpTemplate + literal(globalSection(c)+examplesSection(path, c))
			specs = append(specs, spec)
		}
	}
	walk("", app.Commands)
	app.CustomAppHelpTemplate = literal(appHelp(specs))
	app.Action = func(c *cli.Context) error {
		if c.Bool("version") {
			fmt.Fprintf(e.Stdout, "solopi version %s\n", a.Version)
			return nil
		}
		*unknown = true
		if c.Args().Present() {
			unknownCommand(e.Stderr, c.Args().First(), cmds)
			return nil
		}
		c.App.Writer = e.Stderr
		return cli.ShowAppHelp(c)
	}
	return built{app: app, specs: specs}
}

// globalNames are the global flags' names, in globalFlags' order.
var globalNames = func() []string {
	var out []string
	for _, g := range globalFlags() {
		out = append(out, flagNames(g)[0])
	}
	return out
}()

// unknownCommand says that name is no command (nor one of more), with
// the nearest one.
func unknownCommand(w io.Writer, name string, cmds []*cli.Command, more ...string) {
	names := slices.Clone(more)
	for _, c := range cmds {
		names = append(names, c.Names()...)
	}
	names = append(names, "help")
	hint := ""
	if s := nearest(name, names); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	fmt.Fprintf(w, "solopi: unknown command %q%s\nRun 'solopi help' for the list.\n", name, hint)
}

// helpRequested reports whether the user asked for help explicitly; only
// then does help text go to stdout. urfave/cli also prints a command's help
// on some parse errors, and that must land on stderr with the parser's
// message so that stdout never holds anything but JSON.
func helpRequested(args []string) bool {
	for _, a := range args[1:] {
		// "help" also names a command group's help subcommand (sim help).
		if a == "--help" || a == "-h" || a == "help" {
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
	b := a.build(e, &unknown, args)
	app := b.app
	if len(args) > 1 {
		if i := firstArg(args); i > 0 && args[i] == "help" {
			// solopi help [GROUP | COMMAND [SUBCOMMAND]]
			rest := args[i+1:]
			if len(rest) == 0 {
				fmt.Fprint(e.Stdout, appHelp(b.specs))
				return outcome.ExitOK
			}
			if g, ok := groupNamed(rest[0]); ok {
				fmt.Fprint(e.Stdout, groupHelp(g, b.specs))
				return outcome.ExitOK
			}
			if app.Command(rest[0]) == nil {
				unknownCommand(e.Stderr, rest[0], app.Commands, groupNames()...)
				return outcome.ExitFor(fault.Invalid)
			}
			args = append(append(slices.Clone(args[:i]), rest...), "--help")
		}
	}
	if !helpRequested(args) {
		app.Writer = e.Stderr
	}
	err := app.RunContext(ctx, args)
	var code exitCode
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
	// Help or the version was printed as asked.
	return outcome.ExitOK
}

// firstArg is the index of the first argument that is neither a global
// flag nor a global flag's value (0: none).
func firstArg(args []string) int {
	valued := map[string]bool{}
	for _, f := range globalFlags() {
		if _, isBool := f.(*cli.BoolFlag); !isBool {
			for _, n := range flagNames(f) {
				valued[n] = true
			}
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return 0
		}
		if !strings.HasPrefix(a, "-") {
			return i
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && valued[name] {
			i++
		}
	}
	return 0
}

// hide keeps a global flag out of a command's own OPTIONS (its help lists
// the global flags in their own section).
func hide(fl cli.Flag) {
	// A command's copy of a global flag is hidden and reads no environment
	// variable: the app's flag reads it, so the copy counts as set only when
	// the flag was given after the command (globalContext).
	switch f := fl.(type) {
	case *cli.StringFlag:
		f.Hidden, f.EnvVars = true, nil
	case *cli.IntFlag:
		f.Hidden, f.EnvVars = true, nil
	case *cli.Float64Flag:
		f.Hidden, f.EnvVars = true, nil
	case *cli.BoolFlag:
		f.Hidden, f.EnvVars = true, nil
	}
}

// globalContext is the context whose value of the global flag name counts:
// the command's when the flag was given after the command, else the app's.
func globalContext(c *cli.Context, name string) *cli.Context {
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && slices.Contains(ctx.LocalFlagNames(), name) {
			return ctx
		}
	}
	// Not after the command: the app's flag holds what was given before
	// it, else its environment variable or default.
	app := c
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil {
			app = ctx
		}
	}
	return app
}

// literal makes text safe to append to a help template.
func literal(s string) string { return strings.ReplaceAll(s, "{{", `{{"{{"}}`) }
