package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/ptytest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

// syncBuffer is what a terminal showed, read while it is written.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An interactive bash on a terminal loads `solopi completion bash`: Tab
// completes a command and a flag of the built binary, and a mistyped
// command gets the nearest one.
func TestE2ECompletionInInteractiveBash(t *testing.T) {
	t.Parallel()
	bash := tooltest.Look(t, "bash")
	dir := t.TempDir()
	if err := os.Symlink(binPath, filepath.Join(dir, "solopi")); err != nil {
		t.Fatal(err)
	}
	script := runBinary(t, nil, "completion", "bash")
	if script.code != 0 {
		t.Fatalf("completion bash: exit %d", script.code)
	}
	file := filepath.Join(dir, "solopi.bash")
	if err := os.WriteFile(file, script.stdout, 0o600); err != nil {
		t.Fatal(err)
	}
	ptmx, tty := ptytest.Open(t, 200)
	var screen syncBuffer
	go io.Copy(&screen, ptmx) // ends with EIO once the shell is gone
	sh := exec.Command(bash, "--norc", "--noprofile", "-i")
	sh.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "PS1=$ ", "TERM=dumb", "INPUTRC=/dev/null")
	sh.Stdin, sh.Stdout, sh.Stderr = tty, tty, tty
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	typeIn := func(s string) {
		if _, err := ptmx.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	shows := func(what string) {
		t.Helper()
		testwait.Until(t, 20*time.Second, "the terminal to show "+what, func() bool { return strings.Contains(screen.String(), what) })
	}
	typeIn("source " + file + " && echo loaded-$((40+2))\n")
	shows("loaded-42")
	typeIn("solopi run-b\t")
	shows("solopi run-batch ")
	typeIn("--cases-f\t")
	shows("--cases-file ")
	typeIn("\x15solopi runn\n") // Ctrl-U drops the line typed so far
	shows(`did you mean "run"?`)
	typeIn("exit\n")
}
