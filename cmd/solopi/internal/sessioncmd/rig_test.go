package sessioncmd

import (
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/devicecmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/sim"
)

// withDevice are the session commands plus the device and case commands a
// test checks the device with (app-status, cases).
func withDevice(e cmdutil.Env) []*cli.Command {
	return append(append(Commands(e), devicecmd.Commands(e)...), replaycmd.Commands(e)...)
}

// rig runs the session commands against one in-process simulated device.
type rig struct{ *cmdtest.Rig }

func newRig(t *testing.T, o sim.Options) *rig { return &rig{cmdtest.NewRig(t, withDevice, o)} }

// last is the stdout of the last command.
func (r *rig) last() string {
	outs := r.Outputs()
	return string(outs[len(outs)-2])
}

// poll makes the host poll quickly: the simulator runs faster than real
// time, the host's polling does not.
func poll(args ...string) []string { return append(args, "--poll-interval", "0.05") }

func str(m map[string]any, k string) string   { s, _ := m[k].(string); return s }
func boolean(m map[string]any, k string) bool { b, _ := m[k].(bool); return b }
