package plannercmd

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/solopi/device"
)

const plannerTestKey = "sk-planner-SECRET-0a1b2c3d4e5f"

// startFakeModel is a local vision model that expects the test key.
func startFakeModel(t *testing.T, o fakemodel.Options) *fakemodel.Server {
	t.Helper()
	if o.APIKey == "" {
		o.APIKey = plannerTestKey
	}
	srv, err := fakemodel.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// plannerApp runs the planner commands with a device handed in by the
// test; without one, a command that selects a device fails the test.
type plannerApp struct {
	open  func(ctx context.Context) (device.Transport, error)
	env   map[string]string
	stdin *os.File
	// hooks are handed to agent-run as the binary hands it none.
	hooks agentRunHooks
}

func (p plannerApp) run(t *testing.T, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	c := cmdtest.New(t, func(e cmdutil.Env) []*cli.Command { return commands(e, p.hooks) }, nil)
	c.Stdin = p.stdin
	for k, v := range p.env {
		c.Env[k] = v
	}
	if p.open == nil {
		c.NoDevice = true
	} else {
		tr, err := p.open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c.Transport = tr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := c.RunCtx(ctx, args...)
	return r.Stdout, r.Stderr, r.Code
}

func validatePlannerSchema(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := schematest.NewSet().ValidateBytes(name, b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// plannerStdin is a file holding s, for a command's standard input.
func plannerStdin(t *testing.T, s string) *os.File {
	t.Helper()
	f, err := os.Open(cmdtest.WriteFile(t, "stdin", []byte(s)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func checkStatuses(t *testing.T, out []byte) map[string]string {
	t.Helper()
	var r struct {
		Checks []agentloop.PreflightCheck `json:"checks"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	m := map[string]string{}
	for _, c := range r.Checks {
		m[c.Name] = c.Status
	}
	return m
}
