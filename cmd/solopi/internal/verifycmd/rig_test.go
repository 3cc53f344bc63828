package verifycmd

import (
	"testing"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

const plannerTestKey = "sk-verify-SECRET-0a1b2c3d4e5f"

// rig runs verify-run against one in-process simulated phone.
type rig struct{ *cmdtest.Rig }

// Agent segments run on the phone's clock (session budgets, idle
// timeouts): a slower time scale than the rig's default keeps them clear
// of a loaded host's pauses.
func newRig(t *testing.T, o sim.Options) *rig {
	if o.TimeScale == 0 && o.Clock == nil {
		o.TimeScale = verifyTimeScale
	}
	return &rig{cmdtest.NewRig(t, Commands, o)}
}

const verifyTimeScale = 20

// verifyRun runs verify-run and checks its summary against the schema.
func (r *rig) verifyRun(args ...string) (cmdtest.Result, map[string]any) {
	r.T.Helper()
	res := r.Run(append([]string{"verify-run"}, args...)...)
	schematest.Validate(r.T, "verify-run", res.Stdout)
	return res, res.Object(r.T)
}

// vision points the rig at a fake vision model.
func (r *rig) vision(o fakemodel.Options) {
	r.T.Helper()
	o.APIKey = plannerTestKey
	srv, err := fakemodel.Start(o)
	if err != nil {
		r.T.Fatal(err)
	}
	r.T.Cleanup(func() { srv.Close() })
	r.Env[chat.EnvModelBaseURL], r.Env[chat.EnvModel], r.Env[chat.EnvModelAPIKey] = srv.URL, "fake-vision", plannerTestKey
}
