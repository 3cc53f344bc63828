package managedcmd

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/devicecmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
	"github.com/solopi-dev/solopi/sim"
)

const ownerToken = "managed-owner-token-0123456789"

// farmCommands are the managed commands plus what a test prepares and
// checks devices with (config-set, status, verify-run).
func farmCommands(e cmdutil.Env) []*cli.Command {
	return append(append(append(Commands(e), devicecmd.Commands(e)...), replaycmd.Commands(e)...), verifycmd.Commands(e)...)
}

// rig runs the managed commands on one store, in process: the store
// commands without a device, the workers and the probe on one simulated
// phone.
type rig struct {
	*cmdtest.CLI
	t    *testing.T
	db   string
	root string // the workers' --artifacts-root
	dev  *sim.Device
}

// newRig is a rig on database (a SQLite path or a PostgreSQL schema URL)
// with a simulated phone (nil options: none).
func newRig(t *testing.T, database string, o *sim.Options) *rig {
	r := &rig{t: t, db: database, root: filepath.Join(t.TempDir(), "evidence")}
	if o == nil {
		r.CLI = cmdtest.New(t, farmCommands, nil)
		r.NoDevice = true
		return r
	}
	r.dev = cmdtest.Device(t, *o)
	r.CLI = cmdtest.New(t, farmCommands, r.dev)
	return r
}

// managed runs a managed command on the rig's store (--database after the
// command name), checks its exit code and schema and decodes it.
func (r *rig) managed(code int, args ...string) map[string]any {
	r.t.Helper()
	args = append(args[:1:1], append([]string{"--database", r.db}, args[1:]...)...)
	return r.Expect(code, args[0], args...)
}

// ready turns auto-start on and registers the phone through the doctor:
// healthy.
func (r *rig) ready() {
	r.t.Helper()
	r.Expect(0, "config-set", "config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "true", "--poll-interval", "0.05")
	if p := r.managed(0, "managed-device-probe"); cmdtest.Obj(p, "device")["health"] != "healthy" {
		r.t.Fatalf("probe: %v", p)
	}
}

// submit submits plan against one target with replicas and returns the
// taskId.
func (r *rig) submit(plan, key string, replicas int, flags ...string) string {
	r.t.Helper()
	b, _ := json.Marshal([]any{map[string]any{"id": "counter", "replicas": replicas}})
	matrix := cmdtest.WriteFile(r.t, "matrix.json", b)
	task := r.managed(0, append([]string{"managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", key,
		"--owner-token", ownerToken}, flags...)...)
	return task["taskId"].(string)
}
