package plannercmd

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/adbdevice"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// plannerProviderFlags choose how the endpoint is spoken to. Each has an
// environment variable of a fixed name; a flag on the command line wins.
func plannerProviderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "model-stream", Usage: "ask for a streamed answer (server-sent events, assembled into one; env " + chat.EnvModelStream + "=1)"},
		&cli.StringFlag{Name: "model-api-style", Usage: "openai (Authorization: Bearer, <base>/chat/completions) or azure (api-key header, the base URL's path kept, api-version added; env " + chat.EnvModelAPIStyle + ")", Value: chat.APIStyleOpenAI},
		&cli.StringFlag{Name: "model-api-version", Usage: "azure: the api-version query parameter, e.g. 2024-10-21 (env " + chat.EnvModelAPIVersion + ")"},
		&cli.StringFlag{Name: "model-image-format", Usage: "screenshot encoding sent to the model: jpeg or png (env " + chat.EnvModelImageFormat + ")", Value: chat.ImageJPEG},
		&cli.IntFlag{Name: "model-image-quality", Usage: "JPEG quality 1..100 (env " + chat.EnvModelImageQuality + ")", Value: chat.DefaultImageQuality},
	}
}

// applyPlannerProvider sets the provider style of mc: a flag given on the
// command line, else its environment variable, else the default.
func applyPlannerProvider(c *cli.Context, e cmdutil.Env, mc *chat.Config) error {
	fromEnv := chat.DefaultConfig()
	if err := fromEnv.ApplyEnv(e.Getenv); err != nil {
		return fault.Usage(codePlannerModelConfig, err.Error())
	}
	mc.Stream, mc.APIStyle, mc.APIVersion, mc.Image = fromEnv.Stream, fromEnv.APIStyle, fromEnv.APIVersion, fromEnv.Image
	if c.IsSet("model-stream") {
		mc.Stream = c.Bool("model-stream")
	}
	if c.IsSet("model-api-style") {
		mc.APIStyle = c.String("model-api-style")
	}
	if c.IsSet("model-api-version") {
		mc.APIVersion = c.String("model-api-version")
	}
	if c.IsSet("model-image-format") {
		mc.Image.Format = strings.ToLower(c.String("model-image-format"))
	}
	if c.IsSet("model-image-quality") {
		mc.Image.Quality = c.Int("model-image-quality")
	}
	return nil
}

// Space is the coordinate space: --coordinate-space when given,
// else SOLOPI_MODEL_COORDINATE_SPACE, else auto. An explicit space
// overrides a cached profile.
func Space(c *cli.Context, e cmdutil.Env) (coord.Space, error) {
	v := c.String("coordinate-space")
	if !c.IsSet("coordinate-space") {
		if ev := e.Getenv(chat.EnvCoordinateSpace); ev != "" {
			v = ev
		}
	}
	s, err := coord.ParseSpace(v)
	if err != nil {
		return "", fault.Usage(CodeOption, err.Error())
	}
	return s, nil
}

// CheckResult is what planner-check prints when every check passed.
type CheckResult struct {
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

func plannerCheckCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "planner-check",
		Usage: "preflight the model endpoint: reachable, key accepted, images accepted, coordinate space frozen; touches no device",
		UsageText: "solopi planner-check [--model-base-url URL] [--model NAME] [--model-api-style openai|azure] [--model-stream]\n" +
			"    [--coordinate-space auto] [--display-size 1080x2340] ...\n\n" +
			"Checks, in order: endpoint_reachable, auth_accepted, chat_completion, accepts_images, coordinate_space.\n" +
			"Exit: 0 every check passed; 2 model_rejects_images (the endpoint answers text but refuses images: not a vision model);\n" +
			"3 usage or configuration; 4 model_unreachable (no HTTP answer, after --model-retries), model_timeout, model_auth_failed,\n" +
			"model_http_error, model_response_invalid or coordinate_calibration_failed. agent-run runs the same checks first.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "display-size", Usage: "display size WxH whose production image size a negotiation uses", Value: "1080x2340"},
			&cli.StringFlag{Name: "coordinate-space", Usage: "auto reads the cached profile or negotiates; an explicit space is used as configured (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
		}, ModelFlags()...),
		Action: plannerEndpointAction(exit, e, runPlannerCheck),
	}
}

// plannerEndpointAction is the action of a command that works on the
// model endpoint with synthetic images only (planner-calibrate,
// planner-check): the model setup, --display-size and the coordinate
// space, then run.
func plannerEndpointAction(exit *int, e cmdutil.Env, run func(ctx context.Context, s *Setup, space coord.Space, w, h int) (outcome.Result, error)) cli.ActionFunc {
	return cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
		setup, err := ReadSetup(c, e)
		if err != nil {
			return outcome.Result{}, err
		}
		w, h, err := plannerSize("display-size", c.String("display-size"))
		if err != nil {
			return outcome.Result{}, err
		}
		space, err := Space(c, e)
		if err != nil {
			return outcome.Result{}, err
		}
		return run(ctx, setup, space, w, h)
	})
}

// runPlannerCheck runs the preflight and prints its report.
func runPlannerCheck(ctx context.Context, s *Setup, space coord.Space, w, h int) (outcome.Result, error) {
	rep, err := Preflight(ctx, s, space, w, h)
	if err != nil {
		return outcome.Result{}, err
	}
	out := CheckResult{Success: true, Model: s.modelInfo(), Checks: rep.Checks, Endpoint: s.Model.EndpointProfile(),
		Profile: rep.Profile, Metrics: rep.Metrics()}
	if err := s.Model.CacheError(); err != nil {
		out.EndpointCacheError = err.Error()
	}
	if s.CacheDir != "" && rep.Profile.Source != agentloop.SourceConfigured {
		out.CacheFile = filepath.Join(s.CacheDir, s.ProfileKey().Hash()+".json")
	}
	return outcome.OK(plannerScrub(out, s.Redact)), nil
}

// Preflight runs the model checks (no device). A failure is the
// check's fault error carrying every check's result, the model and the
// usage so far.
func Preflight(ctx context.Context, s *Setup, space coord.Space, w, h int) (*agentloop.PreflightReport, error) {
	rep, err := agentloop.RunPreflight(ctx, agentloop.PreflightOptions{Model: s.Model, Key: s.ProfileKey(), Policy: s.Policy, Space: space,
		CacheDir: s.CacheDir, Refresh: s.Refresh, DisplayWidth: w, DisplayHeight: h, Redact: s.Redact})
	if err != nil {
		return rep, preflightFault(s, rep, err)
	}
	return rep, nil
}

// preflightFault is err as the printed error object: redacted, with the
// checks, the model and the usage.
func preflightFault(s *Setup, rep *agentloop.PreflightReport, err error) error {
	var fe *fault.Error
	if !errors.As(err, &fe) {
		fe = fault.From(err)
	}
	if fe.Kind == fault.Interrupted || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fe
	}
	out := fault.New(fe.Kind, fe.Code, s.Redact(fe.Message)).WithUserAction(fe.UserAction)
	for k, v := range fe.Details {
		out.With(k, v)
	}
	out.With("checks", plannerScrub(rep.Checks, s.Redact)).With("model", s.modelInfo()).With("metrics", rep.Metrics()).With("deviceActions", 0)
	out.Err = fe
	return out
}

// agentRunKeyboardCheck is the adb-mode part of agent-run's preflight,
// once the transport is open and before anything is sent to the phone:
// the ADB Keyboard must be installed before the first Type needs it.
func agentRunKeyboardCheck(ctx context.Context, s *Setup, rep *agentloop.PreflightReport, dev *adbdevice.Device) error {
	if err := rep.RunCheck(agentloop.CheckADBKeyboard, func() error { return dev.CheckKeyboard(ctx) }); err != nil {
		return preflightFault(s, rep, err)
	}
	return nil
}
