package devicecmd

import (
	"bytes"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/sim"
)

// rig runs the device commands against one simulated device, in process
// or through the simulator's adb-server front.
type rig struct{ *cmdtest.Rig }

// newRig is a rig on an in-process device.
func newRig(t *testing.T, o sim.Options) *rig { return &rig{cmdtest.NewRig(t, Commands, o)} }

// newAdbRig is a rig on a one-device farm reached through its adb server.
func newAdbRig(t *testing.T, o sim.FarmOptions) *rig {
	f := cmdtest.Farm(t, o)
	return &rig{&cmdtest.Rig{CLI: cmdtest.OverAdb(t, Commands, f), T: t, Dev: f.Devices()[0]}}
}

// requireNoOutputContains fails when any output seen so far contains one
// of the secrets.
func (r *rig) requireNoOutputContains(secrets ...string) {
	r.T.Helper()
	for _, o := range r.Outputs() {
		for _, s := range secrets {
			if bytes.Contains(o, []byte(s)) {
				r.T.Errorf("an output holds the secret %q: %s", s, o)
			}
		}
	}
}

// autoStartOn is a device whose replay auto-start is already on.
func autoStartOn() sim.Options {
	return sim.Options{App: appSettings(map[string]string{"KEY_REPLAY_AUTO_START": "true"})}
}
