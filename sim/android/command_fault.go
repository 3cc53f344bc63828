package android

import (
	"fmt"
	"io"
	"slices"

	"github.com/solopi-dev/solopi/sim/android/shell"
)

// CommandOutput is what one run of a shell command prints and returns
// under OverrideCommand.
type CommandOutput struct {
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Exit   int    `json:"exit,omitempty"`
}

// commandOverride answers the runs of one command whose arguments start
// with args, in order, instead of running it (a fault: a vendor build's
// am or monkey, a broken logcat).
type commandOverride struct {
	args    []string
	outputs []CommandOutput
}

// OverrideCommand makes the next len(outputs) runs of the shell command
// name (as typed: "am", "logcat") whose arguments begin with args print
// outputs[0], outputs[1], … instead of running; after that the command
// runs normally again. It replaces an earlier override of that command.
// No outputs removes the override.
func (p *Phone) OverrideCommand(name string, args []string, outputs ...CommandOutput) error {
	if _, ok := p.commandTable()[name]; !ok {
		return fmt.Errorf("android: override: no shell command %q", name)
	}
	p.view(func() {
		if len(outputs) == 0 {
			delete(p.overrides, name)
			return
		}
		if p.overrides == nil {
			p.overrides = map[string]*commandOverride{}
		}
		p.overrides[name] = &commandOverride{args: slices.Clone(args), outputs: slices.Clone(outputs)}
	})
	return nil
}

// nextOverride spends the override answer for one run, if any.
func (p *Phone) nextOverride(name string, args []string) (CommandOutput, bool) {
	var out CommandOutput
	var ok bool
	p.view(func() {
		o := p.overrides[name]
		if o == nil || len(args) < len(o.args) || !slices.Equal(args[:len(o.args)], o.args) {
			return
		}
		out, ok = o.outputs[0], true
		if o.outputs = o.outputs[1:]; len(o.outputs) == 0 {
			delete(p.overrides, name)
		}
	})
	return out, ok
}

// shellCommands is the command table with the overrides in front.
func (p *Phone) shellCommands() map[string]shell.Command {
	m := p.commandTable()
	for name, run := range m {
		m[name] = func(pr *shell.Proc, args []string) int {
			if out, ok := p.nextOverride(name, args); ok {
				_, _ = io.WriteString(pr.Stdout, out.Stdout)
				_, _ = io.WriteString(pr.Stderr, out.Stderr)
				return out.Exit
			}
			return run(pr, args)
		}
	}
	return m
}
