package agentloop

import (
	"context"
	"fmt"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/internal/textclip"
)

// chat sends one model request and records it in the audit stream:
// model_request, model_response and a metrics event with the token usage
// and cost, for every purpose (calibration and reviews included).
func (s *agentState) chat(ctx context.Context, m chat.Model, req chat.Request) (*chat.Response, error) {
	images, imageBytes, format := 0, 0, ""
	for _, msg := range req.Messages {
		if msg.Image != nil {
			images++
			imageBytes += len(msg.Image.Data)
			format = msg.Image.Format
		}
	}
	s.emit(evModelRequest, "model request: "+req.Purpose, map[string]any{
		"purpose": req.Purpose, "messages": len(req.Messages), "images": images,
		"estimated_prompt_tokens": req.EstimatedTokens(),
	})
	resp, err := m.Chat(ctx, req)
	if err != nil {
		s.emit(evError, "model request failed", map[string]any{"purpose": req.Purpose, "error": err.Error()})
		return nil, fmt.Errorf("model %s request: %w", req.Purpose, err)
	}
	rp := map[string]any{
		"purpose": req.Purpose, "content": textclip.Runes(resp.Content, 4000), "reasoning_chars": len([]rune(resp.Reasoning)),
		"finish_reason": resp.FinishReason, "latency_ms": resp.Latency.Milliseconds(),
	}
	if len(resp.Adaptations) > 0 {
		// The endpoint refused these optional fields; the request was sent
		// again without them and they stay dropped.
		rp["refused_fields"] = resp.Adaptations
	}
	s.emit(EvModelResponse, "model response: "+req.Purpose, rp)
	total, stepBytes := s.addUsage(req.Purpose, resp.Usage, resp.Latency, images, imageBytes)
	mp := map[string]any{
		"purpose": req.Purpose, "prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
		"cost_usd": resp.Usage.CostUSD, "total_prompt_tokens": total.PromptTokens, "total_completion_tokens": total.CompletionTokens,
		"total_cost_usd": total.CostUSD, "total_requests": total.Requests,
		"image_bytes": imageBytes, "step_image_bytes": stepBytes, "total_image_bytes": total.ImageBytes,
	}
	if format != "" {
		mp["image_format"] = format
	}
	s.emit(evMetrics, "token usage", mp)
	return resp, nil
}
