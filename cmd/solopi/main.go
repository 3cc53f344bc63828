// Command solopi drives Android test automation through the SoloPi app:
// case replay with artifacts and CI exit codes, every SoloPi session type,
// the dynamic Agent protocol, and a simulated device to develop against.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
)

func main() {
	// SIGINT/SIGTERM cancel the command's context; the command cleans up what
	// it started, still prints its JSON, and the exit code becomes 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal the default handling comes back, so a
		// second Ctrl-C ends a cleanup that takes too long.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args, cmdutil.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Stdin: os.Stdin,
	})
	stop()
	os.Exit(code)
}
