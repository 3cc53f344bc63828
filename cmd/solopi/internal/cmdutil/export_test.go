package cmdutil

import "github.com/urfave/cli/v2"

// TableEntries are the command paths the wiring's tables name, and the
// flags each usage rule names (for the tables' test, which sees every
// command group).
func TableEntries() (groupCommands, exampleCommands []string, ruleFlags map[string][]string) {
	for _, g := range groups {
		groupCommands = append(groupCommands, g.Commands...)
	}
	for path := range examples {
		exampleCommands = append(exampleCommands, path)
	}
	ruleFlags = map[string][]string{}
	for path, r := range usageRules {
		flags := append(append([]string{}, r.required...), r.positive...)
		for _, g := range r.oneOf {
			flags = append(flags, g.Flags...)
		}
		for f := range r.choices {
			flags = append(flags, f)
		}
		for f := range r.usage {
			flags = append(flags, f)
		}
		ruleFlags[path] = flags
	}
	return groupCommands, exampleCommands, ruleFlags
}

// HasFlag reports whether c has a flag named name.
func HasFlag(c *cli.Command, name string) bool { return flagNamed(c.Flags, name) != nil }

// FlagNames is flagNames, for the test that holds it equal to urfave/cli's
// Names on every flag of every command.
var FlagNames = flagNames

// GlobalFlags are the global flags.
var GlobalFlags = globalFlags
