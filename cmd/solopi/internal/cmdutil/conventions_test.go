package cmdutil

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/internal/tooltest"
)

// Global flags are accepted before and after the command; given twice, the
// later one counts.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args      []string
		serial    string
		requestMs float64
	}{
		{[]string{"wait"}, "", 5000},
		{[]string{"--serial", "a", "wait"}, "a", 5000},
		{[]string{"wait", "--serial", "b"}, "b", 5000},
		{[]string{"wait", "-s", "c", "--request-timeout", "2"}, "c", 2000},
		{[]string{"--serial", "a", "--request-timeout", "3", "wait", "--serial", "b"}, "b", 3000},
	} {
		out, errOut, code := runApp(t, c.args...)
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d %q %q", c.args, code, out, errOut)
		}
		if m["serial"] != c.serial || m["requestMs"] != c.requestMs {
			t.Errorf("%v: serial %v requestMs %v", c.args, m["serial"], m["requestMs"])
		}
	}
	out, _, code := runApp(t, "wait", "--pretty")
	if code != 0 || !strings.Contains(out, "\n  \"changed\": false") {
		t.Errorf("--pretty after the command: %q", out)
	}
}

// A command's help lists its flags without a doubled default, then the
// global flags.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	out, _, code := runApp(t, "wait", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--at value       position (default: append)\n", "--flat           a switch\n",
		"GLOBAL OPTIONS (before or after the command):", "--serial value, -s value", "(default: 1.5)"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"(default: append) (default", "(default: false)", "--version"} {
		if strings.Contains(out, bad) {
			t.Errorf("help holds %q:\n%s", bad, out)
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	cands := []string{"run", "run-repeat", "run-batch", "result", "cases", "case-get", "doctor", "serial", "session-id"}
	for _, c := range []struct{ typed, want string }{
		{"runn", "run"}, {"rnu", "run"}, {"run-bach", "run-batch"}, {"docter", "doctor"}, {"seral", "serial"},
		{"sesion-id", "session-id"}, {"case-gte", "case-get"}, {"resul", "result"},
		{"x", ""}, {"zzzzzz", ""}, {"deploy", ""}, {"", ""},
	} {
		if got := nearest(c.typed, cands); got != c.want {
			t.Errorf("nearest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

// The bash script loads in bash and completes commands, flags after a
// command, and commands after a global flag's value.
func TestBashCompletionLoads(t *testing.T) {
	t.Parallel()
	bash := tooltest.Look(t, "bash")
	script, _, code := runApp(t, "completion", "bash")
	if code != 0 {
		t.Fatal(code)
	}
	for _, c := range []struct {
		words string
		want  string
	}{
		{"solopi wa", "wait"},
		{"solopi --serial x wa", "wait"},
		{"solopi wait --ti", "--timeout"},
		{"solopi wait --se", "--serial"},
		{"solopi --pre", "--pretty"},
		{"solopi help wa", "wait"},
		{"solopi help lo", "local"},
	} {
		if got := bashComplete(t, bash, script, c.words); got != c.want {
			t.Errorf("%q completes to %q, want %q", c.words, got, c.want)
		}
	}
}

// bashComplete sources script and asks _solopi to complete words (the
// last one being the word under the cursor).
func bashComplete(t *testing.T, bash, script, words string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "solopi.bash")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	w := strings.Fields(words)
	prog := "source " + f + " || exit 9\ncomplete -p solopi >/dev/null || exit 8\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=" + strconv.Itoa(len(w)-1) + "\n_solopi\necho \"${COMPREPLY[*]}\"\n"
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
