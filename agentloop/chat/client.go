package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/solopi-dev/solopi/agentloop/chatapi"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/retryhttp"
	"github.com/solopi-dev/solopi/internal/textclip"
)

// maxResponseBytes bounds what is read of one answer.
const maxResponseBytes = 16 << 20

// Client is the OpenAI-compatible chat-completions client on
// go-retryablehttp: one client per run, images as data URLs, the answer
// read as one JSON object or assembled from server-sent events. The
// optional fields an endpoint refuses are dropped once and remembered.
type Client struct {
	cfg   Config
	http  *http.Client
	retry clock.Retry
	url   string
	clk   clock.Clock

	mu           sync.Mutex
	params       requestParams
	paramsSource string
	paramsAt     time.Time
	cacheFile    string
	cacheErr     error
}

// NewClient builds the client.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Thinking == "" {
		cfg.Thinking = ThinkingAuto
	}
	if cfg.APIStyle == "" {
		cfg.APIStyle = APIStyleOpenAI
	}
	if cfg.Image == (ImageEncoding{}) {
		cfg.Image = DefaultImageEncoding()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, err := chatapi.URL(cfg.BaseURL, cfg.APIStyle, cfg.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("--model-base-url: %w", err)
	}
	clk := clock.Or(cfg.Clock)
	// Connection errors, 429 and 5xx are retried (retryhttp), after 0.5 s,
	// 1 s, 2 s ... at most 8 s, or the endpoint's Retry-After. Failed
	// attempts are reported by status, never by echoing the response
	// (which some gateways fill with the request headers).
	retry := clock.Retry{Attempts: cfg.Retries + 1, Clock: clk,
		Backoff: clock.Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Jitter: 0.2}}
	return &Client{cfg: cfg, http: retryhttp.NewHTTPClient(cfg.Timeout), retry: retry, url: u, clk: clk, params: DefaultRequestParams(), paramsSource: ParamsDefault}, nil
}

// Config returns the configuration (the key stays wrapped).
func (m *Client) Config() Config { return m.cfg }

// ImageEncoding is how this endpoint is sent screenshots.
func (m *Client) ImageEncoding() ImageEncoding { return m.cfg.Image }

// InputTokenBudget is the prompt budget the planner trims memory to.
func (m *Client) InputTokenBudget() int { return m.cfg.InputTokenBudget }

func (m *Client) currentParams() requestParams {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.params
}

type wireContent struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// buildBody renders the request JSON. The image part comes before the text
// part of its message, as the AutoGLM family was trained.
func (m *Client) buildBody(req Request, p requestParams) ([]byte, error) {
	msgs := make([]wireMessage, 0, len(req.Messages))
	for _, msg := range req.Messages {
		if msg.Image == nil {
			msgs = append(msgs, wireMessage{Role: msg.Role, Content: msg.Text})
			continue
		}
		img := wireContent{Type: "image_url", ImageURL: &imageURL{URL: msg.Image.DataURL()}}
		msgs = append(msgs, wireMessage{Role: msg.Role, Content: []wireContent{img, {Type: "text", Text: msg.Text}}})
	}
	body := map[string]any{"model": m.cfg.Model, "messages": msgs, "stream": m.cfg.Stream}
	if p.Temperature {
		body["temperature"] = m.cfg.Temperature
	}
	if m.cfg.MaxOutputTokens > 0 && p.TokenField != tokenFieldNone {
		body[p.TokenField] = m.cfg.MaxOutputTokens
	}
	if m.cfg.Stream && p.StreamUsage {
		body["stream_options"] = map[string]bool{"include_usage": true}
	}
	// Providers spell the thinking switch differently; both common forms
	// are sent only when the user chose a mode.
	switch m.cfg.Thinking {
	case ThinkingEnabled, thinkingDisabled:
		body["thinking"] = map[string]string{"type": m.cfg.Thinking}
		body["chat_template_kwargs"] = map[string]bool{"enable_thinking": m.cfg.Thinking == ThinkingEnabled}
	}
	return json.Marshal(body)
}

// Chat sends one completion request. A 400 (or 422) that names an
// optional field this request sent is answered by sending the request
// once more without it (max_tokens becomes max_completion_tokens first);
// the client then keeps the changed fields for every later call.
func (m *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	start := m.clk.Now()
	params := m.currentParams()
	var adapted []string
	for {
		body, err := m.buildBody(req, params)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, fault.CodeModelRequestFailed, "cannot encode the request", err)
		}
		resp, err := m.post(ctx, body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			out, err := m.readAnswer(req, resp)
			if err != nil {
				return nil, err
			}
			out.Latency, out.Adaptations = m.clk.Now().Sub(start), adapted
			return out, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		apiErr := chatapi.DecodeError(data)
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity {
			if ref, ok := params.without(apiErr, m.cfg.Stream); ok && !slices.Contains(adapted, ref.field) {
				adapted = append(adapted, ref.field)
				params = ref.next
				m.learn(params)
				continue
			}
		}
		return nil, m.statusError(resp.StatusCode, apiErr)
	}
}

// post sends one request (with its retries on connection errors, 429 and
// 5xx). The credential header is the only place the key
// is revealed.
func (m *Client) post(ctx context.Context, body []byte) (*http.Response, error) {
	hr, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeModelRequestFailed, "cannot build the request", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if m.cfg.Stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else {
		hr.Header.Set("Accept", "application/json")
	}
	if !m.cfg.APIKey.IsZero() {
		if m.cfg.APIStyle == APIStyleAzure {
			hr.Header.Set("api-key", m.cfg.APIKey.Reveal())
		} else {
			hr.Header.Set("Authorization", "Bearer "+m.cfg.APIKey.Reveal())
		}
	}
	resp, err := retryhttp.Do(m.http, m.retry, hr)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	code, msg := fault.CodeModelUnreachable, "the model endpoint did not answer"
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		code, msg = fault.CodeModelTimeout, fmt.Sprintf("the model endpoint did not answer within %s", m.cfg.Timeout)
	}
	// The URL is ours and carries no key; the error text is redacted
	// anyway in case a proxy echoed something back.
	return nil, fault.Wrap(fault.Transport, code, m.cfg.APIKey.Redact(fmt.Sprintf("%s: POST %s", msg, m.cfg.Endpoint()+"/chat/completions")),
		errors.New(m.cfg.APIKey.Redact(err.Error()))).
		WithUserAction("Check that the model server is running and that --model-base-url (or " + EnvModelBaseURL + ") points at it.")
}

// statusError is a refused request, with the endpoint's own words
// (redacted and truncated).
func (m *Client) statusError(status int, e chatapi.APIError) *fault.Error {
	msg := fmt.Sprintf("the model endpoint answered HTTP %d", status)
	if t := strings.TrimSpace(e.Message); t != "" {
		msg += ": " + textclip.Runes(m.cfg.APIKey.Redact(t), 300)
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		header := "Authorization: Bearer"
		if m.cfg.APIStyle == APIStyleAzure {
			header = "api-key"
		}
		return fault.New(fault.Transport, fault.CodeModelAuthFailed, msg).With("httpStatus", status).
			WithUserAction("The endpoint refused the API key (sent as " + header + "). Set the right key in " + EnvModelAPIKey + " or --model-api-key-file.")
	}
	fe := fault.New(fault.Transport, fault.CodeModelHTTPError, msg).With("httpStatus", status)
	if status == http.StatusBadRequest && !m.cfg.Stream && e.Names("stream") {
		fe.WithUserAction("The endpoint only streams its answers: set " + EnvModelStream + "=1 (or --model-stream).")
	}
	return fe
}

// HTTPStatus is the HTTP status of a refused model request (0 when
// there was none).
func HTTPStatus(err error) int {
	var fe *fault.Error
	if errors.As(err, &fe) {
		if s, ok := fe.Details["httpStatus"].(int); ok {
			return s
		}
	}
	return 0
}

// readAnswer reads a 2xx answer, streamed or not.
func (m *Client) readAnswer(req Request, resp *http.Response) (*Response, error) {
	defer resp.Body.Close()
	var reply *chatapi.Reply
	var err error
	if m.cfg.Stream || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		reply, err = chatapi.ReadStream(resp.Body, maxResponseBytes)
	} else {
		var data []byte
		if data, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes)); err != nil {
			return nil, fault.Wrap(fault.Transport, fault.CodeModelResponseInvalid, "cannot read the answer", err)
		}
		reply, err = chatapi.DecodeJSON(data)
	}
	var se *chatapi.StreamError
	switch {
	case errors.As(err, &se):
		return nil, fault.New(fault.Transport, fault.CodeModelHTTPError, "the model endpoint reported an error: "+textclip.Runes(m.cfg.APIKey.Redact(se.API.Message), 300))
	case err != nil:
		var fe *fault.Error
		if errors.As(err, &fe) {
			fe.Message = m.cfg.APIKey.Redact(fe.Message)
			return nil, fe
		}
		return nil, fault.Wrap(fault.Transport, fault.CodeModelResponseInvalid, "cannot read the answer", err)
	case reply.Choices == 0:
		return nil, fault.New(fault.Transport, fault.CodeModelEmptyChoice, "the model endpoint sent no choice")
	}
	out := &Response{Content: reply.Content, Reasoning: reply.Reasoning, FinishReason: reply.FinishReason, Model: reply.Model}
	if u := reply.Usage; u != nil {
		out.Usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	} else {
		// Some servers omit usage; estimate so budgets and costs still
		// move (marked estimated in the metrics event by a zero total).
		out.Usage = Usage{PromptTokens: req.EstimatedTokens(), CompletionTokens: estimateTextTokens(out.Content + out.Reasoning)}
	}
	out.Usage.CostUSD = float64(out.Usage.PromptTokens)*m.cfg.InputPricePerMTok/1e6 + float64(out.Usage.CompletionTokens)*m.cfg.OutputPricePerMTok/1e6
	return out, nil
}
