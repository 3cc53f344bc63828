package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// envPlannerCache is the environment variable of the profile cache
// directory.
const envPlannerCache = "SOLOPI_PLANNER_CACHE_DIR"

// maxKeyFile bounds --model-api-key-file: a key is some hundred bytes.
const maxKeyFile = 64 << 10

// ModelOptions are the values of the model flags (agent-run, planner-check,
// planner-calibrate, verify-run). The API key has no flag of its own (a
// flag is visible in the process list): it comes from SOLOPI_MODEL_API_KEY
// or a file.
type ModelOptions struct {
	baseURL, model, keyFile, thinking string
	timeout                           float64
	retries, budget, maxOutput        int
	priceIn, priceOut                 float64
	resize                            int
	cache                             string
	noCache, recalibrate              bool
	stream                            bool
	apiStyle, apiVersion, imageFormat string
	imageQuality                      int
}

// ModelFlags bind the model flags to o.
func ModelFlags(o *ModelOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model-base-url", Destination: &o.baseURL, Usage: "OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (env " + chat.EnvModelBaseURL + ")"},
		&cli.StringFlag{Name: "model", Destination: &o.model, Usage: "model name (env " + chat.EnvModel + ")"},
		&cli.StringFlag{Name: "model-api-key-file", Destination: &o.keyFile, Usage: "read the API key from this file (default: env " + chat.EnvModelAPIKey + ")"},
		&cli.StringFlag{Name: "thinking", Destination: &o.thinking, Usage: "thinking mode: auto (send nothing), enabled or disabled (env " + chat.EnvModelThinking + ")", Value: chat.ThinkingAuto},
		&cli.Float64Flag{Name: "model-timeout", Destination: &o.timeout, Usage: "seconds per model HTTP attempt (env " + chat.EnvModelTimeout + ")", Value: 120},
		&cli.IntFlag{Name: "model-retries", Destination: &o.retries, Usage: "extra attempts on connection errors, 429 and 5xx", Value: 2},
		&cli.IntFlag{Name: "input-token-budget", Destination: &o.budget, Usage: "estimated prompt tokens; the oldest memory turns are trimmed above it (0: never; env " + chat.EnvTokenBudget + ")", Value: 24000},
		&cli.IntFlag{Name: "max-output-tokens", Destination: &o.maxOutput, Usage: "token limit of each completion (max_tokens, or max_completion_tokens where an endpoint refuses max_tokens)", Value: 3000},
		&cli.Float64Flag{Name: "price-input", Destination: &o.priceIn, Usage: "USD per million prompt tokens, for the cost metric", Value: 0},
		&cli.Float64Flag{Name: "price-output", Destination: &o.priceOut, Usage: "USD per million completion tokens, for the cost metric", Value: 0},
		&cli.IntFlag{Name: "resize-long-side", Destination: &o.resize, Usage: "longest side of the image sent to the model in pixels (0: the screenshot as it is)", Value: 1280},
		&cli.StringFlag{Name: "calibration-cache", Destination: &o.cache, Usage: "directory of cached coordinate and endpoint profiles (env " + envPlannerCache + "; default: the user cache dir)"},
		&cli.BoolFlag{Name: "no-calibration-cache", Destination: &o.noCache, Usage: "neither read nor write cached coordinate and endpoint profiles"},
		&cli.BoolFlag{Name: "recalibrate", Destination: &o.recalibrate, Usage: "negotiate again even when a cached profile exists"},
		// How the endpoint is spoken to. Each has an environment variable
		// of a fixed name; a flag on the command line wins.
		&cli.BoolFlag{Name: "model-stream", Destination: &o.stream, Usage: "ask for a streamed answer (server-sent events, assembled into one; env " + chat.EnvModelStream + "=1)"},
		&cli.StringFlag{Name: "model-api-style", Destination: &o.apiStyle, Usage: "openai (Authorization: Bearer, <base>/chat/completions) or azure (api-key header, the base URL's path kept, api-version added; env " + chat.EnvModelAPIStyle + ")", Value: chat.APIStyleOpenAI},
		&cli.StringFlag{Name: "model-api-version", Destination: &o.apiVersion, Usage: "azure: the api-version query parameter, e.g. 2024-10-21 (env " + chat.EnvModelAPIVersion + ")"},
		&cli.StringFlag{Name: "model-image-format", Destination: &o.imageFormat, Usage: "screenshot encoding sent to the model: jpeg or png (env " + chat.EnvModelImageFormat + ")", Value: chat.ImageJPEG},
		&cli.IntFlag{Name: "model-image-quality", Destination: &o.imageQuality, Usage: "JPEG quality 1..100 (env " + chat.EnvModelImageQuality + ")", Value: chat.DefaultImageQuality},
	}
}

// Setup resolves the model flags (a flag given on the command line wins,
// its environment variable fills what it left unset) and builds the
// planner's model setup.
func (o *ModelOptions) Setup(g *Globals) (*agentloop.ModelSetup, error) {
	getenv := g.Env.Getenv
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.Thinking = o.baseURL, o.model, o.thinking
	mc.Retries, mc.InputTokenBudget, mc.MaxOutputTokens = o.retries, o.budget, o.maxOutput
	mc.InputPricePerMTok, mc.OutputPricePerMTok = o.priceIn, o.priceOut
	var err error
	if mc.Timeout, err = ParseSeconds("model-timeout", o.timeout, positive); err != nil {
		return nil, err
	}
	if o.keyFile != "" {
		// The file name is the user's; its content is never echoed.
		b, err := artifacts.Input{What: "--model-api-key-file", Code: fault.CodeModelConfigInvalid, Max: maxKeyFile}.Read(o.keyFile)
		if err != nil {
			return nil, err
		}
		mc.APIKey = redact.NewSecret(strings.TrimSpace(string(b)))
	}
	fromEnv := mc
	if err := fromEnv.ApplyEnv(getenv); err != nil {
		return nil, fault.Usage(fault.CodeModelConfigInvalid, err.Error())
	}
	mc.BaseURL, mc.Model, mc.APIKey = fromEnv.BaseURL, fromEnv.Model, fromEnv.APIKey
	if !g.Changed("thinking") {
		mc.Thinking = fromEnv.Thinking
	}
	if !g.Changed("model-timeout") {
		mc.Timeout = fromEnv.Timeout
	}
	if !g.Changed("input-token-budget") {
		mc.InputTokenBudget = fromEnv.InputTokenBudget
	}
	// The provider style: a flag on the command line, else its variable,
	// else the default.
	style := chat.DefaultConfig()
	if err := style.ApplyEnv(getenv); err != nil {
		return nil, fault.Usage(fault.CodeModelConfigInvalid, err.Error())
	}
	mc.Stream, mc.APIStyle, mc.APIVersion, mc.Image = style.Stream, style.APIStyle, style.APIVersion, style.Image
	if g.Changed("model-stream") {
		mc.Stream = o.stream
	}
	if g.Changed("model-api-style") {
		mc.APIStyle = o.apiStyle
	}
	if g.Changed("model-api-version") {
		mc.APIVersion = o.apiVersion
	}
	if g.Changed("model-image-format") {
		mc.Image.Format = strings.ToLower(o.imageFormat)
	}
	if g.Changed("model-image-quality") {
		mc.Image.Quality = o.imageQuality
	}
	so := agentloop.SetupOptions{Config: mc, ResizeLongSide: o.resize, CacheDir: o.cache, NoCache: o.noCache, Recalibrate: o.recalibrate}
	if so.CacheDir == "" {
		so.CacheDir = getenv(envPlannerCache)
	}
	return agentloop.NewModelSetup(so)
}

// CoordinateSpace is the coordinate space: --coordinate-space (its value
// v) when given, else SOLOPI_MODEL_COORDINATE_SPACE, else v (the flag's
// default). An explicit space overrides a cached profile.
func CoordinateSpace(g *Globals, v string) (coord.Space, error) {
	if !g.Changed("coordinate-space") {
		if ev := g.Env.Getenv(chat.EnvCoordinateSpace); ev != "" {
			v = ev
		}
	}
	s, err := coord.ParseSpace(v)
	if err != nil {
		return "", fault.Usage(fault.CodeInvalidOption, err.Error())
	}
	return s, nil
}
