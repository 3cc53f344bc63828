package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The completion scripts are generated from the app's command tree: the
// commands, each command's flags and the global flags (accepted anywhere).
// A flag that takes a value completes file names for it.

func newCmdCompletion(e Env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish) for commands and flags",
		UsageText: "solopi completion bash|zsh|fish\n\nThe script is printed on stdout (not JSON); see EXAMPLES for where each shell loads it from.",
		Action: func(c *cli.Context) error {
			shell := c.Args().First()
			if c.NArg() != 1 {
				return usageError{msg: "completion takes one argument: bash, zsh or fish"}
			}
			tree := completionTree(c.App.Commands)
			var script string
			switch shell {
			case "bash":
				script = bashCompletion(tree)
			case "zsh":
				script = zshCompletion(tree)
			case "fish":
				script = fishCompletion(tree)
			default:
				return usageError{msg: fmt.Sprintf("completion: unknown shell %q; choose bash, zsh or fish", shell)}
			}
			if _, err := fmt.Fprint(e.Stdout, script); err != nil {
				return exitCode(4)
			}
			return nil
		},
	}
}

// compFlag is one flag as completion sees it.
type compFlag struct {
	names  []string // long names first
	usage  string
	valued bool
}

// compCmd is one command with its flags and subcommands.
type compCmd struct {
	name, usage string
	flags       []compFlag
	subs        []compCmd
}

func compFlags(flags []cli.Flag) []compFlag {
	var out []compFlag
	for _, f := range flags {
		cf := compFlag{names: f.Names()}
		if d, ok := f.(cli.DocGenerationFlag); ok {
			cf.usage, cf.valued = d.GetUsage(), d.TakesValue()
		}
		out = append(out, cf)
	}
	return out
}

func completionTree(cmds []*cli.Command) []compCmd {
	var out []compCmd
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		cc := compCmd{name: c.Name, usage: c.Usage, subs: completionTree(c.Subcommands)}
		if !c.SkipFlagParsing {
			cc.flags = compFlags(c.Flags)
		}
		out = append(out, cc)
	}
	return out
}

func dashed(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// flagWords are the flags' spellings on the command line.
func flagWords(fs []compFlag) []string {
	var w []string
	for _, f := range fs {
		for _, n := range f.names {
			w = append(w, dashed(n))
		}
	}
	return w
}

// valuedWords are the spellings of the flags that take a value.
func valuedWords(fs []compFlag) []string {
	var w []string
	for _, f := range fs {
		if f.valued {
			for _, n := range f.names {
				w = append(w, dashed(n))
			}
		}
	}
	return w
}

func globalComp() []compFlag {
	return append(compFlags(globalFlags()), compFlag{names: []string{"version"}, usage: "print the version and exit"},
		compFlag{names: []string{"help", "h"}, usage: "show help"})
}

// allValued is every spelling of a flag that takes a value, anywhere.
func allValued(tree []compCmd) []string {
	set := valuedWords(globalComp())
	var walk func(cs []compCmd)
	walk = func(cs []compCmd) {
		for _, c := range cs {
			set = append(set, valuedWords(c.flags)...)
			walk(c.subs)
		}
	}
	walk(tree)
	slices.Sort(set)
	return slices.Compact(set)
}

func names(cs []compCmd) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.name)
	}
	return n
}

func bashCompletion(tree []compCmd) string {
	var b strings.Builder
	b.WriteString("# bash completion for solopi: source <(solopi completion bash)\n_solopi() {\n" +
		"    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=\"\" sub=\"\" i w words\n" +
		"    for ((i = 1; i < COMP_CWORD; i++)); do\n        w=${COMP_WORDS[i]}\n        case $w in\n")
	fmt.Fprintf(&b, "            %s) ((i++)) ;;\n", strings.Join(allValued(tree), "|"))
	b.WriteString("            -*) ;;\n            *) if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi ;;\n" +
		"        esac\n    done\n    case $prev in\n")
	fmt.Fprintf(&b, "        %s) COMPREPLY=(); return ;;\n", strings.Join(allValued(tree), "|"))
	b.WriteString("    esac\n    case $cmd in\n")
	fmt.Fprintf(&b, "        \"\") words=\"%s help\" ;;\n", strings.Join(names(tree), " "))
	fmt.Fprintf(&b, "        help) words=\"%s %s\" ;;\n", strings.Join(groupNames(), " "), strings.Join(names(tree), " "))
	for _, c := range tree {
		if len(c.subs) == 0 {
			fmt.Fprintf(&b, "        %s) words=\"%s\" ;;\n", c.name, strings.Join(flagWords(c.flags), " "))
			continue
		}
		fmt.Fprintf(&b, "        %s)\n            case $sub in\n                \"\") words=\"%s\" ;;\n", c.name, strings.Join(names(c.subs), " "))
		for _, s := range c.subs {
			fmt.Fprintf(&b, "                %s) words=\"%s\" ;;\n", s.name, strings.Join(flagWords(s.flags), " "))
		}
		b.WriteString("            esac ;;\n")
	}
	b.WriteString("    esac\n")
	fmt.Fprintf(&b, "    if [[ -z $cmd && $cur == -* ]]; then words=\"%s\"; fi\n", strings.Join(flagWords(globalComp()), " "))
	b.WriteString("    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _solopi solopi\n")
	return b.String()
}

// zshDescribe escapes a `name:description` entry of _describe.
func zshDescribe(name, usage string) string {
	usage = strings.NewReplacer(":", `\:`, "'", `'\''`).Replace(firstLine(usage))
	return "'" + name + ":" + usage + "'"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func zshCompletion(tree []compCmd) string {
	var b strings.Builder
	b.WriteString("#compdef solopi\n# zsh completion for solopi: solopi completion zsh > \"${fpath[1]}/_solopi\"\n_solopi() {\n" +
		"    local -a cmds flags\n    local cmd=\"\" sub=\"\" i w\n" +
		"    for ((i = 2; i < CURRENT; i++)); do\n        w=${words[i]}\n        case $w in\n")
	fmt.Fprintf(&b, "            (%s) ((i++)) ;;\n", strings.Join(allValued(tree), "|"))
	b.WriteString("            (-*) ;;\n            (*) if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi ;;\n" +
		"        esac\n    done\n    case ${words[CURRENT-1]} in\n")
	fmt.Fprintf(&b, "        (%s) _files; return ;;\n", strings.Join(allValued(tree), "|"))
	b.WriteString("    esac\n    if [[ -z $cmd ]]; then\n        if [[ ${words[CURRENT]} == -* ]]; then\n")
	fmt.Fprintf(&b, "            compadd -- %s\n        else\n            cmds=(\n", strings.Join(flagWords(globalComp()), " "))
	for _, c := range tree {
		fmt.Fprintf(&b, "                %s\n", zshDescribe(c.name, c.usage))
	}
	b.WriteString("                'help:list the commands by group, or show one group or command'\n            )\n" +
		"            _describe 'command' cmds\n        fi\n        return\n    fi\n    case $cmd in\n")
	fmt.Fprintf(&b, "        (help) compadd -- %s %s; return ;;\n", strings.Join(groupNames(), " "), strings.Join(names(tree), " "))
	for _, c := range tree {
		if len(c.subs) == 0 {
			fmt.Fprintf(&b, "        (%s) flags=(%s) ;;\n", c.name, strings.Join(flagWords(c.flags), " "))
			continue
		}
		fmt.Fprintf(&b, "        (%s)\n            case $sub in\n                (\"\") compadd -- %s; return ;;\n", c.name, strings.Join(names(c.subs), " "))
		for _, s := range c.subs {
			fmt.Fprintf(&b, "                (%s) flags=(%s) ;;\n", s.name, strings.Join(flagWords(s.flags), " "))
		}
		b.WriteString("            esac ;;\n")
	}
	b.WriteString("    esac\n    if [[ ${words[CURRENT]} == -* ]]; then\n        compadd -- $flags\n    else\n        _files\n    fi\n}\n" +
		"if [[ \"${funcstack[1]}\" == _solopi ]]; then\n    _solopi \"$@\"\nelse\n    compdef _solopi solopi\nfi\n")
	return b.String()
}

// fishQuote quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(firstLine(s)) + "'"
}

func fishFlag(b *strings.Builder, cond string, f compFlag) {
	b.WriteString("complete -c solopi")
	if cond != "" {
		b.WriteString(" -n " + fishQuote(cond))
	}
	for _, n := range f.names {
		if len(n) == 1 {
			b.WriteString(" -s " + n)
		} else {
			b.WriteString(" -l " + n)
		}
	}
	if f.valued {
		b.WriteString(" -r -F")
	}
	if f.usage != "" {
		b.WriteString(" -d " + fishQuote(f.usage))
	}
	b.WriteString("\n")
}

func fishCompletion(tree []compCmd) string {
	var b strings.Builder
	b.WriteString("# fish completion for solopi: solopi completion fish > ~/.config/fish/completions/solopi.fish\ncomplete -c solopi -f\n")
	for _, f := range globalComp() {
		fishFlag(&b, "", f)
	}
	for _, c := range tree {
		fmt.Fprintf(&b, "complete -c solopi -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.usage))
	}
	b.WriteString("complete -c solopi -n __fish_use_subcommand -a help -d 'list the commands by group, or show one group or command'\n")
	fmt.Fprintf(&b, "complete -c solopi -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(strings.Join(append(groupNames(), names(tree)...), " ")))
	for _, c := range tree {
		for _, f := range c.flags {
			if isGlobal(f) {
				continue
			}
			fishFlag(&b, "__fish_seen_subcommand_from "+c.name, f)
		}
		for _, s := range c.subs {
			fmt.Fprintf(&b, "complete -c solopi -n %s -a %s -d %s\n",
				fishQuote("__fish_seen_subcommand_from "+c.name+"; and not __fish_seen_subcommand_from "+strings.Join(names(c.subs), " ")),
				s.name, fishQuote(s.usage))
			for _, f := range s.flags {
				if !isGlobal(f) {
					fishFlag(&b, "__fish_seen_subcommand_from "+s.name, f)
				}
			}
		}
	}
	return b.String()
}

// isGlobal reports whether f is one of the global flags (fish lists those
// once, for every position).
func isGlobal(f compFlag) bool {
	for _, g := range globalFlags() {
		if g.Names()[0] == f.names[0] {
			return true
		}
	}
	return false
}
