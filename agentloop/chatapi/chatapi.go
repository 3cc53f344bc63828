// Package chatapi is the wire format of OpenAI-compatible chat-completions
// endpoints as they are met in practice: the request URL of each API style
// (OpenAI and Azure OpenAI), answers as one JSON object or as server-sent
// events, message content as a string or as an array of parts, reasoning
// in either of the two common fields, and error bodies. Everything here
// reads outside input; the decoders are fuzzed.
package chatapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/solopi-dev/solopi/fault"
)

// API styles.
const (
	// StyleOpenAI posts to <base>/chat/completions with a bearer token.
	StyleOpenAI = "openai"
	// StyleAzure posts to <base>/chat/completions?api-version=V (the base
	// names the deployment) with the key in an api-key header.
	StyleAzure = "azure"
)

// CodeResponseInvalid is the error code of an answer that cannot be read.

// URL returns the chat-completions URL of base. The base URL's path gains
// /chat/completions and its query is kept, so a gateway's own parameters
// survive; the Azure style sets api-version (apiVersion wins over one
// already in the base URL).
func URL(base, style, apiVersion string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", errors.New("the base URL must be an http(s) URL")
	}
	u.Fragment = ""
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	if style == StyleAzure {
		q := u.Query()
		if apiVersion != "" {
			q.Set("api-version", apiVersion)
		}
		if q.Get("api-version") == "" {
			return "", errors.New("the azure API style needs an api-version")
		}
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// usage is the token accounting an endpoint reported.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Reply is the first choice of an answer, assembled.
type Reply struct {
	Content      string
	Reasoning    string
	FinishReason string
	Model        string
	// Choices is how many choices the answer had (0: none).
	Choices int
	// Usage is nil when the endpoint reported none.
	Usage *usage
}

// message is a choice's message, or a streamed delta of one.
type message struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
}

type choice struct {
	Index        int     `json:"index"`
	FinishReason *string `json:"finish_reason"`
	Message      message `json:"message"`
	Delta        message `json:"delta"`
}

// body is a whole answer or one streamed chunk.
type body struct {
	Model   string          `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

func invalid(msg string, err error) *fault.Error {
	return fault.Wrap(fault.Transport, fault.CodeModelResponseInvalid, msg, err)
}

// DecodeJSON reads a non-streaming answer.
func DecodeJSON(data []byte) (*Reply, error) {
	var b body
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, invalid("the model endpoint sent malformed JSON", err)
	}
	if e := decodeErrorField(b.Error); e != nil {
		return nil, &StreamError{API: *e}
	}
	r := &Reply{Model: b.Model, Choices: len(b.Choices), Usage: b.Usage}
	for _, c := range b.Choices {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != nil {
			r.FinishReason = *c.FinishReason
		}
		if err := r.add(c.Message); err != nil {
			return nil, err
		}
		break
	}
	return r, nil
}

// add appends a message or delta to the reply: content as a string or as
// parts, reasoning from reasoning_content or reasoning (either may be a
// string or parts too).
func (r *Reply) add(m message) error {
	text, thought, err := contentText(m.Content)
	if err != nil {
		return err
	}
	r.Content += text
	r.Reasoning += thought
	for _, raw := range []json.RawMessage{m.ReasoningContent, m.Reasoning} {
		t, th, err := contentText(raw)
		if err != nil {
			return err
		}
		r.Reasoning += t + th
	}
	return nil
}

// part is one element of an array content. Text parts carry text; thinking
// parts (as some providers send their reasoning) carry it in thinking or
// reasoning, as a string or as nested parts.
type part struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  json.RawMessage `json:"thinking"`
	Reasoning json.RawMessage `json:"reasoning"`
}

// contentText reads a content value: null, a string, or an array of parts.
// It returns the answer text and any reasoning found in thinking parts.
func contentText(raw json.RawMessage) (text, reasoning string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "", invalid("a message content string is malformed", err)
		}
		return s, "", nil
	case '[':
		var parts []part
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", "", invalid("a message content array is malformed", err)
		}
		var tb, rb strings.Builder
		for _, p := range parts {
			switch p.Type {
			case "thinking", "reasoning":
				for _, inner := range []json.RawMessage{p.Thinking, p.Reasoning} {
					t, th, err := contentText(inner)
					if err != nil {
						return "", "", err
					}
					rb.WriteString(t + th)
				}
				if p.Text != nil {
					rb.WriteString(*p.Text)
				}
			case "", "text", "output_text":
				if p.Text != nil {
					tb.WriteString(*p.Text)
				}
			}
			// Other part types (images, audio, refusals) carry no text of
			// the answer.
		}
		return tb.String(), rb.String(), nil
	}
	return "", "", invalid("a message content is neither a string nor an array of parts", nil)
}

// APIError is the error object of a refused request.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
}

// StreamError is an error the endpoint reported inside a 2xx answer (a
// streamed error event or an error object instead of choices).
type StreamError struct{ API APIError }

func (e *StreamError) Error() string { return "the model endpoint reported an error: " + e.API.Message }

// DecodeError reads an error body in the shapes endpoints use:
// {"error":{"message":...}}, {"error":"text"}, {"message":...} or
// {"detail":...}; anything else becomes its text, trimmed.
func DecodeError(data []byte) APIError {
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message *string         `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &top) == nil {
		if e := decodeErrorField(top.Error); e != nil {
			return *e
		}
		if top.Message != nil {
			return APIError{Message: *top.Message}
		}
		if len(top.Detail) > 0 {
			var s string
			if json.Unmarshal(top.Detail, &s) == nil {
				return APIError{Message: s}
			}
			return APIError{Message: string(top.Detail)}
		}
	}
	return APIError{Message: strings.TrimSpace(string(data))}
}

func decodeErrorField(raw json.RawMessage) *APIError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &APIError{Message: s}
	}
	// code and param are strings for OpenAI, numbers or null elsewhere.
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return &APIError{Message: string(raw)}
	}
	return &APIError{Message: e.Message, Type: e.Type, Param: scalar(e.Param), Code: scalar(e.Code)}
}

func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// Names reports whether the error names the request parameter p: in its
// param field, or as a whole word of its message ("max_tokens" does not
// name max_completion_tokens).
func (e APIError) Names(p string) bool {
	if e.Param == p {
		return true
	}
	msg := e.Message
	for i := 0; ; {
		j := strings.Index(msg[i:], p)
		if j < 0 {
			return false
		}
		s, end := i+j, i+j+len(p)
		if (s == 0 || !wordByte(msg[s-1])) && (end == len(msg) || !wordByte(msg[end])) {
			return true
		}
		i = s + 1
	}
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
