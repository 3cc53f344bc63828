package cmdutil

import "github.com/urfave/cli/v2"

// flagNames is fl.Names() without its cost. urfave/cli splits and trims
// every name with a regular expression on each call, and every run reads
// the names of every command's flags while it builds the command table:
// that was a third of `solopi version`'s time in process. A flag of ours
// is its Name and its Aliases (TestFlagNamesAreCLIs holds the two equal
// for every flag of every command).
func flagNames(fl cli.Flag) []string {
	switch f := fl.(type) {
	case *cli.StringFlag:
		return withAliases(f.Name, f.Aliases)
	case *cli.BoolFlag:
		return withAliases(f.Name, f.Aliases)
	case *cli.IntFlag:
		return withAliases(f.Name, f.Aliases)
	case *cli.Int64Flag:
		return withAliases(f.Name, f.Aliases)
	case *cli.Float64Flag:
		return withAliases(f.Name, f.Aliases)
	case *cli.StringSliceFlag:
		return withAliases(f.Name, f.Aliases)
	case *secondsFlag:
		return withAliases(f.Name, f.Aliases)
	}
	return fl.Names()
}

func withAliases(name string, aliases []string) []string {
	return append([]string{name}, aliases...)
}
