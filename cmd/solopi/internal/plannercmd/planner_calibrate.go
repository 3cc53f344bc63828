package plannercmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
)

// endpointOptions are the options of a command that works on the model
// endpoint with synthetic images only (planner-calibrate, planner-check).
type endpointOptions struct {
	displaySize, space string
	model              cmdutil.ModelOptions
}

func (o *endpointOptions) flags(displayUsage, spaceUsage string) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "display-size", Destination: &o.displaySize, Usage: displayUsage, Value: "1080x2340"},
		&cli.StringFlag{Name: "coordinate-space", Destination: &o.space, Usage: spaceUsage, Value: string(coord.SpaceAuto)},
	}, cmdutil.ModelFlags(&o.model)...)
}

// resolve is the model setup, the coordinate space and the display size.
func (o *endpointOptions) resolve(g *cmdutil.Globals) (*agentloop.ModelSetup, coord.Space, int, int, error) {
	s, err := o.model.Setup(g)
	if err != nil {
		return nil, "", 0, 0, err
	}
	w, h, err := plannerSize("display-size", o.displaySize)
	if err != nil {
		return nil, "", 0, 0, err
	}
	space, err := cmdutil.CoordinateSpace(g, o.space)
	if err != nil {
		return nil, "", 0, 0, err
	}
	return s, space, w, h, nil
}

func newCmdPlannerCalibrate(e cmdutil.Env) *cli.Command {
	o := &endpointOptions{}
	return &cli.Command{
		Name:      "planner-calibrate",
		Usage:     "negotiate the model's coordinate space with synthetic target images and print the profile; touches no device",
		UsageText: "solopi planner-calibrate [--display-size 1080x2340] [--coordinate-space auto] [--model-base-url URL] [--model NAME] [--recalibrate] ...",
		Flags:     o.flags("display size WxH whose production image size the probes use", "auto negotiates; an explicit space is reported as configured (env "+chat.EnvCoordinateSpace+")"),
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			s, space, w, h, err := o.resolve(g)
			if err != nil {
				return cmdutil.Result{}, err
			}
			return runPlannerCalibrate(ctx, s, space, w, h)
		}),
	}
}

// calibrateResult is what planner-calibrate prints.
type calibrateResult struct {
	Success    bool               `json:"success"`
	Profile    *agentloop.Profile `json:"profile"`
	Candidates []any              `json:"candidates"`
	CacheFile  string             `json:"cacheFile,omitempty"`
	Model      chat.Info          `json:"model"`
	Metrics    agentloop.Metrics  `json:"metrics"`
	Display    [2]int             `json:"displaySize"`
	Image      [2]int             `json:"imageSize"`
	// DeviceActions is always 0: negotiation uses synthetic images only.
	DeviceActions int `json:"deviceActions"`
}

// runPlannerCalibrate negotiates (or loads, or reports the configured
// space) without opening any device.
func runPlannerCalibrate(ctx context.Context, s *agentloop.ModelSetup, space coord.Space, w, h int) (cmdutil.Result, error) {
	cal, err := s.Calibrate(ctx, space, w, h)
	if err != nil {
		if e := fault.From(err); e.Code == fault.CodeCoordinateCalibrationFailed {
			return cmdutil.Result{}, e.WithUserAction(plannerUserAction[agentloop.OutcomeCalibration])
		}
		return cmdutil.Result{}, err
	}
	iw, ih := s.Policy.ImageSize(w, h)
	out := calibrateResult{Success: true, Profile: cal.Profile, Candidates: cal.Candidates, Model: s.Info(), Metrics: cal.Metrics,
		Display: [2]int{w, h}, Image: [2]int{iw, ih}, CacheFile: s.ProfileFile(cal.Profile)}
	return cmdutil.OK(s.Scrub(out)), nil
}
