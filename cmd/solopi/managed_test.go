package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// managed-serve as a process: its token from the environment, its
// listening line first, SIGINT its normal end (exit 130) with the end
// object, the token printed nowhere.
func TestManagedServe(t *testing.T) {
	t.Parallel()
	plan, matrix, _ := cmdtest.ManagedFiles(t)
	const token = "serve-token-1234567890abcd"
	for _, bind := range []string{"127.0.0.1", "::1"} {
		t.Run(bind, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "managed.sqlite")
			cmd := exec.Command(binPath, "managed-serve", "--database", db, "--bind", bind, "--port", "0")
			cmd.Env = append(os.Environ(), "SOLOPI_MANAGED_BEARER_TOKEN="+token)
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewReader(stdout)
			first, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("no listening line: %v; stderr %s", err, stderr.String())
			}
			schematest.Validate(t, "managed-serve", bytes.TrimSpace(first))
			var l struct{ Listening struct{ URL string } }
			json.Unmarshal(first, &l)

			cmdtest.SubmitOverHTTP(t, l.Listening.URL, token, plan, matrix, "serve-"+strings.ReplaceAll(bind, ":", "x"))

			cmd.Process.Signal(syscall.SIGINT)
			rest, _ := io.ReadAll(lines)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit after SIGINT: %v; stderr %s", err, stderr.String())
			}
			schematest.Validate(t, "managed-serve", bytes.TrimSpace(rest))
			if bytes.Contains(rest, []byte(token)) || bytes.Contains(first, []byte(token)) || strings.Contains(stderr.String(), token) {
				t.Fatal("the bearer token was printed")
			}
		})
	}
}
