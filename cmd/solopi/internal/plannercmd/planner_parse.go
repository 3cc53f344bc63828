package plannercmd

import (
	"context"

	"errors"
	"io"

	"github.com/urfave/cli/v2"

	modelaction "github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
)

func newCmdPlannerParse(e cmdutil.Env) *cli.Command {
	o := &plannerParseOptions{}
	return &cli.Command{
		Name:      "planner-parse",
		Usage:     "check one raw model answer (stdin) against the action protocol; touches no device",
		UsageText: "solopi planner-parse [--coordinate-space relative_0_999] [--image-size WxH] [--display-size WxH] [--task TEXT] [--reasoning-file FILE] < answer.txt",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "coordinate-space", Destination: &o.space, Usage: "the frozen space the answer is checked against", Value: string(coord.SpaceRelative)},
			&cli.StringFlag{Name: "image-size", Destination: &o.imageSize, Usage: "model image size WxH (needed for image_pixels; enables the mapping)"},
			&cli.StringFlag{Name: "display-size", Destination: &o.displaySize, Usage: "device display size WxH (needed for display_pixels; enables the mapping)"},
			&cli.StringFlag{Name: "task", Destination: &o.task, Usage: "the user's task (an explicit swipe direction in it binds every Swipe)"},
			&cli.StringFlag{Name: "reasoning-file", Destination: &o.reasoningFile, Usage: "the provider's separate reasoning field, if any"},
		},
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			var in io.Reader
			if g.Env.Stdin != nil {
				in = g.Env.Stdin
			}
			return runPlannerParse(ctx, in, o)
		}),
	}
}

// plannerParseOptions are the planner-parse flags.
type plannerParseOptions struct {
	space         string
	imageSize     string
	displaySize   string
	task          string
	reasoningFile string
}

// plannerMaxAnswerBytes bounds stdin: a model answer is a few kilobytes.
const plannerMaxAnswerBytes = 1 << 20

// parseResult is an accepted answer.
type parseResult struct {
	Success   bool                         `json:"success"`
	Action    map[string]any               `json:"action"`
	Canonical string                       `json:"canonical"`
	Call      string                       `json:"call"`
	Reasoning string                       `json:"reasoning,omitempty"`
	Space     string                       `json:"coordinateSpace"`
	Fields    map[string]coord.MappedPoint `json:"fields,omitempty"`
}

// runPlannerParse reads one raw model answer and prints the canonical
// action (exit 0) or the rejection code (exit 2). It never touches a
// device.
func runPlannerParse(ctx context.Context, in io.Reader, o *plannerParseOptions) (cmdutil.Result, error) {
	space, err := coord.ParseSpace(o.space)
	if err != nil || space == coord.SpaceAuto {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--coordinate-space must be relative_0_999, image_pixels or display_pixels")
	}
	var frame coord.Frame
	if o.imageSize != "" {
		if frame.ImageWidth, frame.ImageHeight, err = plannerSize("image-size", o.imageSize); err != nil {
			return cmdutil.Result{}, err
		}
	}
	if o.displaySize != "" {
		if frame.DisplayWidth, frame.DisplayHeight, err = plannerSize("display-size", o.displaySize); err != nil {
			return cmdutil.Result{}, err
		}
	}
	if space == coord.SpaceImage && frame.ImageWidth == 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "image_pixels needs --image-size WxH")
	}
	if space == coord.SpaceDisplay && frame.DisplayWidth == 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "display_pixels needs --display-size WxH")
	}
	if in == nil {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "no standard input")
	}
	raw, err := io.ReadAll(io.LimitReader(in, plannerMaxAnswerBytes+1))
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Invalid, fault.CodeInvalidOption, "cannot read the answer from stdin", err)
	}
	if len(raw) > plannerMaxAnswerBytes {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "the answer on stdin is larger than 1 MiB")
	}
	reasoning := ""
	if o.reasoningFile != "" {
		b, err := artifacts.Input{What: "--reasoning-file", Code: fault.CodeInvalidOption, Max: plannerMaxAnswerBytes}.Read(o.reasoningFile)
		if err != nil {
			return cmdutil.Result{}, err
		}
		reasoning = string(b)
	}
	contract := coord.Contract{Space: space, Frame: frame}
	p, err := modelaction.Parse(string(raw), reasoning, contract.ParseOptions(o.task))
	if err != nil {
		var pe *modelaction.ProtocolError
		if errors.As(err, &pe) {
			return cmdutil.Result{}, fault.New(fault.Failed, pe.Code, pe.Message).With("offset", pe.Offset).With("commandDispatched", false)
		}
		return cmdutil.Result{}, err
	}
	out := parseResult{Success: true, Canonical: p.Action.Canonical(), Call: p.Call, Reasoning: p.Reasoning, Space: string(space)}
	b, _ := plannerActionJSON(p.Action)
	out.Action = b
	// With both sizes known, show the full mapping the runtime would use.
	if frame.Valid() {
		out.Fields = map[string]coord.MappedPoint{}
		for name, pt := range map[string]*modelaction.Point{"element": p.Action.Element, "start": p.Action.Start, "end": p.Action.End} {
			if pt == nil {
				continue
			}
			mp, err := contract.Map(*pt)
			if err != nil {
				return cmdutil.Result{}, fault.New(fault.Failed, fault.CodeCoordinateOutOfRange, err.Error())
			}
			out.Fields[name] = mp
		}
	}
	return cmdutil.OK(out), nil
}

// plannerActionJSON is the action as JSON fields (Wait in seconds): the
// audit's fields with the CLI's camelCase spelling.
func plannerActionJSON(a modelaction.Action) (map[string]any, error) {
	m := a.Fields()
	for snake, camel := range map[string]string{
		"duration_seconds":   "durationSeconds",
		"swipe_direction":    "swipeDirection",
		"screen_description": "screenDescription",
	} {
		if v, found := m[snake]; found {
			delete(m, snake)
			m[camel] = v
		}
	}
	return m, nil
}
