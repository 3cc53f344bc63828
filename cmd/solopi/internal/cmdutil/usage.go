package cmdutil

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// A usage error is the parser's verdict on the command line: a required
// flag missing, a value of the wrong type or outside its choices, an
// unknown flag or command. It is text on stderr, nothing on stdout, exit 3
// (solopi-ai's argparse prints the same class on stderr, with exit 2: see
// the README's differences). Everything about a command line that the
// parser can decide is decided here, before a command's run function, so
// that no such error ever reaches a device or prints JSON.

// oneOf is a requirement met by any of its flags or by its environment
// variable (Env, "" for none); with Exclusive, by exactly one of its
// flags (argparse's required mutually exclusive group).
type oneOf struct {
	Flags     []string
	Env       string
	Exclusive bool
}

func (o oneOf) String() string {
	names := make([]string, 0, len(o.Flags)+1)
	for _, f := range o.Flags {
		names = append(names, "--"+f)
	}
	if o.Env != "" {
		names = append(names, "$"+o.Env)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// usageRule is what the parser checks for one command beyond the flags'
// own types: flags that must be given, groups of which one must be, the
// closed sets of values a flag takes, and integer flags that must be
// positive (solopi-ai's argparse type validators).
type usageRule struct {
	required []string
	oneOf    []oneOf
	choices  map[string][]string
	positive []string
	// usage replaces flags' usage texts and usageText the command's, where
	// the rule changes what they said (until the command's own text says
	// it).
	usage     map[string]string
	usageText string
}

// agentIdentity is the requirement of every command on an Agent session:
// the session and its owner's token (a flag, a file or the environment).
var agentIdentity = usageRule{
	required: []string{"session-id"},
	oneOf:    []oneOf{{Flags: []string{"owner-token", "owner-token-file"}, Env: "SOLOPI_AGENT_OWNER_TOKEN"}},
}

// usageRules are the checks per command path (a subcommand's path joins
// the names with a space) that the command's own flags do not declare.
// Flags declared Required are checked by the same code.
var usageRules = map[string]usageRule{
	"agent-observe":  agentIdentity,
	"agent-receipt":  agentIdentity.with(usageRule{required: []string{"step-id"}}),
	"agent-status":   agentIdentity,
	"agent-timeline": agentIdentity,
	"agent-pause":    agentIdentity,
	"agent-resume":   agentIdentity,
	"agent-end":      agentIdentity,
	"agent-cancel":   agentIdentity,
	// An action carries the caller's idempotency key (--step-id) and names
	// the observation it was decided on, as solopi-ai requires.
	"agent-act": agentIdentity.with(usageRule{
		required: []string{"step-id", "observation-id", "action"},
		choices: map[string][]string{
			"action":    {"click", "longClick", "input", "back", "home", "scroll", "wait"},
			"direction": {"up", "down", "left", "right"},
		},
		usage: map[string]string{
			"step-id":        "idempotency key of this step: reuse it to retry (the device returns the stored receipt)",
			"observation-id": "the observation the action was decided on (agent-session-start's, agent-observe's or the last act's settledObservationId)",
		},
		usageText: "solopi agent-act --session-id ID (--owner-token-file FILE | --owner-token TOKEN) --step-id ID --observation-id ID\n" +
			"   --action ACTION [--node-id ID | --resource-id R --selector-text T --description D --class-name C --package-name P --id N]\n" +
			"   [--text T] [--direction up|down|left|right] [--duration-ms MS] [--distance N]\n\n" +
			"A selector must match exactly one node of that observation. Reuse --step-id to retry: the device returns the\n" +
			"stored receipt; another action under the same --step-id is refused (step_id_conflict).",
	}),
	"run":                 {oneOf: []oneOf{{Flags: []string{"case", "file", "dir"}}}, choices: videoChoice},
	"run-batch":           {oneOf: []oneOf{{Flags: []string{"case", "cases-file", "file", "dir"}}}, choices: videoChoice},
	"perf-start":          {oneOf: []oneOf{{Flags: []string{"target-package", "global"}, Exclusive: true}}},
	"perf-display-start":  {oneOf: []oneOf{{Flags: []string{"target-package", "global"}, Exclusive: true}}},
	"verify-init":         {oneOf: []oneOf{{Flags: []string{"from-case", "case"}, Exclusive: true}}},
	"run-repeat":          {positive: []string{"times"}, choices: videoChoice},
	"agent-run":           {required: []string{"task"}, choices: map[string][]string{"device-mode": {"solopi", "adb"}, "video": videoModes}},
	"managed-purge":       {required: []string{"artifacts-root"}},
	"managed-worker-once": {choices: videoChoice},
	"managed-worker-loop": {choices: videoChoice},
	"startup-time":        {choices: map[string][]string{"mode": {"cold", "warm"}}},
	"verify-run":          {choices: map[string][]string{"decision-provider": {"static", "on-device", "cloud", "vision"}, "video": videoModes}},
	"case-step-add":       {oneOf: []oneOf{{Flags: []string{"step-file", "step"}, Exclusive: true}, {Flags: []string{"output", "in-place"}, Exclusive: true}}},
	"case-step-update":    {oneOf: []oneOf{{Flags: []string{"step-file", "step"}, Exclusive: true}, {Flags: []string{"output", "in-place"}, Exclusive: true}}},
	"case-step-delete":    {oneOf: []oneOf{{Flags: []string{"output", "in-place"}, Exclusive: true}}},
	"case-step-move":      {oneOf: []oneOf{{Flags: []string{"output", "in-place"}, Exclusive: true}}},
	"case-step-copy":      {oneOf: []oneOf{{Flags: []string{"output", "in-place"}, Exclusive: true}}},
}

func (r usageRule) with(o usageRule) usageRule {
	out := usageRule{
		required:  append(slices.Clone(r.required), o.required...),
		oneOf:     append(slices.Clone(r.oneOf), o.oneOf...),
		positive:  append(slices.Clone(r.positive), o.positive...),
		choices:   map[string][]string{},
		usage:     o.usage,
		usageText: o.usageText,
	}
	for k, v := range r.choices {
		out.choices[k] = v
	}
	for k, v := range o.choices {
		out.choices[k] = v
	}
	return out
}

// requirements are what a command line of one command must hold: the
// flags it must name, the groups of which it must name one, the closed
// sets of values of its flags.
type requirements struct {
	Flags   []string
	OneOf   []oneOf
	Choices map[string][]string
}

// applyUsageRules moves the command's requirements (its rule and the flags
// it declares Required) into one check that runs before the command:
// urfave/cli's own check would print the whole help before the message.
// It marks the required flags and the closed sets in their usage text.
func applyUsageRules(path string, c *cli.Command, getenv func(string) string) {
	rule := usageRules[path]
	req := requirements{OneOf: rule.oneOf, Choices: rule.choices}
	if rule.usageText != "" {
		c.UsageText = rule.usageText
	}
	for _, fl := range c.Flags {
		name := flagNames(fl)[0]
		if u, ok := rule.usage[name]; ok {
			setUsage(fl, u)
		}
		if clearRequired(fl) || slices.Contains(rule.required, name) {
			req.Flags = append(req.Flags, name)
			markUsage(fl, "(required)")
		}
		if ch, ok := rule.choices[name]; ok {
			markUsage(fl, "(one of: "+strings.Join(ch, ", ")+")")
		}
	}
	for _, g := range rule.oneOf {
		note := "(required: " + g.String() + ")"
		if g.Exclusive {
			note = "(required: " + g.String() + "; only one)"
		}
		for _, f := range g.Flags {
			if fl := flagNamed(c.Flags, f); fl != nil {
				markUsage(fl, note)
			}
		}
	}
	if len(req.Flags) == 0 && len(req.OneOf) == 0 && len(req.Choices) == 0 && len(rule.positive) == 0 {
		return
	}
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		if err := checkUsage(ctx, req, rule.positive, getenv); err != nil {
			return err
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

// checkUsage is the parser's check of one command line.
func checkUsage(c *cli.Context, req requirements, positive []string, getenv func(string) string) error {
	var missing []string
	for _, f := range req.Flags {
		if !c.IsSet(f) {
			missing = append(missing, "--"+f)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return usageError{msg: fmt.Sprintf("required flag %s not set", missing[0])}
	default:
		return usageError{msg: fmt.Sprintf("required flags %s not set", strings.Join(missing, ", "))}
	}
	for _, g := range req.OneOf {
		met := g.Env != "" && getenv != nil && getenv(g.Env) != ""
		var given []string
		for _, f := range g.Flags {
			if c.IsSet(f) {
				given = append(given, "--"+f)
			}
		}
		if !met && len(given) == 0 {
			return usageError{msg: "one of " + g.String() + " is required"}
		}
		if g.Exclusive && len(given) > 1 {
			return usageError{msg: strings.Join(given, " and ") + " exclude each other"}
		}
	}
	names := make([]string, 0, len(req.Choices))
	for name := range req.Choices {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !c.IsSet(name) {
			continue
		}
		if v := c.String(name); !slices.Contains(req.Choices[name], v) {
			return usageError{msg: fmt.Sprintf("invalid value %q for flag --%s: choose %s", v, name, strings.Join(req.Choices[name], ", "))}
		}
	}
	for _, name := range positive {
		if c.IsSet(name) && c.Int64(name) < 1 {
			return usageError{msg: fmt.Sprintf("invalid value %s for flag --%s: must be greater than zero", strconv.FormatInt(c.Int64(name), 10), name)}
		}
	}
	return nil
}

// clearRequired turns urfave/cli's check of a Required flag off (the
// command's check does it) and reports whether the flag was Required.
func clearRequired(fl cli.Flag) bool {
	switch f := fl.(type) {
	case *cli.StringFlag:
		r := f.Required
		f.Required = false
		return r
	case *cli.IntFlag:
		r := f.Required
		f.Required = false
		return r
	case *cli.Int64Flag:
		r := f.Required
		f.Required = false
		return r
	case *cli.Float64Flag:
		r := f.Required
		f.Required = false
		return r
	case *cli.StringSliceFlag:
		r := f.Required
		f.Required = false
		return r
	case *cli.BoolFlag:
		r := f.Required
		f.Required = false
		return r
	case *secondsFlag:
		r := f.Required
		f.Required = false
		return r
	}
	return false
}

// markUsage appends note to the flag's usage text once.
func markUsage(fl cli.Flag, note string) {
	editUsage(fl, func(u *string) {
		if !strings.Contains(*u, note) {
			*u = strings.TrimSpace(*u + " " + note)
		}
	})
}

// setUsage replaces the flag's usage text.
func setUsage(fl cli.Flag, usage string) { editUsage(fl, func(u *string) { *u = usage }) }

// editUsage edits the usage text of the flag types the commands use.
func editUsage(fl cli.Flag, set func(*string)) {
	switch f := fl.(type) {
	case *cli.StringFlag:
		set(&f.Usage)
	case *cli.IntFlag:
		set(&f.Usage)
	case *cli.Int64Flag:
		set(&f.Usage)
	case *cli.Float64Flag:
		set(&f.Usage)
	case *cli.StringSliceFlag:
		set(&f.Usage)
	case *cli.BoolFlag:
		set(&f.Usage)
	case *secondsFlag:
		set(&f.Usage)
	}
}

func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, fl := range flags {
		if slices.Contains(flagNames(fl), name) {
			return fl
		}
	}
	return nil
}

// videoModes are --video's values (solopi/video's modes) on every command
// that records the screen.
var (
	videoModes  = []string{"off", "on-failure", "always"}
	videoChoice = map[string][]string{"video": videoModes}
)
