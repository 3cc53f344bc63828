// Package chat is the planner's model client: the OpenAI-compatible
// chat-completions Client (one per run, on go-retryablehttp with its pauses
// on the run's clock; one JSON answer or server-sent events; the OpenAI or
// the Azure request style), its configuration from flags and the
// SOLOPI_MODEL_* environment with the API key kept in a redact.Secret, how
// screenshots are encoded for the model, and the endpoint profile that
// remembers which optional request fields an endpoint refuses. The runtime
// depends only on the Model interface; package chatapi reads what providers
// send.
package chat

import (
	"context"
	"time"
)

// Message is one message. At most one message of a request carries an
// image: the current screenshot.
type Message struct {
	Role  string
	Text  string
	Image *Image
}

// Request is one completion request; Purpose labels it in metrics
// (plan, protocol_retry, calibration, completion_review, risk_review,
// preflight).
type Request struct {
	Purpose  string
	Messages []Message
}

// Usage is the token accounting of one response.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Response is the first choice of a completion.
type Response struct {
	Content      string
	Reasoning    string
	FinishReason string
	Model        string
	Usage        Usage
	Latency      time.Duration
	// Adaptations name the request fields this call dropped or replaced
	// because the endpoint refused them (learned for the next calls).
	Adaptations []string
}

// Model is the chat-completions client the runtime uses; tests may supply
// another implementation.
type Model interface {
	Chat(ctx context.Context, req Request) (*Response, error)
}

// imageEncoder is a model that chooses how its images are encoded.
type imageEncoder interface{ ImageEncoding() ImageEncoding }

// ImageEncodingOf is the model's image encoding: PNG for a model that does
// not say (an in-process test model reads pixels losslessly).
func ImageEncodingOf(m Model) ImageEncoding {
	if e, ok := m.(imageEncoder); ok {
		return e.ImageEncoding()
	}
	return ImageEncoding{Format: ImagePNG}
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

// EstimatedTokens is a coarse estimate of the request's prompt size: what
// the planner trims its memory against, and the usage of an answer that
// reports none.
func (r Request) EstimatedTokens() int {
	n := 0
	for _, m := range r.Messages {
		n += 4 + estimateTextTokens(m.Text)
		if m.Image != nil {
			n += imageTokenEstimate
		}
	}
	return n
}
