package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/internal/tooltest"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// commandPaths are every runnable command of the app, as argv prefixes
// ("sim serve" is ["sim", "serve"]).
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(slices.Clone(prefix), c.Name)
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				continue
			}
			out = append(out, p)
		}
	}
	walk(nil, commands(cmdutil.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}))
	if len(out) < 100 {
		t.Fatalf("only %d commands", len(out))
	}
	return out
}

// helpFlag is one flag of a command's OPTIONS as its help shows it.
type helpFlag struct {
	name     string
	valued   bool
	required bool
	group    []string // the flags of a one-of requirement (env names start with $)
	choices  []string
	env      string // the flag's environment variable
}

var (
	flagLine  = regexp.MustCompile(`^   --([a-z0-9-]+)( value)?(?: \[ [^\]]* \])?(?:, -[a-z0-9-]+(?: value)?)?\s{2,}(.*)$`)
	groupNote = regexp.MustCompile(`\(required: ([^)]*)\)`)
	choiceSet = regexp.MustCompile(`\(one of: ([^)]*)\)`)
	envNote   = regexp.MustCompile(`\[\$([A-Z0-9_]+)\]$`)
)

// commandHelp is `solopi PATH --help`: its text and its own flags.
func commandHelp(t *testing.T, path []string) (string, []helpFlag) {
	t.Helper()
	r := inProc(t, append(slices.Clone(path), "--help")...)
	if r.code != 0 || len(r.stderr) != 0 {
		t.Fatalf("%v --help: exit %d, stderr %q", path, r.code, r.stderr)
	}
	text := string(r.stdout)
	var flags []helpFlag
	section := ""
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		m := flagLine.FindStringSubmatch(line)
		if section != "OPTIONS:" || m == nil || m[1] == "help" {
			continue
		}
		f := helpFlag{name: m[1], valued: m[2] != "", required: strings.Contains(m[3], "(required)")}
		if g := groupNote.FindStringSubmatch(m[3]); g != nil {
			names, _, _ := strings.Cut(g[1], ";")
			f.group = strings.FieldsFunc(strings.ReplaceAll(names, " or ", ","), func(r rune) bool { return r == ',' || r == ' ' })
		}
		if e := envNote.FindStringSubmatch(m[3]); e != nil {
			f.env = e[1]
		}
		if c := choiceSet.FindStringSubmatch(m[3]); c != nil {
			f.choices = strings.Split(c[1], ", ")
		}
		flags = append(flags, f)
	}
	return text, flags
}

// requirement is one thing a command line must hold: a flag, or one of a
// group's flags (or its environment variable).
type requirement struct {
	flags []string
	env   string
	// group: a one-of requirement, whose variable solopi reads through
	// Env.Getenv (a flag's own variable urfave/cli reads from the process).
	group bool
}

func requirementsOf(flags []helpFlag) []requirement {
	var reqs []requirement
	seen := map[string]bool{}
	for _, f := range flags {
		if f.required {
			reqs = append(reqs, requirement{flags: []string{f.name}, env: f.env})
		}
		if len(f.group) > 0 && !seen[strings.Join(f.group, ",")] {
			seen[strings.Join(f.group, ",")] = true
			r := requirement{group: true}
			for _, n := range f.group {
				if env, ok := strings.CutPrefix(n, "$"); ok {
					r.env = env
				} else {
					r.flags = append(r.flags, strings.TrimPrefix(n, "--"))
				}
			}
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// valueFor is a value of the right shape for a flag.
func valueFor(f helpFlag) string {
	if len(f.choices) > 0 {
		return f.choices[0]
	}
	return "1"
}

// argsMeeting are flags meeting every requirement except skip (-1: none).
func argsMeeting(reqs []requirement, flags []helpFlag, skip int) []string {
	var args []string
	for i, r := range reqs {
		if i == skip {
			continue
		}
		i := slices.IndexFunc(flags, func(f helpFlag) bool { return f.name == r.flags[0] })
		args = append(args, "--"+r.flags[0])
		if flags[i].valued {
			args = append(args, valueFor(flags[i]))
		}
	}
	return args
}

// A command line missing what a command requires is a parse error: the
// parser's text naming what is missing on stderr, nothing on stdout, exit
// 3, and no device touched. With every requirement met the command gets
// past the parser (here to the globals' check, which prints JSON). This
// walks every command's requirements as its help shows them.
func TestMissingRequirementsAreParseErrors(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, path := range commandPaths(t) {
		_, flags := commandHelp(t, path)
		reqs := requirementsOf(flags)
		for i, r := range reqs {
			argv := append(slices.Clone(path), argsMeeting(reqs, flags, i)...)
			res := inProc(t, argv...)
			checked++
			if res.code != 3 || len(res.stdout) != 0 || !strings.Contains(string(res.stderr), "--"+r.flags[0]) {
				t.Errorf("%v (without --%s): exit %d\nstdout %q\nstderr %q", argv, r.flags[0], res.code, res.stdout, res.stderr)
			}
			if r.group && r.env != "" {
				// The environment variable alone meets the requirement.
				c := cmdtest.New(t, commands, nil)
				c.NoDevice = true
				c.Env[r.env] = "0123456789abcdef0123456789abcdef"
				out := c.Run(append(argv, "--device-port", "0")...)
				if out.Code != 3 || !strings.Contains(string(out.Stdout), `"errorCode":"invalid_option"`) {
					t.Errorf("%v with $%s: exit %d\nstdout %q\nstderr %q", argv, r.env, out.Code, out.Stdout, out.Stderr)
				}
			}
		}
		if len(reqs) == 0 {
			continue
		}
		argv := append(append(slices.Clone(path), argsMeeting(reqs, flags, -1)...), "--device-port", "0")
		res := inProc(t, argv...)
		if res.code != 3 || !strings.Contains(string(res.stdout), `"errorCode":"invalid_option"`) {
			t.Errorf("%v: the requirements met, the command did not get past the parser: exit %d\nstdout %q\nstderr %q", argv, res.code, res.stdout, res.stderr)
		}
	}
	if checked < 60 {
		t.Errorf("only %d requirements checked", checked)
	}
}

// The parse errors solopi-ai's argparse reports, and the ones the
// differential test found printing JSON: text on stderr, nothing on
// stdout, exit 3, before any device.
func TestParseErrorsBeforeTheDevice(t *testing.T) {
	t.Parallel()
	tok := []string{"--session-id", "agent-1", "--owner-token", "0123456789abcdef0123"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent-status"}, "--session-id"},
		{[]string{"agent-status", "--session-id", "agent-1"}, "--owner-token, --owner-token-file or $SOLOPI_AGENT_OWNER_TOKEN"},
		{append([]string{"agent-act", "--action", "back", "--observation-id", "obs-1"}, tok...), "--step-id"},
		{append([]string{"agent-act", "--action", "back", "--step-id", "step-1"}, tok...), "--observation-id"},
		{append([]string{"agent-act", "--step-id", "s", "--observation-id", "o"}, tok...), "--action"},
		{append([]string{"agent-act", "--action", "tap", "--step-id", "s", "--observation-id", "o"}, tok...), `invalid value "tap" for flag --action`},
		{append([]string{"agent-act", "--action", "scroll", "--direction", "sideways", "--step-id", "s", "--observation-id", "o"}, tok...), "--direction"},
		{append([]string{"agent-receipt"}, tok...), "--step-id"},
		{[]string{"run-batch"}, "one of --case, --cases-file, --file or --dir is required"},
		{[]string{"perf-start", "--items", "CPU"}, "one of --target-package or --global is required"},
		{[]string{"perf-display-start", "--items", "CPU", "--global", "--target-package", "com.x.y"}, "--target-package and --global exclude each other"},
		{[]string{"run-repeat", "--case", "x", "--times", "0"}, "--times: must be greater than zero"},
		{[]string{"run", "--case", "x", "--run-timeout", "0"}, "--run-timeout must be a positive number of seconds"},
		{[]string{"run", "--case", "x", "--poll-interval", "abc"}, "invalid value \"abc\" for flag -poll-interval"},
		{[]string{"run", "--case", "x", "--request-timeout", "-1"}, "--request-timeout must be a positive number"},
		{[]string{"run"}, "--case"},
		{[]string{"startup-time", "--target-package", "com.example", "--mode", "hot"}, `invalid value "hot" for flag --mode`},
		{[]string{"verify-run", "--plan", "p", "--artifacts", "a", "--decision-provider", "model"}, "--decision-provider"},
		{[]string{"agent-run"}, "--task"},
		{[]string{"managed-purge"}, "--artifacts-root"},
		{[]string{"runn"}, `did you mean "run"?`},
		{[]string{"run", "--case", "x", "--serail", "s"}, "did you mean --serial?"},
	} {
		r := inProc(t, c.args...)
		if r.code != 3 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", c.args, r.code, r.stdout, r.stderr)
		}
	}
}

// `solopi run --case x --serial s`: the global flags after the command are
// the globals (here they reach the device selection, which fails on a
// port nothing listens on: JSON, not a parse error).
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	c := cmdtest.New(t, commands, nil)
	r := c.Run("doctor", "--serial", "s", "--adb-server-port", "1", "--adb", filepath.Join(t.TempDir(), "no-adb"), "--pretty")
	if len(r.Stderr) != 0 || !strings.Contains(string(r.Stdout), "\n  \"errorCode\": \"adb_not_found\"") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

var exampleSection = regexp.MustCompile(`(?m)^\s*(EXAMPLES|Examples?):\s*$`)

// examplesIn are the command lines of the example sections of a help text.
func examplesIn(text string) []string {
	var out []string
	for _, loc := range exampleSection.FindAllStringIndex(text, -1) {
		for _, line := range strings.Split(text[loc[1]:], "\n")[1:] {
			line = strings.TrimSpace(line)
			if line == "" || !strings.Contains(line, "solopi ") && !strings.HasPrefix(line, "curl") {
				break
			}
			out = append(out, line)
		}
	}
	return out
}

// exampleArgs are the solopi arguments of an example line (nil when it
// does not run solopi), and the environment variables it sets first.
func exampleArgs(line string) (args []string, env []string) {
	line, _, _ = strings.Cut(line, " #")
	words := shellWords(line)
	start := -1
	for i, w := range words {
		if w == "solopi" || strings.HasSuffix(w, "(solopi") {
			start = i + 1
			break
		}
		if k, _, ok := strings.Cut(w, "="); ok {
			env = append(env, k)
		}
	}
	if start < 0 {
		return nil, nil
	}
	for _, w := range words[start:] {
		if w == ">" || w == "<" || w == "|" || w == ";" || w == "&&" || strings.HasPrefix(w, ">") {
			break
		}
		args = append(args, strings.TrimSuffix(w, ")"))
	}
	return args, env
}

// shellWords splits a line as a shell would, for the quoting examples use.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, depth := false, rune(0), 0
	for _, r := range s {
		switch {
		case quote == 0 && r == '(' && strings.HasSuffix(cur.String(), "$"):
			depth++
			cur.WriteRune(r)
		case depth > 0:
			if r == ')' {
				depth--
			}
			cur.WriteRune(r)
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Every command's help shows at least one example of itself, and every
// example of a command parses (its flags exist) and meets the command's
// requirements. Every command's help lists the global flags and no
// default twice.
func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	doubled := regexp.MustCompile(`\(default[^)]*\).*\(default: `)
	for _, path := range commandPaths(t) {
		text, flags := commandHelp(t, path)
		if bad := doubled.FindString(text); bad != "" || strings.Contains(text, "(default: false)") {
			t.Errorf("%v: a doubled default in its help: %q", path, bad)
		}
		if path[0] != "completion" && !strings.HasPrefix(path[0], "model-") && !strings.Contains(text, "GLOBAL OPTIONS (before or after the command):\n   --adb value") {
			t.Errorf("%v: its help does not list the global flags", path)
		}
		own := 0
		for _, line := range examplesIn(text) {
			args, env := exampleArgs(line)
			if len(args) < len(path) || !slices.Equal(args[:len(path)], path) {
				continue
			}
			own++
			// --help after the flags: the parser checks they exist first
			// (leading positional arguments are left out: help would take
			// them for a command's name).
			check := slices.Clone(args)
			for len(check) > len(path) && !strings.HasPrefix(check[len(path)], "-") {
				check = slices.Delete(check, len(path), len(path)+1)
			}
			r := inProc(t, append(check, "--help")...)
			if r.code != 0 {
				t.Errorf("%v: example %q does not parse: exit %d %s", path, line, r.code, r.stderr)
			}
			for _, req := range requirementsOf(flags) {
				met := req.env != "" && slices.Contains(env, req.env)
				for _, f := range req.flags {
					met = met || slices.Contains(args, "--"+f)
				}
				if !met {
					t.Errorf("%v: example %q lacks --%s", path, line, req.flags[0])
				}
			}
		}
		if own == 0 {
			t.Errorf("%v: no example in its help:\n%s", path, text)
		}
	}
}

// `solopi help` lists every command once, under the README's groups;
// `solopi help GROUP` lists a group.
func TestGroupedHelp(t *testing.T) {
	t.Parallel()
	r := inProc(t, "help")
	text := string(r.stdout)
	if r.code != 0 || len(r.stderr) != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	for _, path := range commandPaths(t) {
		if len(path) > 1 && path[1] != "serve" {
			continue
		}
		n := len(regexp.MustCompile(`(?m)^   `+regexp.QuoteMeta(path[0])+` +\S`).FindAllString(text, -1))
		if n != 1 {
			t.Errorf("%s is listed %d times in `solopi help`", path[0], n)
		}
	}
	groups := regexp.MustCompile(`(?m)^([A-Z]+) \(`).FindAllStringSubmatch(text, -1)
	if len(groups) < 9 {
		t.Fatalf("only %d groups:\n%s", len(groups), text)
	}
	for _, g := range groups {
		name := strings.ToLower(g[1])
		r := inProc(t, "help", name)
		if r.code != 0 || !strings.HasPrefix(string(r.stdout), g[1]+": ") || !strings.Contains(string(r.stdout), "e.g. solopi ") {
			t.Errorf("help %s: exit %d %q", name, r.code, r.stdout)
		}
	}
	if r := inProc(t, "help", "agnet"); r.code != 3 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), `did you mean "agent"?`) {
		t.Errorf("help agnet: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// solopi-ai's nine model-* commands answer not_supported (exit 3, JSON
// saying what to use instead) whatever their flags, touching no device.
func TestModelCommandsAreNotSupported(t *testing.T) {
	t.Parallel()
	for _, m := range modelCommands {
		r := inProc(t, m.name, "--package", "./pkg", "--model-id", "counter-policy")
		if r.code != 3 {
			t.Errorf("%s: exit %d %s", m.name, r.code, r.stderr)
			continue
		}
		schematest.Validate(t, m.name, r.stdout)
		if !strings.Contains(string(r.stdout), `"insteadUse":"`) || !strings.Contains(string(r.stdout), `"errorCode":"not_supported"`) {
			t.Errorf("%s: %s", m.name, r.stdout)
		}
	}
}

// The bash completion of the whole app loads and completes commands and
// a command's flags.
func TestCompletionOfTheApp(t *testing.T) {
	t.Parallel()
	bash := tooltest.Look(t, "bash")
	r := inProc(t, "completion", "bash")
	if r.code != 0 {
		t.Fatal(r.code)
	}
	f := filepath.Join(t.TempDir(), "solopi.bash")
	if err := os.WriteFile(f, r.stdout, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ words, want string }{
		{"solopi ru", "run run-repeat run-batch"},
		{"solopi run --ca", "--case"},
		{"solopi run --case x --se", "--serial"},
		{"solopi sim se", "serve"},
		{"solopi help ver", "verify version verify-init verify-normalize verify-compile verify-validate verify-run"},
	} {
		prog := "source " + f + " || exit 9\nCOMP_WORDS=(" + c.words + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_solopi\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("%q: %v %q, want %q", c.words, err, out, c.want)
		}
	}
}

// The zsh and fish scripts load in their shells and complete commands and
// flags (skipped where the shell is not installed; CI installs neither).
func TestCompletionInZshAndFish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(shell string) string {
		r := inProc(t, "completion", shell)
		if r.code != 0 {
			t.Fatalf("completion %s: exit %d", shell, r.code)
		}
		f := filepath.Join(dir, "solopi."+shell)
		if err := os.WriteFile(f, r.stdout, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("fish", func(t *testing.T) {
		t.Parallel()
		fish := tooltest.Look(t, "fish")
		f := script("fish")
		for _, c := range []struct{ line, want string }{
			{"solopi ru", "run\t"}, {"solopi run --ca", "--case\t"}, {"solopi run --case x --se", "--serial\t"},
			{"solopi sim se", "serve\t"}, {"solopi help ver", "verify\n"},
		} {
			out, err := exec.Command(fish, "--no-config", "-c", "source "+f+"; complete -C '"+c.line+"'").CombinedOutput()
			if err != nil || !strings.Contains(string(out)+"\n", c.want) {
				t.Errorf("%q: %v %q, want %q", c.line, err, out, c.want)
			}
		}
	})
	t.Run("zsh", func(t *testing.T) {
		t.Parallel()
		zsh := tooltest.Look(t, "zsh")
		f := script("zsh")
		// Outside a completion widget: compadd, _describe and _files print
		// what they were given.
		stubs := `compdef() { :; }; source ` + f + `; compadd() { shift $(( ${@[(i)--]} )); print -r -- "$@"; }; ` +
			`_describe() { print -rl -- "${(@P)2}"; }; _files() { print _files; }; `
		for _, c := range []struct{ words, current, want string }{
			{"solopi run --ca", "3", "--case"}, {"solopi ru", "2", "run:replay one SoloPi case"},
			{"solopi --serial x run --case", "6", "_files"}, {"solopi sim ''", "3", "serve"},
		} {
			out, err := exec.Command(zsh, "-f", "-c", stubs+"words=("+c.words+"); CURRENT="+c.current+"; _solopi").CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Errorf("%q: %v %q, want %q", c.words, err, out, c.want)
			}
		}
	})
}
