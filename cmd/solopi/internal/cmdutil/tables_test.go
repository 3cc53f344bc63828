package cmdutil_test

import (
	"io"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/agentcmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/devicecmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/managedcmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/plannercmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/sessioncmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
)

// mainCommands are the commands cmd/solopi defines itself (its tests
// check that every command of the app is in a group and has an example).
var mainCommands = []string{"version", "schema", "actions", "sim", "sim serve", "demo", "report", "completion",
	"model-verify", "model-health", "model-install", "model-status", "model-activate", "model-rollback",
	"model-infer", "model-benchmark", "model-release-check"}

// The wiring's tables (groups, examples, usage rules) name only commands
// and flags that exist: an entry left behind by a rename is found here.
func TestTablesNameRealCommands(t *testing.T) {
	t.Parallel()
	e := cmdutil.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	cmds := map[string]*cli.Command{}
	for _, group := range []func(cmdutil.Env) []*cli.Command{devicecmd.Commands, replaycmd.Commands, agentcmd.Commands,
		sessioncmd.Commands, plannercmd.Commands, verifycmd.Commands, managedcmd.Commands} {
		for _, c := range group(e) {
			cmds[c.Name] = c
		}
	}
	exists := func(path string) bool { _, ok := cmds[path]; return ok || slices.Contains(mainCommands, path) }
	groupCmds, exampleCmds, ruleFlags := cmdutil.TableEntries()
	seen := map[string]bool{}
	for _, name := range groupCmds {
		if !exists(name) {
			t.Errorf("the help groups name %q, no command", name)
		}
		if seen[name] {
			t.Errorf("%q is in two help groups", name)
		}
		seen[name] = true
	}
	for name := range cmds {
		if !seen[name] {
			t.Errorf("command %q is in no help group", name)
		}
	}
	for _, path := range exampleCmds {
		if !exists(path) {
			t.Errorf("the examples table names %q, no command", path)
		}
	}
	for path, flags := range ruleFlags {
		c, ok := cmds[path]
		if !ok {
			t.Errorf("a usage rule names %q, no command of a group", path)
			continue
		}
		for _, f := range flags {
			if !cmdutil.HasFlag(c, f) {
				t.Errorf("the usage rule of %s names --%s, no flag of it", path, f)
			}
		}
	}
}

// flagNames, the cheap reading of a flag's names the app uses while it
// builds its command table, gives what urfave/cli's Names gives for every
// flag of every command and every global flag.
func TestFlagNamesAreCLIs(t *testing.T) {
	t.Parallel()
	e := cmdutil.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	flags := cmdutil.GlobalFlags()
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			flags = append(flags, c.Flags...)
			walk(c.Subcommands)
		}
	}
	for _, group := range []func(cmdutil.Env) []*cli.Command{devicecmd.Commands, replaycmd.Commands, agentcmd.Commands,
		sessioncmd.Commands, plannercmd.Commands, verifycmd.Commands, managedcmd.Commands} {
		walk(group(e))
	}
	if len(flags) < 300 {
		t.Fatalf("only %d flags", len(flags))
	}
	for _, f := range flags {
		if got, want := cmdutil.FlagNames(f), f.Names(); !slices.Equal(got, want) {
			t.Errorf("%T: names %q, urfave/cli says %q", f, got, want)
		}
	}
}
