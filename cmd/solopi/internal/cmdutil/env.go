package cmdutil

import (
	"context"
	"io"
	"os"

	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// Env is the process environment a command sees; tests supply their own.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Stdin is the command's standard input (planner-parse reads the model
	// answer from it; agent-run asks a human on it when it is a terminal).
	Stdin *os.File
	// Transport, when set, replaces device selection through the adb
	// server: `solopi demo` and in-process tests hand in a simulated device
	// so that the whole command path (flags, session, JSON, exit code) runs
	// unchanged.
	Transport func(ctx context.Context) (device.Transport, error)
	// Secrets, when set, replaces the user cache's store of case-import's
	// records of encrypted parameters (the demo keeps its own).
	Secrets *replay.SecretsStore
}

// SecretsStore is where case-import records which parameters are
// encrypted and where run looks them up.
func (e Env) SecretsStore() replay.SecretsStore {
	if e.Secrets != nil {
		return *e.Secrets
	}
	return replay.DefaultSecretsStore()
}
