package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas"
)

// Every command that prints JSON has a schema named after it (a
// subcommand's schema joins the names with '-').
func TestEveryCommandHasASchema(t *testing.T) {
	t.Parallel()
	cmds := commands(cmdutil.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	names := schemas.Names()
	var walk func(prefix string, cmds []*cli.Command)
	count := 0
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimPrefix(prefix+"-"+c.Name, "-")
			if len(c.Subcommands) > 0 {
				walk(name, c.Subcommands)
				continue
			}
			count++
			if !slices.Contains(names, name) {
				t.Errorf("command %q has no schemas/%s.schema.json", name, name)
			}
		}
	}
	walk("", cmds)
	if count < 75 {
		t.Errorf("only %d commands found", count)
	}
}
