package fakemodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	xdraw "golang.org/x/image/draw"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// Providers: the wire behaviours of real endpoints.
const (
	// ProviderOpenAI answers JSON or, when asked, server-sent events.
	ProviderOpenAI = "openai"
	// ProviderStreamOnly refuses stream:false.
	ProviderStreamOnly = "stream-only"
	// ProviderParts answers message content as an array of text parts.
	ProviderParts = "parts"
	// ProviderAzure serves /openai/deployments/<name>/chat/completions,
	// needs the api-version query parameter and the key in an api-key
	// header (a bearer token alone is refused).
	ProviderAzure = "azure"
	// ProviderNoTemperature refuses a request carrying temperature.
	ProviderNoTemperature = "no-temperature"
	// ProviderNoMaxTokens refuses max_tokens and takes
	// max_completion_tokens, like OpenAI's reasoning models.
	ProviderNoMaxTokens = "no-max-tokens"
	// ProviderTextOnly refuses any image: a model without vision.
	ProviderTextOnly = "text-only"
)

// Providers lists every provider behaviour.
func Providers() []string {
	return []string{ProviderOpenAI, ProviderStreamOnly, ProviderParts, ProviderAzure, ProviderNoTemperature, ProviderNoMaxTokens, ProviderTextOnly}
}

func validProvider(p string) bool { return slices.Contains(Providers(), p) }

// AzureDeployment is the deployment name in the Azure-style URL, and
// AzureAPIVersion an api-version the fake accepts (any YYYY-MM-DD, with an
// optional -preview, is accepted).
const (
	azureDeployment = "fake-vision"
	AzureAPIVersion = "2024-10-21"
)

var azurePath = lazyregexp.New(`^/openai/deployments/[A-Za-z0-9._-]+/chat/completions$`)
var azureVersion = lazyregexp.New(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

type wireMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

type msg struct {
	role   string
	text   string
	image  *image.RGBA
	format string
}

// requestBody is what the fake reads of a request.
type requestBody struct {
	Messages      []wireMsg `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
}

// apiError is an OpenAI-style error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

// Handler is the HTTP handler (usable with httptest too).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// refuse answers an error object and records the refused request.
func (s *Server) refuse(w http.ResponseWriter, rec Request, status int, reason string, e apiError) {
	rec.Status, rec.Refused = status, reason
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
	s.record(rec)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	azure := s.opts.Provider == ProviderAzure
	route := strings.HasSuffix(r.URL.Path, "/chat/completions")
	if azure {
		route = azurePath.MatchString(r.URL.Path)
	}
	if r.Method != http.MethodPost || !route {
		s.refuse(w, Request{}, http.StatusNotFound, "route", apiError{Message: "Resource not found", Code: "404"})
		return
	}
	if azure && !azureVersion.MatchString(r.URL.Query().Get("api-version")) {
		// Azure answers a missing or unknown api-version like a wrong path.
		s.refuse(w, Request{}, http.StatusNotFound, "api_version", apiError{Message: "Resource not found: the api-version query parameter is missing or unsupported", Code: "404"})
		return
	}
	if !s.authorized(r) {
		s.refuse(w, Request{}, http.StatusUnauthorized, "auth", apiError{Message: "Access denied due to invalid subscription key or wrong API endpoint.", Type: "invalid_request_error", Code: "401"})
		return
	}
	rec := Request{Authorized: true, Status: http.StatusOK}
	var body requestBody
	if err := canonjson.Read(r.Body, 64<<20, &body); err != nil {
		s.refuse(w, rec, http.StatusBadRequest, "json", apiError{Message: "the request body is not valid JSON"})
		return
	}
	rec.Stream = body.Stream
	msgs, err := decodeMessages(body.Messages)
	if err != nil {
		s.refuse(w, rec, http.StatusBadRequest, "messages", apiError{Message: err.Error(), Param: "messages"})
		return
	}
	for _, m := range msgs {
		if m.image != nil {
			rec.Images++
			rec.ImageFormat = m.format
		}
		if m.role == "user" && strings.Contains(m.text, markRetry) {
			rec.Retry = true
		}
	}
	if reason, e := s.providerRefusal(body, rec.Images); reason != "" {
		s.refuse(w, rec, http.StatusBadRequest, reason, e)
		return
	}
	delay := s.opts.Delay
	if s.opts.PlanDelay > 0 && kindOf(msgs) == "plan" {
		delay += s.opts.PlanDelay
	}
	if clock.System.Sleep(r.Context(), delay) != nil {
		return
	}
	kind, answer, reasoning := s.answer(msgs)
	rec.Kind, rec.Answer = kind, answer
	usage := usageOf(msgs, answer)
	if body.Stream {
		s.writeStream(w, answer, reasoning, body.StreamOptions != nil && body.StreamOptions.IncludeUsage, usage)
	} else {
		s.writeJSON(w, answer, reasoning, usage)
	}
	s.record(rec)
}

// authorized checks the credential the provider expects.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Provider == ProviderAzure {
		k := r.Header.Get("api-key")
		return k != "" && (s.opts.APIKey == "" || k == s.opts.APIKey)
	}
	return s.opts.APIKey == "" || r.Header.Get("Authorization") == "Bearer "+s.opts.APIKey
}

// providerRefusal is the 400 a provider answers to a request it does not
// accept, worded as the real ones are ("" when it accepts it).
func (s *Server) providerRefusal(b requestBody, images int) (string, apiError) {
	switch s.opts.Provider {
	case ProviderStreamOnly:
		if !b.Stream {
			return "stream", apiError{Message: `this endpoint only streams responses; send "stream": true`, Type: "invalid_request_error", Param: "stream"}
		}
	case ProviderNoTemperature:
		if b.Temperature != nil {
			return "temperature", apiError{Message: "Unsupported parameter: 'temperature' is not supported with this model.", Type: "invalid_request_error",
				Param: "temperature", Code: "unsupported_parameter"}
		}
	case ProviderNoMaxTokens:
		if b.MaxTokens != nil {
			return "max_tokens", apiError{Message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
				Type: "invalid_request_error", Param: "max_tokens", Code: "unsupported_parameter"}
		}
	case ProviderTextOnly:
		if images > 0 {
			return "image", apiError{Message: "This model does not support image input (image_url content parts).", Type: "invalid_request_error", Param: "messages"}
		}
	}
	return "", apiError{}
}

func decodeMessages(in []wireMsg) ([]msg, error) {
	var out []msg
	for _, m := range in {
		var text string
		if err := json.Unmarshal(m.Content, &text); err == nil {
			out = append(out, msg{role: m.Role, text: text})
			continue
		}
		var parts []part
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return nil, errors.New("content is neither a string nor parts")
		}
		mm := msg{role: m.Role}
		for _, p := range parts {
			switch p.Type {
			case "text":
				mm.text += p.Text
			case "image_url":
				img, format, err := screens.decode(p.ImageURL.URL)
				if err != nil {
					return nil, err
				}
				mm.image, mm.format = img, format
			}
		}
		out = append(out, mm)
	}
	return out, nil
}

// decodeDataURL decodes a PNG or JPEG data URL; the declared media type
// must match the bytes.
func decodeDataURL(u string) (*image.RGBA, string, error) {
	mime, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ";base64,")
	if !ok || !strings.HasPrefix(u, "data:") {
		return nil, "", errors.New("image is not a base64 data URL")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, "", errors.New("image data URL is not base64")
	}
	var img image.Image
	switch mime {
	case "image/png":
		img, err = png.Decode(bytes.NewReader(b))
	case "image/jpeg", "image/jpg":
		img, err = jpeg.Decode(bytes.NewReader(b))
	default:
		return nil, "", fmt.Errorf("image media type %q is not image/png or image/jpeg", mime)
	}
	if err != nil {
		return nil, "", fmt.Errorf("image is not a decodable %s", mime)
	}
	dst := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	xdraw.Draw(dst, dst.Rect, img, img.Bounds().Min, xdraw.Src)
	return dst, strings.TrimPrefix(strings.Replace(mime, "jpg", "jpeg", 1), "image/"), nil
}

type usage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

func usageOf(msgs []msg, answer string) usage {
	prompt := 0
	for _, m := range msgs {
		prompt += len(m.text)/4 + 4
		if m.image != nil {
			prompt += 1000
		}
	}
	c := len(answer)/4 + 1
	return usage{prompt, c, prompt + c}
}

// content is the answer as the provider spells it: a string, or for
// ProviderParts two text parts.
func (s *Server) content(answer string) any {
	if s.opts.Provider != ProviderParts {
		return answer
	}
	cut := len(answer) / 2
	for cut > 0 && !utf8.RuneStart(answer[cut]) {
		cut--
	}
	return []map[string]string{{"type": "text", "text": answer[:cut]}, {"type": "text", "text": answer[cut:]}}
}

// nextID names an answer after the number of the request it answers.
func (s *Server) nextID() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.reqs) + 1
	return "fake-" + strconv.Itoa(n), n
}

func (s *Server) writeJSON(w http.ResponseWriter, answer, reasoning string, u usage) {
	id, _ := s.nextID()
	resp := map[string]any{
		"id": id, "object": "chat.completion", "model": "fake-vision",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": s.content(answer), "reasoning_content": reasoning}}},
		"usage": u,
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// writeStream answers with server-sent events: a role chunk, the
// reasoning and the answer in small deltas (split inside words, as real
// tokenizers do), the finish reason, usage when asked, then [DONE].
func (s *Server) writeStream(w http.ResponseWriter, answer, reasoning string, withUsage bool, u usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	id, n := s.nextID()
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "model": "fake-vision",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	_, _ = fmt.Fprint(w, ": fake-vision stream\n\n")
	send(chunk(map[string]any{"role": "assistant"}, nil))
	// Reasoning alternates between the two field names in use.
	field := "reasoning_content"
	if n%2 == 0 {
		field = "reasoning"
	}
	for _, p := range pieces(reasoning, 12) {
		send(chunk(map[string]any{field: p}, nil))
	}
	for _, p := range pieces(answer, 9) {
		send(chunk(map[string]any{"content": s.content(p)}, nil))
	}
	send(chunk(map[string]any{}, "stop"))
	if withUsage {
		send(map[string]any{"id": id, "object": "chat.completion.chunk", "model": "fake-vision", "choices": []any{}, "usage": u})
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

// pieces splits s into chunks of about n bytes on rune boundaries.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		cut := min(n, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
