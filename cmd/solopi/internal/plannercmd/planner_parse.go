package plannercmd

import (
	"context"
	"errors"
	"io"
	"os"

	modelaction "github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

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

// ParseResult is an accepted answer.
type ParseResult struct {
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
func runPlannerParse(ctx context.Context, in io.Reader, o plannerParseOptions) (outcome.Result, error) {
	space, err := coord.ParseSpace(o.space)
	if err != nil || space == coord.SpaceAuto {
		return outcome.Result{}, fault.Usage(CodeOption, "--coordinate-space must be relative_0_999, image_pixels or display_pixels")
	}
	var frame coord.Frame
	if o.imageSize != "" {
		if frame.ImageWidth, frame.ImageHeight, err = plannerSize("image-size", o.imageSize); err != nil {
			return outcome.Result{}, err
		}
	}
	if o.displaySize != "" {
		if frame.DisplayWidth, frame.DisplayHeight, err = plannerSize("display-size", o.displaySize); err != nil {
			return outcome.Result{}, err
		}
	}
	if space == coord.SpaceImage && frame.ImageWidth == 0 {
		return outcome.Result{}, fault.Usage(CodeOption, "image_pixels needs --image-size WxH")
	}
	if space == coord.SpaceDisplay && frame.DisplayWidth == 0 {
		return outcome.Result{}, fault.Usage(CodeOption, "display_pixels needs --display-size WxH")
	}
	if in == nil {
		return outcome.Result{}, fault.Usage(CodeOption, "no standard input")
	}
	raw, err := io.ReadAll(io.LimitReader(in, plannerMaxAnswerBytes+1))
	if err != nil {
		return outcome.Result{}, fault.Wrap(fault.Invalid, CodeOption, "cannot read the answer from stdin", err)
	}
	if len(raw) > plannerMaxAnswerBytes {
		return outcome.Result{}, fault.Usage(CodeOption, "the answer on stdin is larger than 1 MiB")
	}
	reasoning := ""
	if o.reasoningFile != "" {
		b, err := os.ReadFile(o.reasoningFile)
		if err != nil {
			return outcome.Result{}, fault.Wrap(fault.Invalid, CodeOption, "cannot read --reasoning-file", err)
		}
		reasoning = string(b)
	}
	contract := coord.Contract{Space: space, Frame: frame}
	p, err := modelaction.Parse(string(raw), reasoning, contract.ParseOptions(o.task))
	if err != nil {
		var pe *modelaction.ProtocolError
		if errors.As(err, &pe) {
			return outcome.Result{}, fault.New(fault.Failed, pe.Code, pe.Message).With("offset", pe.Offset).With("commandDispatched", false)
		}
		return outcome.Result{}, err
	}
	out := ParseResult{Success: true, Canonical: p.Action.Canonical(), Call: p.Call, Reasoning: p.Reasoning, Space: string(space)}
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
				return outcome.Result{}, fault.New(fault.Failed, modelaction.CodeCoordinateOutOfRange, err.Error())
			}
			out.Fields[name] = mp
		}
	}
	return outcome.OK(out), nil
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
