package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

//go:embed demodata/counter-smoke.json
var demoCase []byte

const demoCaseName = "counter-smoke"

type demoOptions struct {
	artifacts string
	timeScale float64
}

func newCmdDemo(e cmdutil.Env) *cli.Command {
	o := &demoOptions{}
	return &cli.Command{
		Name:  "demo",
		Usage: "run the main job on an in-process simulated phone (needs nothing but this binary)",
		UsageText: "solopi demo [--artifacts DIR] [--time-scale X]\n\n" +
			"Starts a simulated Android device with SoloPi v1.0.2 in this process, imports the counter\n" +
			"case, runs it with `run --artifacts DIR --overwrite` through the same code as on a phone,\n" +
			"and prints the run's JSON; the exit code is the run's verdict (0 passed, 2 failed).\n\n" +
			"Example:\n  solopi demo && ls solopi-demo",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "artifacts", Destination: &o.artifacts, Value: "solopi-demo", Usage: "artifacts directory of the run (replaced on each demo)"},
			&cli.Float64Flag{Name: "time-scale", Destination: &o.timeScale, Value: 20, Usage: "simulated device time speed-up"},
		},
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			return runDemo(ctx, g, o)
		}),
	}
}

// runDemo drives the real command path against an in-process device: the
// only difference from a phone is where the transport comes from.
func runDemo(ctx context.Context, g *cmdutil.Globals, o *demoOptions) (cmdutil.Result, error) {
	if !(o.timeScale > 0) || o.timeScale > 1000 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--time-scale must be > 0 and at most 1000")
	}
	dev := sim.New(sim.Options{Serial: "sim-demo", TimeScale: o.timeScale})
	defer dev.Close()
	tmp, err := os.MkdirTemp("", "solopi-demo-")
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeDemoSetupFailed, "cannot create a temporary directory", err)
	}
	defer os.RemoveAll(tmp)
	casePath := filepath.Join(tmp, demoCaseName+".json")
	if err := os.WriteFile(casePath, demoCase, 0o600); err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeDemoSetupFailed, "cannot write the demo case", err)
	}
	inner := func(args ...string) (map[string]any, int, error) {
		var out bytes.Buffer
		// The simulated device and its records live only as long as the
		// demo: its case-import record stays in the temporary directory.
		ie := cmdutil.Env{Stdout: &out, Stderr: g.Env.Stderr, Getenv: g.Env.Getenv,
			Transport: func(context.Context) (device.Transport, error) { return dev, nil },
			Secrets:   &replay.SecretsStore{Dir: filepath.Join(tmp, "secrets")}}
		code := run(ctx, append([]string{"solopi"}, args...), ie)
		var obj map[string]any
		if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
			return nil, code, fault.Wrap(fault.Transport, fault.CodeDemoFailed, "a demo step printed no JSON object", err)
		}
		return obj, code, nil
	}
	g.Progress.Printf("demo: importing %s into the simulated device %s", demoCaseName, dev.Serial())
	imported, code, err := inner("case-import", "--file", casePath, "--replace")
	if err != nil {
		return cmdutil.Result{}, err
	}
	if code != outcome.ExitOK {
		// The inner command's own object and code, as it printed them.
		return cmdutil.Result{Value: imported, Exit: code}, nil
	}
	g.Progress.Printf("demo: running %s with artifacts in %s", demoCaseName, o.artifacts)
	result, code, err := inner("run", "--case", demoCaseName, "--artifacts", o.artifacts, "--overwrite")
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := demoResult{run: result, Demo: demoInfo{Device: dev.Serial(), Simulated: true, TimeScale: o.timeScale, CaseImport: imported}}
	return cmdutil.Result{Value: out, Exit: code}, nil
}

// demoResult is what demo prints: the run's object as the inner run
// printed it, echoed, with the demo's own object beside its keys.
type demoResult struct {
	run  map[string]any
	Demo demoInfo `json:"demo"`
}

// demoInfo is the demo's object: the simulated phone and the case-import
// object the inner case-import printed (echoed).
type demoInfo struct {
	CaseImport map[string]any `json:"caseImport"`
	Device     string         `json:"device"`
	Simulated  bool           `json:"simulated"`
	TimeScale  float64        `json:"timeScale"`
}

// MarshalJSON lays the demo's object over the run's, keys sorted.
func (r demoResult) MarshalJSON() ([]byte, error) {
	type fields demoResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.run, Fields: fields(r)}.MarshalJSON()
}
