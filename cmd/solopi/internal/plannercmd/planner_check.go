package plannercmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
)

func newCmdPlannerCheck(e cmdutil.Env) *cli.Command {
	o := &endpointOptions{}
	return &cli.Command{
		Name:  "planner-check",
		Usage: "preflight the model endpoint: reachable, key accepted, images accepted, coordinate space frozen; touches no device",
		UsageText: "solopi planner-check [--model-base-url URL] [--model NAME] [--model-api-style openai|azure] [--model-stream]\n" +
			"    [--coordinate-space auto] [--display-size 1080x2340] ...\n\n" +
			"Checks, in order: endpoint_reachable, auth_accepted, chat_completion, accepts_images, coordinate_space.\n" +
			"Exit: 0 every check passed; 2 model_rejects_images (the endpoint answers text but refuses images: not a vision model);\n" +
			"3 usage or configuration; 4 model_unreachable (no HTTP answer, after --model-retries), model_timeout, model_auth_failed,\n" +
			"model_http_error, model_response_invalid or coordinate_calibration_failed. agent-run runs the same checks first.",
		Flags: o.flags("display size WxH whose production image size a negotiation uses", "auto reads the cached profile or negotiates; an explicit space is used as configured (env "+chat.EnvCoordinateSpace+")"),
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			s, space, w, h, err := o.resolve(g)
			if err != nil {
				return cmdutil.Result{}, err
			}
			return runPlannerCheck(ctx, s, space, w, h)
		}),
	}
}

// checkResult is what planner-check prints when every check passed.
type checkResult struct {
	Success  bool                       `json:"success"`
	Model    chat.Info                  `json:"model"`
	Checks   []agentloop.PreflightCheck `json:"checks"`
	Endpoint chat.EndpointProfile       `json:"endpointProfile"`
	// EndpointCacheError says why what the endpoint refused could not be
	// cached (it is then learned again next time).
	EndpointCacheError string             `json:"endpointCacheError,omitempty"`
	Profile            *agentloop.Profile `json:"coordinateProfile"`
	// CacheFile is the cached coordinate profile (none for a configured
	// space or without a cache).
	CacheFile string            `json:"cacheFile,omitempty"`
	Metrics   agentloop.Metrics `json:"metrics"`
	// DeviceActions is always 0: the check touches no device.
	DeviceActions int `json:"deviceActions"`
}

// runPlannerCheck runs the preflight and prints its report.
func runPlannerCheck(ctx context.Context, s *agentloop.ModelSetup, space coord.Space, w, h int) (cmdutil.Result, error) {
	rep, err := s.Preflight(ctx, space, w, h)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := checkResult{Success: true, Model: s.Info(), Checks: rep.Checks, Endpoint: s.Model.EndpointProfile(),
		Profile: rep.Profile, Metrics: rep.Metrics(), CacheFile: s.ProfileFile(rep.Profile)}
	if err := s.Model.CacheError(); err != nil {
		out.EndpointCacheError = err.Error()
	}
	return cmdutil.OK(s.Scrub(out)), nil
}
