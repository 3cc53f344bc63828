package adb

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestShellJoin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"am", "start", "-W", "-n", "com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity"},
			"am start -W -n com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity"},
		{[]string{"-d", "solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fx"},
			"-d 'solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fx'"},
		{[]string{""}, "''"},
		{[]string{"a b", "it's"}, `'a b' 'it'\''s'`},
		{[]string{"safe_@%+=:,./-09AZaz"}, "safe_@%+=:,./-09AZaz"},
		{[]string{"é"}, "'é'"}, // shlex uses re.ASCII: non-ASCII letters are quoted
		{[]string{"*", "$HOME", "a;b", "~"}, `'*' '$HOME' 'a;b' '~'`},
	} {
		if got := ShellJoin(tc.args...); got != tc.want {
			t.Errorf("ShellJoin(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
	if got := shellQuote("it's"); got != `'it'\''s'` {
		t.Errorf("ShellQuote = %s", got)
	}
}

// The quoting must survive a real POSIX sh (the device's mksh behaves the
// same for single quotes): each argument comes back byte for byte.
func TestShellJoinRoundTripSh(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("a POSIX sh is needed to check quoting: %v", err)
	}
	hostile := []string{"value with spaces", "'", "''", `\'`, `"`, "$HOME", "`id`", "$(id)", ";&&|", "*",
		"", "-n", "a\nb", "a\tb", `back\slash`, "unicodé ✓", `{"k":"v"}`, "%s", "trailing ", "plain"}
	out, err := exec.Command(sh, "-c", "printf '%s\\0' "+ShellJoin(hostile...)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(hostile) {
		t.Fatalf("got %d args, want %d: %q", len(got), len(hostile), got)
	}
	for i := range hostile {
		if got[i] != hostile[i] {
			t.Errorf("arg %d: got %q, want %q", i, got[i], hostile[i])
		}
	}
	if !bytes.Contains(out, []byte("$HOME")) {
		t.Error("$HOME was expanded")
	}
}
