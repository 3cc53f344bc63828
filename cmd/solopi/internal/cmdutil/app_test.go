package cmdutil

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// testApp is an app of two commands: `wait` reads a seconds flag and
// reports it, `fail` ends with the fault its flags name.
func testApp() App {
	return App{Version: "test", Commands: func(e Env) []*cli.Command {
		var d time.Duration
		var kind string
		var at int
		return []*cli.Command{
			{
				Name:  "wait",
				Usage: "report a wait",
				Flags: []cli.Flag{Seconds("timeout", "seconds", 1.5, &d),
					&cli.IntFlag{Name: "at", Destination: &at, Usage: "position (default: append)"},
					&cli.BoolFlag{Name: "flat", Usage: "a switch"}},
				Action: Local(e, func(_ context.Context, g *Globals) (Result, error) {
					return OK(waitResult{Success: true, Ms: d.Milliseconds(), Changed: g.Changed("timeout"), Args: g.Args(),
						Serial: g.Serial, RequestMs: g.RequestTimeout.Milliseconds()}), nil
				}),
			},
			{
				Name:  "fail",
				Usage: "fail",
				Flags: []cli.Flag{&cli.StringFlag{Name: "kind", Destination: &kind, Value: "failed"}},
				Action: OnDevice(e, func(context.Context, DeviceDeps) (Result, error) {
					switch kind {
					case "failed":
						return Failed(map[string]any{"success": false}), nil
					case "interrupted":
						return WithKind(map[string]any{"success": false}, fault.Interrupted), nil
					case "verdict":
						return WithVerdict(map[string]any{"success": false}, outcome.VerdictNotTested), nil
					}
					return Result{}, fault.New(fault.Timeout, "timeout", "too slow")
				}),
			},
		}
	}}
}

// waitResult is what the test app's wait prints: the flags as parsed.
type waitResult struct {
	Args      []string `json:"args"`
	Changed   bool     `json:"changed"`
	Ms        int64    `json:"ms"`
	RequestMs int64    `json:"requestMs"`
	Serial    string   `json:"serial"`
	Success   bool     `json:"success"`
}

func runApp(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = testApp().Run(context.Background(), append([]string{"solopi"}, args...), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return out.String(), errb.String(), code
}

// The command's result is printed once on stdout and its exit code comes
// from outcome's table; parser errors are text on stderr with an empty
// stdout (exit 3); help goes to stdout only when asked.
func TestAppOutputContract(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"wait"}, 0, `"ms":1500`, ""},
		{[]string{"wait", "--timeout", "0.25", "extra"}, 0, `"changed":true`, ""},
		{[]string{"--pretty", "wait"}, 0, "\n  \"changed\": false", ""},
		{[]string{"wait", "--timeout", "0"}, 3, "", "--timeout must be a positive number of seconds"},
		{[]string{"--request-timeout", "-1", "wait"}, 3, "", "--request-timeout must be a positive number of seconds"},
		{[]string{"wait", "--request-timeout", "-1"}, 3, "", "--request-timeout must be a positive number of seconds"},
		{[]string{"wait", "--timeout", "x"}, 3, "", `invalid value "x" for flag -timeout`},
		{[]string{"--device-port", "0", "wait"}, 3, `"errorCode":"invalid_option"`, ""},
		{[]string{"--package", "x", "wait"}, 3, `"errorCode":"invalid_option"`, ""},
		{[]string{"fail"}, 2, `"success":false`, ""},
		{[]string{"fail", "--kind", "interrupted"}, 130, `"success":false`, ""},
		{[]string{"fail", "--kind", "verdict"}, 3, `"success":false`, ""},
		{[]string{"fail", "--kind", "timeout"}, 124, `"errorCode":"timeout"`, ""},
		{[]string{"wait", "--no-such-flag"}, 3, "", "flag provided but not defined"},
		{[]string{"wait", "--timeuot", "1"}, 3, "", "did you mean --timeout?"},
		{[]string{"wait", "--seral", "x"}, 3, "", "did you mean --serial?"},
		{[]string{"--prety", "wait"}, 3, "", "did you mean --pretty?"},
		{[]string{"no-such-command"}, 3, "", `unknown command "no-such-command"`},
		{[]string{"wiat"}, 3, "", `unknown command "wiat"; did you mean "wait"?`},
		{[]string{"help", "no-such-command"}, 3, "", `unknown command "no-such-command"`},
		{[]string{"help", "fial"}, 3, "", `did you mean "fail"?`},
		{[]string{}, 3, "", "solopi [global options]"},
		{[]string{"--help"}, 0, "solopi [global options]", ""},
		{[]string{"help"}, 0, "solopi [global options]", ""},
		{[]string{"--serial", "x", "help"}, 0, "GLOBAL OPTIONS", ""},
		{[]string{"help", "wait"}, 0, "--timeout value", ""},
		{[]string{"wait", "--help"}, 0, "--timeout value", ""},
		{[]string{"--version"}, 0, "solopi version test\n", ""},
		{[]string{"completion"}, 3, "", "completion takes one argument"},
		{[]string{"completion", "tcsh"}, 3, "", `unknown shell "tcsh"`},
		{[]string{"completion", "bash"}, 0, "complete -o default -F _solopi solopi", ""},
		{[]string{"completion", "zsh"}, 0, "compdef _solopi solopi", ""},
		{[]string{"completion", "fish"}, 0, "complete -c solopi -n __fish_use_subcommand -a wait", ""},
	} {
		out, errOut, code := runApp(t, c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", c.args, code, out, errOut)
			continue
		}
		if c.stdout == "" && out != "" {
			t.Errorf("%v: stdout not empty: %q", c.args, out)
		}
		if strings.Contains(out, `"errorCode"`) {
			schematest.Validate(t, "error", []byte(out))
		}
	}
}

// ParseSeconds is the one reader of seconds values.
func TestParseSeconds(t *testing.T) {
	t.Parallel()
	interval := SecondsRule{NonNegative: true, Max: 3600}
	for _, c := range []struct {
		v    float64
		rule SecondsRule
		want time.Duration
		msg  string
	}{
		{1.5, positive, 1500 * time.Millisecond, ""},
		{0, positive, 0, "must be a positive number of seconds"},
		{-1, positive, 0, "must be a positive number of seconds"},
		{2e7, positive, 0, "must be a positive number of seconds"},
		{0, NonNegative, 0, ""},
		{-0.5, NonNegative, 0, "must be a non-negative number of seconds"},
		{3600, interval, time.Hour, ""},
		{3601, interval, 0, "must be between 0 and 3600 seconds"},
	} {
		d, err := ParseSeconds("x", c.v, c.rule)
		switch {
		case c.msg == "" && (err != nil || d != c.want):
			t.Errorf("%v: %v %v", c.v, d, err)
		case c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg) || fault.CodeOf(err) != "invalid_option"):
			t.Errorf("%v: %v", c.v, err)
		}
	}
}

// TestBuildPreparesTheNamedCommands: an invocation prepares only the
// commands its arguments name, each exactly as a completion (which
// prepares all) does.
func TestBuildPreparesTheNamedCommands(t *testing.T) {
	t.Parallel()
	a := testApp()
	find := func(b built, name string) *cli.Command {
		for _, c := range b.app.Commands {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no command %s", name)
		return nil
	}
	var unknown bool
	one := a.build(Env{Getenv: func(string) string { return "" }}, &unknown, []string{"solopi", "wait", "--timeout", "1"})
	all := a.build(Env{Getenv: func(string) string { return "" }}, &unknown, []string{"solopi", "completion", "bash"})
	w, wAll := find(one, "wait"), find(all, "wait")
	if w.CustomHelpTemplate == "" || w.CustomHelpTemplate != wAll.CustomHelpTemplate || len(w.Flags) != len(wAll.Flags) {
		t.Fatalf("the named command: help %d bytes, %d flags; prepared by a completion: %d bytes, %d flags",
			len(w.CustomHelpTemplate), len(w.Flags), len(wAll.CustomHelpTemplate), len(wAll.Flags))
	}
	if f := find(one, "fail"); f.CustomHelpTemplate != "" || len(f.Flags) == len(find(all, "fail").Flags) {
		t.Fatalf("a command the arguments do not name was prepared: %d flags", len(f.Flags))
	}
	if len(one.specs) != len(all.specs) {
		t.Fatalf("the help lists %d commands, a completion %d", len(one.specs), len(all.specs))
	}
}
