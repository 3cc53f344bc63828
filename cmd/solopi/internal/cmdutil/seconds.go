package cmdutil

import (
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
)

// SecondsRule is what a seconds value may be.
type SecondsRule struct {
	// NonNegative allows 0 ("off", or no pause).
	NonNegative bool
	// Max is the largest value in seconds (0: 1e7).
	Max float64
}

var positive = SecondsRule{}

// NonNegative allows 0 up to 1e7 seconds.
var NonNegative = SecondsRule{NonNegative: true}

// ParseSeconds is the one reader of seconds values (timeouts, budgets,
// poll intervals): a finite number of seconds within rule, as a duration;
// anything else is an invalid_option usage error naming the flag.
func ParseSeconds(name string, v float64, rule SecondsRule) (time.Duration, error) {
	limit := rule.Max
	if limit == 0 {
		limit = 1e7
	}
	switch {
	case math.IsNaN(v) || v > limit || v < 0 || (v == 0 && !rule.NonNegative):
		if !rule.NonNegative {
			return 0, fault.Usagef(fault.CodeInvalidOption, "--%s must be a positive number of seconds", name)
		}
		if rule.Max != 0 {
			return 0, fault.Usagef(fault.CodeInvalidOption, "--%s must be between 0 and %g seconds", name, rule.Max)
		}
		return 0, fault.Usagef(fault.CodeInvalidOption, "--%s must be a non-negative number of seconds", name)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// secondsFlag is a flag of seconds (a float on the command line, as
// solopi-ai's) that the command adapters read into Into with ParseSeconds
// before the command runs, so that a bad value is a parse error (as
// solopi-ai's argparse type check) and never reaches a device.
type secondsFlag struct {
	cli.Float64Flag
	Into *time.Duration
	Rule SecondsRule
	raw  float64
}

// Seconds is a positive seconds flag with a default, read into into.
func Seconds(name, usage string, def float64, into *time.Duration) *secondsFlag {
	f := &secondsFlag{Into: into}
	f.Float64Flag = cli.Float64Flag{Name: name, Usage: usage, Value: def, Destination: &f.raw}
	return f
}

// readSeconds reads every seconds flag of the command, in flag order.
func readSeconds(c *cli.Context) error {
	for _, fl := range c.Command.Flags {
		s, ok := fl.(*secondsFlag)
		if !ok {
			continue
		}
		d, err := ParseSeconds(s.Name, s.raw, s.Rule)
		if err != nil {
			return parseError(err)
		}
		*s.Into = d
	}
	return nil
}
