package shell

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/vfs"
)

// newTestShell returns a shell with only the toybox commands over a fresh
// file system, on a fast clock.
func newTestShell() *Shell {
	return &Shell{FS: vfs.New(clock.NewScaled(10000)), Clock: clock.NewScaled(10000), Env: []string{"HOME=/", "USER=shell"}, Commands: Toybox()}
}

type result struct {
	out, err string
	rc       int
}

func run(t testing.TB, sh *Shell, cmd string) result {
	t.Helper()
	return runIn(t, sh, cmd, nil)
}

func runIn(t testing.TB, sh *Shell, cmd string, stdin []byte) result {
	t.Helper()
	var o, e bytes.Buffer
	var rc int
	if stdin != nil {
		rc = sh.Run(context.Background(), cmd, bytes.NewReader(stdin), &o, &e)
	} else {
		rc = sh.Run(context.Background(), cmd, nil, &o, &e)
	}
	return result{o.String(), e.String(), rc}
}

// mustRun runs cmd and fails the test unless it exits 0.
func mustRun(t testing.TB, sh *Shell, cmd string) string {
	t.Helper()
	r := run(t, sh, cmd)
	if r.rc != 0 {
		t.Fatalf("%q: rc=%d stdout=%q stderr=%q", cmd, r.rc, r.out, r.err)
	}
	return r.out
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestFileCommands(t *testing.T) {
	t.Parallel()
	sh := newTestShell()
	steps := []struct {
		cmd, out, err string
		rc            int
	}{
		{"mkdir -p /sdcard/Android/data/com.alipay.hulu/files/harness-import", "", "", 0},
		{"test -d /storage/emulated/0/Android/data/com.alipay.hulu/files/harness-import && echo dir", "dir\n", "", 0},
		{"mkdir /sdcard/a/b", "", "mkdir: '/sdcard/a/b': No such file or directory\n", 1},
		{"mkdir /sdcard/Download", "", "mkdir: '/sdcard/Download': File exists\n", 1},
		{"mkdir -p /system/x", "", "mkdir: '/system/x': Permission denied\n", 1},
		{"echo hello > /data/local/tmp/f; cat /data/local/tmp/f", "hello\n", "", 0},
		{"echo more >> /data/local/tmp/f; cat /data/local/tmp/f", "hello\nmore\n", "", 0},
		{"stat -c %s /data/local/tmp/f", "11\n", "", 0},
		{"stat -c '%n %F %a' /sdcard/Download", "/sdcard/Download directory 771\n", "", 0},
		{"stat -c %s /sdcard/none", "", "stat: '/sdcard/none': No such file or directory\n", 1},
		{"test -f /data/local/tmp/f; echo $?", "0\n", "", 0},
		{"test -e /data/local/tmp/none; echo $?", "1\n", "", 0},
		{"test ! -e /data/local/tmp/none && echo gone", "gone\n", "", 0},
		{"[ -f /data/local/tmp/f ] && echo yes", "yes\n", "", 0},
		{"sha256sum /data/local/tmp/f", "c2a4a1d2f7b3c2eb0f86a89f1f12b1b8ae6aaa31b3d3c0f29fa4a6c1d6e8f2d0  /data/local/tmp/f\n", "", -1},
		{"cp /data/local/tmp/f /sdcard/g && cat /sdcard/g", "hello\nmore\n", "", 0},
		{"mv /sdcard/g /sdcard/Download/ && ls /sdcard/Download", "g\n", "", 0},
		{"rm /sdcard/Download/g && ls /sdcard/Download", "", "", 0},
		{"rm /sdcard/Download/g", "", "rm: /sdcard/Download/g: No such file or directory\n", 1},
		{"rm -f -- /sdcard/Download/g", "", "", 0},
		{"rm /sdcard/Download", "", "rm: /sdcard/Download: Is a directory\n", 1},
		{"touch /sdcard/t && ls /sdcard/t", "/sdcard/t\n", "", 0},
		{"echo x > /system/y", "", "", 1},
		{"cat /nope", "", "cat: /nope: No such file or directory\n", 1},
		{"mkdir -p /sdcard/tree/a/b && echo 1 > /sdcard/tree/a/b/c && rm -r /sdcard/tree && ls /sdcard/tree", "", "ls: /sdcard/tree: No such file or directory\n", 1},
		{"echo data | cat > /sdcard/piped; cat /storage/self/primary/piped", "data\n", "", 0},
	}
	for _, s := range steps {
		r := run(t, sh, s.cmd)
		if s.rc == -1 { // hash: compare with Go's
			want := mustRun(t, sh, "cat /data/local/tmp/f")
			if !strings.HasPrefix(r.out, sha256Hex([]byte(want))+"  ") {
				t.Errorf("sha256sum = %q", r.out)
			}
			continue
		}
		if r.out != s.out || r.rc != s.rc || s.err != "" && r.err != s.err {
			t.Errorf("%q: out=%q err=%q rc=%d; want out=%q err=%q rc=%d", s.cmd, r.out, r.err, r.rc, s.out, s.err, s.rc)
		}
	}
}

func TestShellStdinAndInteractive(t *testing.T) {
	t.Parallel()
	sh := newTestShell()
	r := runIn(t, sh, "cat > /sdcard/in.txt && wc -c /sdcard/in.txt", []byte("pushed via stdin"))
	if r.rc != 0 || r.out != "16 /sdcard/in.txt\n" {
		t.Errorf("stdin: %+v", r)
	}
	// A command that ignores a large stdin must still finish.
	if r := runIn(t, sh, "echo done", bytes.Repeat([]byte("x"), 1<<20)); r.out != "done\n" {
		t.Errorf("ignored stdin: %+v", r)
	}
	r = runIn(t, sh, "", []byte("echo one\nif true; then\n  echo two\nfi\nexit 4\necho never\n"))
	if r.rc != 4 || r.out != "one\ntwo\n" {
		t.Errorf("interactive: %+v", r)
	}
}

func TestFSShellRedirectionStaysVirtual(t *testing.T) {
	t.Parallel()
	sh := newTestShell()
	// A redirect to a host path must not create anything on the host.
	if r := run(t, sh, "echo x > /tmp/solopi-sim-should-not-exist"); r.rc == 0 {
		t.Error("writing outside writable storage succeeded")
	}
	if r := run(t, sh, "cat /etc/passwd"); r.rc == 0 {
		t.Error("read a host file")
	}
}
