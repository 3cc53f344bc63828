package agentloop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Environment variables of the model configuration.
const (
	EnvModelBaseURL  = "SOLOPI_MODEL_BASE_URL"
	EnvModel         = "SOLOPI_MODEL"
	EnvModelAPIKey   = "SOLOPI_MODEL_API_KEY"
	EnvModelThinking = "SOLOPI_MODEL_THINKING"
	EnvModelTimeout  = "SOLOPI_MODEL_TIMEOUT"
	EnvTokenBudget   = "SOLOPI_MODEL_INPUT_TOKEN_BUDGET"
)

// Model error codes (all exit 4 except the timeout).
const (
	CodeModelConfig    = "model_config_invalid"
	CodeModelRequest   = "model_request_failed"
	CodeModelStatus    = "model_http_error"
	CodeModelResponse  = "model_response_invalid"
	CodeModelTimeout   = "model_timeout"
	CodeModelAuth      = "model_auth_failed"
	CodeModelNoContent = "model_empty_choice"
)

// Thinking modes. Auto sends nothing and lets the endpoint decide.
const (
	ThinkingAuto     = "auto"
	ThinkingEnabled  = "enabled"
	ThinkingDisabled = "disabled"
)

// Secret holds the API key. Every formatting and encoding path prints
// "[redacted]", so the key cannot slip into a log line, an event, an error
// or a JSON file; Reveal is called in exactly one place, the Authorization
// header.
type Secret struct{ v string }

// NewSecret wraps a key.
func NewSecret(s string) Secret { return Secret{v: s} }

// Reveal returns the key text.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether no key is set.
func (s Secret) IsZero() bool { return s.v == "" }

func (s Secret) String() string               { return "[redacted]" }
func (s Secret) GoString() string             { return "[redacted]" }
func (s Secret) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte("[redacted]")) }
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }
func (s Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }
func (s Secret) redact(text string) string {
	if len(s.v) < 4 {
		return text
	}
	return strings.ReplaceAll(text, s.v, "[redacted]")
}

// ModelConfig configures the chat-completions client.
type ModelConfig struct {
	BaseURL  string
	Model    string
	APIKey   Secret
	Thinking string
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
}

// DefaultModelConfig holds the defaults before flags and environment.
func DefaultModelConfig() ModelConfig {
	return ModelConfig{Thinking: ThinkingAuto, Timeout: 120 * time.Second, Retries: 2, MaxOutputTokens: 3000, InputTokenBudget: 24000}
}

// ApplyEnv fills unset fields from the environment.
func (c *ModelConfig) ApplyEnv(getenv func(string) string) error {
	if c.BaseURL == "" {
		c.BaseURL = getenv(EnvModelBaseURL)
	}
	if c.Model == "" {
		c.Model = getenv(EnvModel)
	}
	if c.APIKey.IsZero() {
		c.APIKey = NewSecret(getenv(EnvModelAPIKey))
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
	return nil
}

// Validate checks the configuration; errors never contain the key.
func (c ModelConfig) Validate() error {
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
	if c.Model == "" {
		return fmt.Errorf("no model name: set --model or %s", EnvModel)
	}
	switch c.Thinking {
	case "", ThinkingAuto, ThinkingEnabled, ThinkingDisabled:
	default:
		return fmt.Errorf("thinking mode must be auto, enabled or disabled")
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
func (c ModelConfig) Endpoint() string {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimRight(u.String(), "/")
}

// ChatMessage is one message. At most one message of a request carries an
// image: the current screenshot.
type ChatMessage struct {
	Role     string
	Text     string
	ImagePNG []byte
}

// ChatRequest is one completion request; Purpose labels it in metrics
// (plan, protocol_retry, calibration, completion_review, risk_review).
type ChatRequest struct {
	Purpose  string
	Messages []ChatMessage
}

// Usage is the token accounting of one response.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// ChatResponse is the first choice of a completion.
type ChatResponse struct {
	Content      string
	Reasoning    string
	FinishReason string
	Model        string
	Usage        Usage
	Latency      time.Duration
}

// Model is the chat-completions client the runtime uses; tests may supply
// another implementation.
type Model interface {
	Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error)
}

// ModelError is a failed model call.
type ModelError struct {
	Code    string
	Message string
	Status  int
	Err     error
}

func (e *ModelError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *ModelError) Unwrap() error { return e.Err }

// HTTPModel is the OpenAI-compatible chat-completions client on
// go-retryablehttp: one client per run, the image as a data URL.
type HTTPModel struct {
	cfg    ModelConfig
	client *retryablehttp.Client
	url    string
}

// NewHTTPModel builds the client.
func NewHTTPModel(cfg ModelConfig) (*HTTPModel, error) {
	if cfg.Thinking == "" {
		cfg.Thinking = ThinkingAuto
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rc := retryablehttp.NewClient()
	rc.RetryMax = cfg.Retries
	rc.RetryWaitMin = 500 * time.Millisecond
	rc.RetryWaitMax = 8 * time.Second
	// The default logger prints every request line; nothing about model
	// traffic goes to stderr unasked.
	rc.Logger = nil
	rc.HTTPClient.Timeout = cfg.Timeout
	// Failed attempts are reported by status, never by echoing the
	// response (which some gateways fill with the request headers).
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	return &HTTPModel{cfg: cfg, client: rc, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"}, nil
}

// Config returns the configuration (the key stays wrapped).
func (m *HTTPModel) Config() ModelConfig { return m.cfg }

type wireContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// buildBody renders the request JSON. The image part comes before the text
// part of its message, as the AutoGLM family was trained.
func (m *HTTPModel) buildBody(req ChatRequest) ([]byte, error) {
	msgs := make([]wireMessage, 0, len(req.Messages))
	for _, msg := range req.Messages {
		if msg.ImagePNG == nil {
			msgs = append(msgs, wireMessage{Role: msg.Role, Content: msg.Text})
			continue
		}
		img := wireContent{Type: "image_url", ImageURL: &struct {
			URL string `json:"url"`
		}{URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(msg.ImagePNG)}}
		msgs = append(msgs, wireMessage{Role: msg.Role, Content: []wireContent{img, {Type: "text", Text: msg.Text}}})
	}
	body := map[string]any{
		"model":       m.cfg.Model,
		"messages":    msgs,
		"temperature": m.cfg.Temperature,
		"stream":      false,
	}
	if m.cfg.MaxOutputTokens > 0 {
		body["max_tokens"] = m.cfg.MaxOutputTokens
	}
	// Providers spell the thinking switch differently; both common forms
	// are sent only when the user chose a mode.
	switch m.cfg.Thinking {
	case ThinkingEnabled, ThinkingDisabled:
		body["thinking"] = map[string]string{"type": m.cfg.Thinking}
		body["chat_template_kwargs"] = map[string]bool{"enable_thinking": m.cfg.Thinking == ThinkingEnabled}
	}
	return json.Marshal(body)
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Chat sends one completion request.
func (m *HTTPModel) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	body, err := m.buildBody(req)
	if err != nil {
		return nil, &ModelError{Code: CodeModelRequest, Message: "cannot encode the request", Err: err}
	}
	hr, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return nil, &ModelError{Code: CodeModelRequest, Message: "cannot build the request", Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if !m.cfg.APIKey.IsZero() {
		hr.Header.Set("Authorization", "Bearer "+m.cfg.APIKey.Reveal())
	}
	start := time.Now()
	resp, err := m.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		code := CodeModelRequest
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			code = CodeModelTimeout
		}
		// The URL is ours and carries no key; the error text is redacted
		// anyway in case a proxy echoed something back.
		return nil, &ModelError{Code: code, Message: m.cfg.APIKey.redact(fmt.Sprintf("POST %s failed", m.cfg.Endpoint()+"/chat/completions")), Err: errors.New(m.cfg.APIKey.redact(err.Error()))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, &ModelError{Code: CodeModelRequest, Message: "cannot read the response", Err: err}
	}
	latency := time.Since(start)
	if resp.StatusCode/100 != 2 {
		code := CodeModelStatus
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			code = CodeModelAuth
		}
		msg := fmt.Sprintf("the model endpoint answered HTTP %d", resp.StatusCode)
		var w wireResponse
		if json.Unmarshal(data, &w) == nil && w.Error != nil && w.Error.Message != "" {
			msg += ": " + truncateRunes(m.cfg.APIKey.redact(w.Error.Message), 300)
		}
		return nil, &ModelError{Code: code, Message: msg, Status: resp.StatusCode}
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &ModelError{Code: CodeModelResponse, Message: "the model endpoint sent malformed JSON", Err: err}
	}
	if len(w.Choices) == 0 {
		return nil, &ModelError{Code: CodeModelNoContent, Message: "the model endpoint sent no choice"}
	}
	ch := w.Choices[0]
	out := &ChatResponse{FinishReason: ch.FinishReason, Model: w.Model, Latency: latency}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	out.Reasoning = ch.Message.ReasoningContent
	if out.Reasoning == "" {
		out.Reasoning = ch.Message.Reasoning
	}
	if w.Usage != nil {
		out.Usage = Usage{PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens, TotalTokens: w.Usage.TotalTokens}
	} else {
		// Some servers omit usage; estimate so budgets and costs still
		// move (marked estimated in the metrics event by a zero total).
		out.Usage = Usage{PromptTokens: estimateRequestTokens(req), CompletionTokens: estimateTextTokens(out.Content + out.Reasoning)}
	}
	out.Usage.CostUSD = float64(out.Usage.PromptTokens)*m.cfg.InputPricePerMTok/1e6 + float64(out.Usage.CompletionTokens)*m.cfg.OutputPricePerMTok/1e6
	return out, nil
}

// imageTokenEstimate is a coarse per-image prompt cost (a 590×1280 image
// is about 1000 vision tokens at 28-pixel patches).
const imageTokenEstimate = 1000

// estimateTextTokens is a conservative token estimate: CJK text runs about
// one token per rune, Latin text about four bytes per token.
func estimateTextTokens(s string) int {
	n := 0
	ascii := 0
	for _, r := range s {
		if r < 0x80 {
			ascii++
		} else {
			n++
		}
	}
	return n + (ascii+3)/4
}

func estimateRequestTokens(req ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += 4 + estimateTextTokens(m.Text)
		if m.ImagePNG != nil {
			n += imageTokenEstimate
		}
	}
	return n
}
