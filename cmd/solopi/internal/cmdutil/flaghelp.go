package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// urfaveFlagString is urfave/cli's own rendering of a flag's help line.
var urfaveFlagString = cli.FlagStringer

func init() { cli.FlagStringer = flagString }

// flagString is a flag's help line without a doubled default: a flag whose
// usage says its default in words ("(default)", "(default: append)",
// "(default 0.5 for adb ...)") does not also get urfave/cli's
// "(default: 0)", and a boolean flag does not get "(default: false)".
func flagString(f cli.Flag) string {
	s := urfaveFlagString(f)
	d, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return s
	}
	suffix := " (default: " + d.GetDefaultText() + ")"
	_, isBool := f.(*cli.BoolFlag)
	if strings.Contains(d.GetUsage(), "(default") || (isBool && d.GetDefaultText() == "false") {
		s = strings.Replace(s, suffix, "", 1)
	}
	return s
}
