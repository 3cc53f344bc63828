package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/sim"
)

// simServeOptions are the flags of `sim serve`.
type simServeOptions struct {
	devices     int
	timeScale   float64
	host        string
	serverPort  int
	controlPort int
	noAdbd      bool
	// fakeModel is the fake model's provider mode ("": none).
	fakeModel string
}

// simServeInfo is the one JSON object `sim serve` prints once it listens.
type simServeInfo struct {
	Success   bool             `json:"success"`
	AdbServer simAdbServer     `json:"adbServer"`
	Control   simControl       `json:"control"`
	TimeScale float64          `json:"timeScale"`
	Devices   []sim.DeviceInfo `json:"devices"`
	// FakeModel is the local OpenAI-compatible model for agent-run demos.
	FakeModel *simFakeModel `json:"fakeModel,omitempty"`
}

type simFakeModel struct {
	BaseURL  string `json:"baseUrl"`
	Provider string `json:"provider"`
	Env      string `json:"env"`
}

type simAdbServer struct {
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Env is what to export so solopi talks to the simulator directly.
	Env string `json:"env"`
}

type simControl struct {
	URL string `json:"url"`
}

func newCmdSim(e cmdutil.Env) *cli.Command {
	o := &simServeOptions{}
	fakeModel := &fakeModelMode{}
	return &cli.Command{
		Name:  "sim",
		Usage: "the simulated Android device running SoloPi v1.0.2",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve simulated devices until interrupted",
			UsageText: "solopi sim serve [--devices N] [--time-scale X] [--fake-model[=MODE]]\n\n" +
				"Prints one JSON object with the fake adb server address (export ANDROID_ADB_SERVER_PORT to\n" +
				"use it with solopi), each device's fake adbd address (for `adb connect` with Debian's adb)\n" +
				"and the loopback control endpoint for fault injection, then serves until SIGINT/SIGTERM.\n\n" +
				"Examples:\n  solopi sim serve --devices 2 --time-scale 10\n" +
				"  ANDROID_ADB_SERVER_PORT=<port> solopi --serial sim-0001 doctor\n" +
				"  solopi sim serve --fake-model   # then: export <fakeModel.env>; solopi agent-run --task ...\n" +
				"  solopi sim serve --fake-model=azure   # a provider mode; azure also needs any SOLOPI_MODEL_API_KEY\n" +
				"  curl -X POST <control>/v1/devices/sim-0001/permission -d '{\"name\":\"accessibility\",\"granted\":false}'",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "devices", Destination: &o.devices, Value: 1, Usage: "number of simulated devices"},
				&cli.Float64Flag{Name: "time-scale", Destination: &o.timeScale, Value: 1, Usage: "device time runs this many times faster than real time"},
				&cli.StringFlag{Name: "host", Destination: &o.host, Value: "127.0.0.1", Usage: "loopback address to bind"},
				&cli.IntFlag{Name: "server-port", Destination: &o.serverPort, Value: 0, Usage: "fake adb server port (0 picks a free one)"},
				&cli.IntFlag{Name: "control-port", Destination: &o.controlPort, Value: 0, Usage: "control endpoint port (0 picks a free one)"},
				&cli.BoolFlag{Name: "no-adbd", Destination: &o.noAdbd, Usage: "skip the per-device fake adbd listeners"},
				&cli.GenericFlag{Name: "fake-model", Usage: fakeModelUsage(), Value: fakeModel},
			},
			Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
				o.fakeModel = fakeModel.mode
				return runSimServe(ctx, g, o)
			}),
		}},
	}
}

// isLoopback accepts only loopback bind addresses: nothing the simulator
// starts is reachable from another machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runSimServe starts the farm, prints the one JSON object as soon as it
// listens, and serves until ctx ends (exit 0: stopping a server is its
// normal end).
func runSimServe(ctx context.Context, g *cmdutil.Globals, o *simServeOptions) (cmdutil.Result, error) {
	switch {
	case o.devices < 1 || o.devices > 64:
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--devices must be between 1 and 64")
	case !(o.timeScale > 0) || o.timeScale > 1000:
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--time-scale must be > 0 and at most 1000")
	case !isLoopback(o.host):
		return cmdutil.Result{}, fault.Usage(fault.CodeUnsafeBind, "--host must be a loopback address")
	}
	farm, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: o.devices, TimeScale: o.timeScale, Host: o.host,
		ServerPort: o.serverPort, NoAdbd: o.noAdbd})
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeSimStartFailed, "the simulator could not start", err)
	}
	defer farm.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.controlPort)))
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeSimStartFailed, "the control endpoint could not listen", err)
	}
	srv := &http.Server{Handler: farm.ControlHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	port := farm.Server().Port()
	info := simServeInfo{
		Success: true,
		AdbServer: simAdbServer{Address: farm.Server().Addr(), Port: port,
			Env: fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", port)},
		Control:   simControl{URL: "http://" + ln.Addr().String()},
		TimeScale: o.timeScale,
		Devices:   farm.Describe(),
	}
	if o.fakeModel != "" {
		fm, err := fakemodel.Start(fakemodel.Options{Provider: o.fakeModel})
		if err != nil {
			return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeSimStartFailed, "the fake model could not start", err)
		}
		defer fm.Close()
		info.FakeModel = &simFakeModel{BaseURL: fm.URL, Provider: fm.Provider(), Env: simFakeModelEnv(fm)}
	}
	if code := g.Print(cmdutil.OK(info)); code != outcome.ExitOK {
		return cmdutil.Result{}, nil
	}
	<-ctx.Done()
	return cmdutil.Result{}, nil
}
