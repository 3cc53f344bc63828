package chatapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, style, version, want string }{
		{"http://h:8000/v1", StyleOpenAI, "", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1/", StyleOpenAI, "", "http://h:8000/v1/chat/completions"},
		// A gateway's own query survives, and /chat/completions goes
		// into the path, not after the query.
		{"https://gw.example/v1?tenant=qa", StyleOpenAI, "", "https://gw.example/v1/chat/completions?tenant=qa"},
		{"https://r.openai.azure.com/openai/deployments/gpt4o", StyleAzure, "2024-10-21",
			"https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-06-01", StyleAzure, "",
			"https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01"},
		{"https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-06-01", StyleAzure, "2024-10-21",
			"https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"},
	} {
		got, err := URL(tc.base, tc.style, tc.version)
		if err != nil || got != tc.want {
			t.Errorf("URL(%q, %s, %q) = %q, %v; want %q", tc.base, tc.style, tc.version, got, err, tc.want)
		}
	}
	for _, bad := range [][3]string{{"ftp://h/v1", StyleOpenAI, ""}, {"http:///v1", StyleOpenAI, ""}, {"https://r/openai/deployments/d", StyleAzure, ""}} {
		if u, err := URL(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("URL(%q, %s) = %q, want an error", bad[0], bad[1], u)
		}
	}
}

func TestDecodeJSONContentShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, content, reasoning string }{
		{"string", `{"choices":[{"index":0,"finish_reason":"stop","message":{"content":"do(action=\"Back\")","reasoning_content":"r1"}}]}`, `do(action="Back")`, "r1"},
		{"reasoning field", `{"choices":[{"message":{"content":"a","reasoning":"r2"}}]}`, "a", "r2"},
		{"null content", `{"choices":[{"message":{"content":null,"reasoning_content":"only thinking"}}]}`, "", "only thinking"},
		{"text parts", `{"choices":[{"message":{"content":[{"type":"text","text":"do(action="},{"type":"text","text":"\"Home\")"}]}}]}`, `do(action="Home")`, ""},
		{"thinking part", `{"choices":[{"message":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]},{"type":"text","text":"x"}]}}]}`, "x", "hmm"},
		{"output_text and image parts", `{"choices":[{"message":{"content":[{"type":"image_url","image_url":{"url":"data:"}},{"type":"output_text","text":"y"}]}}]}`, "y", ""},
		{"second choice ignored", `{"choices":[{"index":1,"message":{"content":"no"}},{"index":0,"message":{"content":"yes"}}]}`, "yes", ""},
	} {
		r, err := DecodeJSON([]byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Content != tc.content || r.Reasoning != tc.reasoning {
			t.Errorf("%s: content %q reasoning %q; want %q %q", tc.name, r.Content, r.Reasoning, tc.content, tc.reasoning)
		}
	}
	r, err := DecodeJSON([]byte(`{"model":"m","choices":[{"finish_reason":"length","message":{"content":"z"}}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`))
	if err != nil || r.Model != "m" || r.FinishReason != "length" || r.Usage == nil || r.Usage.TotalTokens != 7 || r.Choices != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, bad := range []string{`{`, `{"choices":[{"message":{"content":42}}]}`, `{"choices":[{"message":{"content":[1]}}]}`} {
		_, err := DecodeJSON([]byte(bad))
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CodeModelResponseInvalid {
			t.Errorf("%s: error %v, want %s", bad, err, fault.CodeModelResponseInvalid)
		}
	}
	_, err = DecodeJSON([]byte(`{"error":{"message":"quota exceeded","code":429}}`))
	var se *StreamError
	if !errors.As(err, &se) || se.API.Message != "quota exceeded" || se.API.Code != "429" {
		t.Fatalf("error object in a 2xx answer: %v", err)
	}
}

func TestReadStream(t *testing.T) {
	t.Parallel()
	chunk := func(delta string) string {
		return `data: {"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	for _, tc := range []struct{ name, stream, content, reasoning, finish string }{
		{"reasoning_content deltas",
			": keep-alive\n\n" + chunk(`{"role":"assistant"}`) + chunk(`{"reasoning_content":"look "}`) + chunk(`{"reasoning_content":"closely"}`) +
				chunk(`{"content":"do(action="}`) + chunk(`{"content":"\"Back\")"}`) +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}` + "\n\n" + "data: [DONE]\n\n",
			`do(action="Back")`, "look closely", "stop"},
		{"reasoning deltas, CRLF, no space after the colon",
			strings.ReplaceAll(chunk(`{"reasoning":"a"}`)+chunk(`{"reasoning":"b"}`)+chunk(`{"content":"c"}`), "data: ", "data:") + "data: [DONE]\r\n\r\n",
			"c", "ab", ""},
		{"parts deltas", chunk(`{"content":[{"type":"text","text":"x"}]}`) + chunk(`{"content":[{"type":"text","text":"y"}]}`) + "data: [DONE]\n\n", "xy", "", ""},
		{"last event without blank line", chunk(`{"content":"k"}`) + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "k", "", "stop"},
		{"a JSON object instead of events", `  {"choices":[{"message":{"content":"whole"},"finish_reason":"stop"}]}`, "whole", "", "stop"},
	} {
		r, err := ReadStream(strings.NewReader(tc.stream), 1<<20)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Content != tc.content || r.Reasoning != tc.reasoning || r.FinishReason != tc.finish {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	r, _ := ReadStream(strings.NewReader(chunk(`{"content":"a"}`)+`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`+"\n\ndata: [DONE]\n\n"), 1<<20)
	if r == nil || r.Usage == nil || r.Usage.CompletionTokens != 2 {
		t.Fatalf("usage chunk: %+v", r)
	}
	// Truncated: no [DONE] and no finish reason.
	if _, err := ReadStream(strings.NewReader(chunk(`{"content":"do(action="}`)), 1<<20); err == nil {
		t.Error("a truncated stream was accepted")
	}
	// Over the limit is truncated too.
	if _, err := ReadStream(strings.NewReader(chunk(`{"content":"`+strings.Repeat("x", 4000)+`"}`)+"data: [DONE]\n\n"), 1000); err == nil {
		t.Error("a stream over the limit was accepted")
	}
	// An error event mid-stream.
	_, err := ReadStream(strings.NewReader(chunk(`{"content":"a"}`)+"event: error\ndata: {\"message\":\"overloaded\"}\n\n"), 1<<20)
	var se *StreamError
	if !errors.As(err, &se) || se.API.Message != "overloaded" {
		t.Fatalf("error event: %v", err)
	}
	_, err = ReadStream(strings.NewReader(`data: {"error":{"message":"boom"}}`+"\n\n"), 1<<20)
	if !errors.As(err, &se) || se.API.Message != "boom" {
		t.Fatalf("error chunk: %v", err)
	}
	if _, err := ReadStream(strings.NewReader(""), 1<<20); err == nil {
		t.Error("an empty stream was accepted")
	}
	if _, err := ReadStream(strings.NewReader("data: {oops\n\n"), 1<<20); err == nil {
		t.Error("a malformed chunk was accepted")
	}
}

func TestDecodeErrorAndNames(t *testing.T) {
	t.Parallel()
	e := DecodeError([]byte(`{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`))
	if e.Param != "max_tokens" || e.Code != "unsupported_parameter" || !e.Names("max_tokens") {
		t.Fatalf("%+v", e)
	}
	e = DecodeError([]byte(`{"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model.","param":null,"code":null}}`))
	if !e.Names("temperature") || e.Names("max_tokens") {
		t.Fatalf("%+v", e)
	}
	// max_tokens does not name max_completion_tokens, nor the reverse.
	if (APIError{Message: "max_completion_tokens is not supported"}).Names("max_tokens") {
		t.Error("max_tokens matched inside max_completion_tokens")
	}
	if (APIError{Message: "use max_tokens"}).Names("max_completion_tokens") {
		t.Error("max_completion_tokens matched max_tokens")
	}
	for body, want := range map[string]string{
		`{"error":"model not found"}`:           "model not found",
		`{"message":"Resource not found"}`:      "Resource not found",
		`{"detail":"Not Found"}`:                "Not Found",
		`{"detail":[{"loc":["body"]}]}`:         `[{"loc":["body"]}]`,
		"<html>Bad Gateway</html>\n":            "<html>Bad Gateway</html>",
		`{"error":{"message":"x","code":4001}}`: "x",
	} {
		if got := DecodeError([]byte(body)).Message; got != want {
			t.Errorf("DecodeError(%s) = %q, want %q", body, got, want)
		}
	}
}

func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"}]},\"finish_reason\":\"stop\"}]}\n\n",
		"event: error\ndata: {\"message\":\"x\"}\n\n",
		`{"choices":[{"message":{"content":"x"}}]}`,
		": ping\r\n\r\ndata:{\"choices\":[{\"delta\":{\"reasoning\":\"r\"}}]}\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ReadStream(strings.NewReader(s), 1<<16)
		checkDecoded(t, r, err)
	})
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"x","reasoning_content":"y"}}]}`,
		`{"choices":[{"message":{"content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]}}]}`,
		`{"error":{"message":"m","param":"temperature"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := DecodeJSON([]byte(s))
		checkDecoded(t, r, err)
		e := DecodeError([]byte(s))
		_ = e.Names("max_tokens")
	})
}

// checkDecoded: a decoder either answers or returns a typed error; never
// both, never neither.
func checkDecoded(t *testing.T, r *Reply, err error) {
	t.Helper()
	if err != nil {
		var fe *fault.Error
		var se *StreamError
		if r != nil || !(errors.As(err, &fe) && fe.Code != "" || errors.As(err, &se)) {
			t.Fatalf("reply %v with error %v", r, err)
		}
		return
	}
	if r == nil {
		t.Fatal("no reply and no error")
	}
}
