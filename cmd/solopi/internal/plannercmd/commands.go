package plannercmd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// Environment variable of the profile cache directory.
const envPlannerCache = "SOLOPI_PLANNER_CACHE_DIR"

// Error codes of the planner commands.
const (
	CodeOption             = "invalid_option"
	codePlannerModelConfig = chat.CodeModelConfig
)

// ModelFlags configure the OpenAI-compatible endpoint. The API key has no
// flag of its own (a flag is visible in the process list): it comes from
// SOLOPI_MODEL_API_KEY or a file.
func ModelFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "model-base-url", Usage: "OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (env " + chat.EnvModelBaseURL + ")"},
		&cli.StringFlag{Name: "model", Usage: "model name (env " + chat.EnvModel + ")"},
		&cli.StringFlag{Name: "model-api-key-file", Usage: "read the API key from this file (default: env " + chat.EnvModelAPIKey + ")"},
		&cli.StringFlag{Name: "thinking", Usage: "thinking mode: auto (send nothing), enabled or disabled (env " + chat.EnvModelThinking + ")", Value: chat.ThinkingAuto},
		&cli.Float64Flag{Name: "model-timeout", Usage: "seconds per model HTTP attempt (env " + chat.EnvModelTimeout + ")", Value: 120},
		&cli.IntFlag{Name: "model-retries", Usage: "extra attempts on connection errors, 429 and 5xx", Value: 2},
		&cli.IntFlag{Name: "input-token-budget", Usage: "estimated prompt tokens; the oldest memory turns are trimmed above it (0: never; env " + chat.EnvTokenBudget + ")", Value: 24000},
		&cli.IntFlag{Name: "max-output-tokens", Usage: "token limit of each completion (max_tokens, or max_completion_tokens where an endpoint refuses max_tokens)", Value: 3000},
		&cli.Float64Flag{Name: "price-input", Usage: "USD per million prompt tokens, for the cost metric", Value: 0},
		&cli.Float64Flag{Name: "price-output", Usage: "USD per million completion tokens, for the cost metric", Value: 0},
		&cli.IntFlag{Name: "resize-long-side", Usage: "longest side of the image sent to the model in pixels (0: the screenshot as it is)", Value: 1280},
		&cli.StringFlag{Name: "calibration-cache", Usage: "directory of cached coordinate and endpoint profiles (env " + envPlannerCache + "; default: the user cache dir)"},
		&cli.BoolFlag{Name: "no-calibration-cache", Usage: "neither read nor write cached coordinate and endpoint profiles"},
		&cli.BoolFlag{Name: "recalibrate", Usage: "negotiate again even when a cached profile exists"},
	}, plannerProviderFlags()...)
}

// Setup is what the model flags resolve to.
type Setup struct {
	Model    *chat.Client
	cfg      chat.Config
	Policy   coord.ResizePolicy
	CacheDir string
	Refresh  bool
}

func ReadSetup(c *cli.Context, e cmdutil.Env) (*Setup, error) {
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.Thinking = c.String("model-base-url"), c.String("model"), c.String("thinking")
	mc.Retries, mc.InputTokenBudget, mc.MaxOutputTokens = c.Int("model-retries"), c.Int("input-token-budget"), c.Int("max-output-tokens")
	mc.InputPricePerMTok, mc.OutputPricePerMTok = c.Float64("price-input"), c.Float64("price-output")
	var err error
	if mc.Timeout, err = cmdutil.Seconds("model-timeout", c.Float64("model-timeout")); err != nil {
		return nil, err
	}
	if f := c.String("model-api-key-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			// The file name is the user's; its content is never echoed.
			return nil, fault.Usagef(codePlannerModelConfig, "cannot read --model-api-key-file: %v", err)
		}
		mc.APIKey = chat.NewSecret(strings.TrimSpace(string(b)))
	}
	// Flags win over the environment: the environment only fills what the
	// command line left unset.
	fromEnv := mc
	if err := fromEnv.ApplyEnv(e.Getenv); err != nil {
		return nil, fault.Usage(codePlannerModelConfig, err.Error())
	}
	mc.BaseURL, mc.Model, mc.APIKey = fromEnv.BaseURL, fromEnv.Model, fromEnv.APIKey
	if !c.IsSet("thinking") {
		mc.Thinking = fromEnv.Thinking
	}
	if !c.IsSet("model-timeout") {
		mc.Timeout = fromEnv.Timeout
	}
	if !c.IsSet("input-token-budget") {
		mc.InputTokenBudget = fromEnv.InputTokenBudget
	}
	if err := applyPlannerProvider(c, e, &mc); err != nil {
		return nil, err
	}
	if mc.InputPricePerMTok < 0 || mc.OutputPricePerMTok < 0 {
		return nil, fault.Usage(CodeOption, "--price-input and --price-output must not be negative")
	}
	m, err := chat.NewClient(mc)
	if err != nil {
		return nil, fault.Usage(codePlannerModelConfig, err.Error()).
			WithUserAction("Point --model-base-url (or " + chat.EnvModelBaseURL + ") at an OpenAI-compatible endpoint and name the model with --model (or " + chat.EnvModel + ").")
	}
	n := c.Int("resize-long-side")
	if n < 0 || (n > 0 && n < 64) || n > 8192 {
		return nil, fault.Usage(CodeOption, "--resize-long-side must be 0 or between 64 and 8192")
	}
	s := &Setup{Model: m, cfg: mc, Policy: coord.ResizePolicy{MaxLongSide: n}, Refresh: c.Bool("recalibrate")}
	if !c.Bool("no-calibration-cache") {
		s.CacheDir = c.String("calibration-cache")
		if s.CacheDir == "" {
			s.CacheDir = e.Getenv(envPlannerCache)
		}
		if s.CacheDir == "" {
			if s.CacheDir, err = agentloop.DefaultCacheDir(); err != nil {
				return nil, fault.Usage(CodeOption, err.Error()+"; pass --calibration-cache DIR or --no-calibration-cache")
			}
		}
	}
	m.UseCache(s.CacheDir)
	return s, nil
}

func (s *Setup) ProfileKey() agentloop.ProfileKey {
	return agentloop.ProfileKey{Endpoint: s.cfg.Endpoint(), Model: s.cfg.Model, Thinking: s.cfg.Thinking, Resize: s.Policy}
}

func (s *Setup) modelInfo() chat.Info { return s.cfg.Info() }

// Redact removes the API key from any text.
func (s *Setup) Redact(text string) string {
	k := s.cfg.APIKey.Reveal()
	if len(k) < 4 {
		return text
	}
	return strings.ReplaceAll(text, k, "[redacted]")
}

// plannerSize reads WxH.
func plannerSize(flag, v string) (int, int, error) {
	w, h, ok := strings.Cut(strings.ToLower(v), "x")
	if ok {
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if err1 == nil && err2 == nil && wi > 0 && hi > 0 && wi <= 20000 && hi <= 20000 {
			return wi, hi, nil
		}
	}
	return 0, 0, fault.Usagef(CodeOption, "--%s must be WIDTHxHEIGHT in pixels, e.g. 1080x2340", flag)
}

// Commands are the pure-vision planner commands: agent-run (the
// whole loop on a device), planner-parse (check one raw model answer) and
// planner-calibrate (negotiate the coordinate contract, no device).
func Commands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "agent-run",
			Usage: "run a task with the strict pure-vision planner (the model sees only the task and screenshots)",
			UsageText: "solopi agent-run --task TEXT [--device-mode solopi|adb] [--trajectory FILE] [--console] [--max-steps 30] [--max-duration 600]\n" +
				"    [--coordinate-space auto|relative_0_999|image_pixels|display_pixels] [--model-base-url URL] [--model NAME] ...\n\n" +
				"The planner-check preflight runs first, before the device is opened (and in adb mode the ADB Keyboard is checked\n" +
				"before anything is sent to the phone).\n\n" +
				"With --trajectory the screenshots are kept in screens/ beside it and report.html is written there (named\n" +
				"\"report\" in the JSON). --console serves the run live on 127.0.0.1 with a random token in the URL; it stops\n" +
				"when the run ends.\n\n" +
				"Exit: 0 completed and confirmed by the isolated review; 2 not completed or blocked, or the preflight found a model\n" +
				"that refuses images (model_rejects_images) or no ADB Keyboard (adb_keyboard_missing); 3 usage; 4 model, calibration\n" +
				"or device protocol error (model_unreachable, model_auth_failed, ...); 124 --max-duration; 130 interrupted.\n\nExample:\n  SOLOPI_MODEL_API_KEY=... solopi agent-run --task \"open Settings and turn on dark mode\" --model-base-url https://llm.example/v1 --model ui-tars --trajectory ./run/t.json",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "task", Usage: "what to do, in the user's words"},
				&cli.StringFlag{Name: "device-mode", Usage: "solopi (a SoloPi Agent session: taps become clicks on the node under the point) or adb (plain input)", Value: agentloop.ModeSoloPi},
				&cli.StringFlag{Name: "trajectory", Usage: "write the audit trajectory (schema 1.3) to this file"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace an existing trajectory file"},
				&cli.IntFlag{Name: "max-steps", Usage: "planning steps before giving up", Value: 30},
				&cli.Float64Flag{Name: "max-duration", Usage: "seconds before the task times out (exit 124)", Value: 600},
				&cli.StringFlag{Name: "coordinate-space", Usage: "auto negotiates with synthetic images before the first plan; or force relative_0_999, image_pixels, display_pixels (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
				&cli.Float64Flag{Name: "settle", Usage: "seconds to wait after an action before verifying it (default 0.5 for adb, 0 for solopi, which settles on the device)", Value: -1},
				&cli.StringFlag{Name: "interactive", Usage: "ask a human on the terminal for confirmations and takeovers: auto (when stdin and stderr are terminals), always, never", Value: "auto"},
				&cli.BoolFlag{Name: "console", Usage: "serve a live view of the run on this machine (announced on stderr as {\"console\":{\"url\":...}}); confirmations and takeovers can be answered there too"},
				&cli.Float64Flag{Name: "action-timeout", Usage: "solopi mode: seconds to wait for each action's receipt", Value: 15},
				&cli.Float64Flag{Name: "ack-timeout", Usage: "solopi mode: seconds to wait for the session's first observation", Value: 15},
				&cli.Float64Flag{Name: "poll-interval", Usage: "solopi mode: longest pause between polls, in seconds", Value: 0.2},
			}, ModelFlags()...),
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				o, err := readAgentRunOptions(c, e)
				if err != nil {
					return outcome.Result{}, err
				}
				o.stdin = e.Stdin
				return runAgentRun(ctx, g, g.Deps(), o)
			}),
		},
		{
			Name:      "planner-parse",
			Usage:     "check one raw model answer (stdin) against the action protocol; touches no device",
			UsageText: "solopi planner-parse [--coordinate-space relative_0_999] [--image-size WxH] [--display-size WxH] [--task TEXT] [--reasoning-file FILE] < answer.txt",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "coordinate-space", Usage: "the frozen space the answer is checked against", Value: string(coord.SpaceRelative)},
				&cli.StringFlag{Name: "image-size", Usage: "model image size WxH (needed for image_pixels; enables the mapping)"},
				&cli.StringFlag{Name: "display-size", Usage: "device display size WxH (needed for display_pixels; enables the mapping)"},
				&cli.StringFlag{Name: "task", Usage: "the user's task (an explicit swipe direction in it binds every Swipe)"},
				&cli.StringFlag{Name: "reasoning-file", Usage: "the provider's separate reasoning field, if any"},
			},
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				o := plannerParseOptions{space: c.String("coordinate-space"), imageSize: c.String("image-size"), displaySize: c.String("display-size"),
					task: c.String("task"), reasoningFile: c.String("reasoning-file")}
				return runPlannerParse(ctx, e.Stdin, o)
			}),
		},
		{
			Name:      "planner-calibrate",
			Usage:     "negotiate the model's coordinate space with synthetic target images and print the profile; touches no device",
			UsageText: "solopi planner-calibrate [--display-size 1080x2340] [--coordinate-space auto] [--model-base-url URL] [--model NAME] [--recalibrate] ...",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "display-size", Usage: "display size WxH whose production image size the probes use", Value: "1080x2340"},
				&cli.StringFlag{Name: "coordinate-space", Usage: "auto negotiates; an explicit space is reported as configured (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
			}, ModelFlags()...),
			Action: plannerEndpointAction(exit, e, runPlannerCalibrate),
		},
		plannerCheckCommand(exit, e),
	}
}

// plannerSeconds converts a seconds flag that may be 0 (meaning "off").
func plannerSeconds(name string, v float64) (time.Duration, error) {
	if v < 0 || v > 1e7 || v != v {
		return 0, fault.Usagef(CodeOption, "--%s must be a non-negative number of seconds", name)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// plannerQuote names a value for error messages without echoing long input.
func plannerQuote(v string) string {
	if len(v) > 60 {
		v = v[:60] + "…"
	}
	return fmt.Sprintf("%q", v)
}
