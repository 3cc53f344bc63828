package chat

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chatapi"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/redact"
)

// Environment variables of the model configuration. Their names are part
// of the interface: scripts set them.
const (
	EnvModelBaseURL      = "SOLOPI_MODEL_BASE_URL"
	EnvModel             = "SOLOPI_MODEL"
	EnvModelAPIKey       = "SOLOPI_MODEL_API_KEY"
	EnvModelThinking     = "SOLOPI_MODEL_THINKING"
	EnvModelTimeout      = "SOLOPI_MODEL_TIMEOUT"
	EnvTokenBudget       = "SOLOPI_MODEL_INPUT_TOKEN_BUDGET"
	EnvModelStream       = "SOLOPI_MODEL_STREAM"
	EnvModelAPIStyle     = "SOLOPI_MODEL_API_STYLE"
	EnvModelAPIVersion   = "SOLOPI_MODEL_API_VERSION"
	EnvModelImageFormat  = "SOLOPI_MODEL_IMAGE_FORMAT"
	EnvModelImageQuality = "SOLOPI_MODEL_IMAGE_QUALITY"
	// EnvCoordinateSpace sets the coordinate space like --coordinate-space;
	// an explicit space overrides a cached profile.
	EnvCoordinateSpace = "SOLOPI_MODEL_COORDINATE_SPACE"
)

// Thinking modes. Auto sends nothing and lets the endpoint decide.
const (
	ThinkingAuto     = "auto"
	ThinkingEnabled  = "enabled"
	thinkingDisabled = "disabled"
)

// API styles (see package chatapi).
const (
	APIStyleOpenAI = chatapi.StyleOpenAI
	APIStyleAzure  = chatapi.StyleAzure
)

// Config configures the chat-completions client.
type Config struct {
	BaseURL  string
	Model    string
	APIKey   redact.Secret
	Thinking string
	// APIStyle is openai (bearer token, <base>/chat/completions) or azure
	// (api-key header, the base URL's path kept, APIVersion added as the
	// api-version query parameter).
	APIStyle   string
	APIVersion string
	// Stream asks for server-sent events (stream:true), assembled into one
	// answer; some endpoints only stream.
	Stream bool
	// Image is how screenshots are encoded for the model.
	Image ImageEncoding
	// Timeout bounds one HTTP attempt; Retries is the number of extra
	// attempts on connection errors, 429 and 5xx.
	Timeout time.Duration
	Retries int
	// InputTokenBudget bounds the estimated prompt size; the planner trims
	// the oldest memory turns to stay under it (0: no trimming).
	InputTokenBudget int
	MaxOutputTokens  int
	Temperature      float64
	// Prices in USD per million tokens, for the cost metric (0: unknown).
	InputPricePerMTok  float64
	OutputPricePerMTok float64
	// Clock times requests (nil: the system clock).
	Clock clock.Clock
}

// DefaultConfig holds the defaults before flags and environment.
func DefaultConfig() Config {
	return Config{Thinking: ThinkingAuto, APIStyle: APIStyleOpenAI, Image: DefaultImageEncoding(),
		Timeout: 120 * time.Second, Retries: 2, MaxOutputTokens: 3000, InputTokenBudget: 24000}
}

// ApplyEnv fills the configuration from the environment: unset strings
// and the key only; the stream switch, the API style and version, the
// image encoding, the timeout and the token budget whenever their
// variable is set.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	if c.BaseURL == "" {
		c.BaseURL = getenv(EnvModelBaseURL)
	}
	if c.Model == "" {
		c.Model = getenv(EnvModel)
	}
	if c.APIKey.IsZero() {
		c.APIKey = redact.NewSecret(getenv(EnvModelAPIKey))
	}
	if v := getenv(EnvModelThinking); v != "" && (c.Thinking == "" || c.Thinking == ThinkingAuto) {
		c.Thinking = v
	}
	if v := getenv(EnvModelTimeout); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) {
			return fmt.Errorf("%s must be a positive number of seconds", EnvModelTimeout)
		}
		c.Timeout = time.Duration(f * float64(time.Second))
	}
	if v := getenv(EnvTokenBudget); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be a non-negative integer", EnvTokenBudget)
		}
		c.InputTokenBudget = n
	}
	if v := getenv(EnvModelStream); v != "" {
		b, err := parseSwitch(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvModelStream, err)
		}
		c.Stream = b
	}
	if v := getenv(EnvModelAPIStyle); v != "" {
		c.APIStyle = v
	}
	if v := getenv(EnvModelAPIVersion); v != "" {
		c.APIVersion = v
	}
	if v := getenv(EnvModelImageFormat); v != "" {
		c.Image.Format = strings.ToLower(v)
	}
	if v := getenv(EnvModelImageQuality); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s must be an integer between 1 and 100", EnvModelImageQuality)
		}
		c.Image.Quality = n
	}
	return nil
}

// parseSwitch reads an on/off environment value.
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not 1/0, true/false, yes/no or on/off", v)
}

// Validate checks the configuration; errors never contain the key.
func (c Config) Validate() error {
	if c.BaseURL == "" {
		return fmt.Errorf("no model endpoint: set --model-base-url or %s", EnvModelBaseURL)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--model-base-url must be an http(s) URL")
	}
	if u.User != nil {
		return fmt.Errorf("--model-base-url must not carry credentials; use %s", EnvModelAPIKey)
	}
	if q := u.Query(); q.Has("api-key") || q.Has("key") || q.Has("api_key") {
		return fmt.Errorf("--model-base-url must not carry the key in its query; use %s", EnvModelAPIKey)
	}
	if c.Model == "" {
		return fmt.Errorf("no model name: set --model or %s", EnvModel)
	}
	switch c.Thinking {
	case "", ThinkingAuto, ThinkingEnabled, thinkingDisabled:
	default:
		return fmt.Errorf("thinking mode must be auto, enabled or disabled")
	}
	switch c.APIStyle {
	case "", APIStyleOpenAI:
	case APIStyleAzure:
		if c.APIVersion == "" && u.Query().Get("api-version") == "" {
			return fmt.Errorf("the azure API style needs an API version: set --model-api-version or %s (e.g. 2024-10-21)", EnvModelAPIVersion)
		}
		if c.APIKey.IsZero() {
			return fmt.Errorf("the azure API style needs a key: set %s or --model-api-key-file", EnvModelAPIKey)
		}
	default:
		return fmt.Errorf("the model API style must be openai or azure, not %q", c.APIStyle)
	}
	if err := c.Image.Validate(); err != nil {
		return err
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("the model timeout must be positive")
	}
	if c.Retries < 0 || c.Retries > 10 {
		return fmt.Errorf("model retries must be between 0 and 10")
	}
	if c.InputTokenBudget < 0 || c.MaxOutputTokens < 0 {
		return fmt.Errorf("token limits must not be negative")
	}
	return nil
}

// Endpoint is the base URL without query, fragment or credentials: the
// form used in cache keys, events and trajectories.
func (c Config) Endpoint() string {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimRight(u.String(), "/")
}

// Info describes the model side of a run (never the key).
type Info struct {
	Endpoint string         `json:"endpoint"`
	Model    string         `json:"model"`
	Thinking string         `json:"thinking"`
	APIStyle string         `json:"api_style,omitempty"`
	Stream   bool           `json:"stream,omitempty"`
	Image    *ImageEncoding `json:"image,omitempty"`
}

// Info is the configuration as the runs record it.
func (c Config) Info() Info {
	img := c.Image
	return Info{Endpoint: c.Endpoint(), Model: c.Model, Thinking: c.Thinking, APIStyle: c.APIStyle, Stream: c.Stream, Image: &img}
}
