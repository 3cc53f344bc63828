package chat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/redact"
)

// testAPIKey must never appear in any output, error or file.
const testAPIKey = "sk-test-SECRET-6f1c0b9e2d7a4c35"

func TestHTTPModelRequestShape(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var auth string
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first attempt fails with 503: the client retries.
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","choices":[{"finish_reason":"stop","message":{"content":"do(action=\"Back\")","reasoning_content":"think"}}],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}}`)
	}))
	defer srv.Close()
	mc := DefaultConfig()
	mc.BaseURL, mc.Model, mc.APIKey, mc.Thinking = srv.URL+"/v1/", "m", redact.NewSecret(testAPIKey), thinkingDisabled
	mc.InputPricePerMTok, mc.OutputPricePerMTok = 2, 10
	// The pause before the retry is taken on the run's clock, not on
	// retryablehttp's wall-clock timer.
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mc.Clock = clk
	m, err := NewClient(mc)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp *Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := m.Chat(context.Background(), Request{Purpose: "plan", Messages: []Message{
			{Role: "system", Text: "sys"}, {Role: "user", Text: "look", Image: &Image{Data: []byte("\x89PNG"), Format: ImagePNG}},
		}})
		done <- result{resp, err}
	}()
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond) // the first pause, jitter included
	r := <-done
	resp, err := r.resp, r.err
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `do(action="Back")` || resp.Reasoning != "think" || resp.Usage.PromptTokens != 1000 {
		t.Fatalf("%+v", resp)
	}
	if want := 1000*2/1e6 + 200*10/1e6; resp.Usage.CostUSD != want {
		t.Errorf("cost %v, want %v", resp.Usage.CostUSD, want)
	}
	if auth != "Bearer "+testAPIKey || calls.Load() != 2 {
		t.Errorf("auth %q calls %d", auth, calls.Load())
	}
	msgs := got["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].([]any)
	img := user[0].(map[string]any)
	if img["type"] != "image_url" || !strings.HasPrefix(img["image_url"].(map[string]any)["url"].(string), "data:image/png;base64,") {
		t.Errorf("image part %v", img)
	}
	if user[1].(map[string]any)["text"] != "look" {
		t.Errorf("text part %v", user[1])
	}
	if got["thinking"].(map[string]any)["type"] != "disabled" || got["chat_template_kwargs"].(map[string]any)["enable_thinking"] != false {
		t.Errorf("thinking switches %v %v", got["thinking"], got["chat_template_kwargs"])
	}
	if mc.Endpoint() != srv.URL+"/v1" {
		t.Errorf("endpoint %s", mc.Endpoint())
	}
}

func TestModelConfigValidation(t *testing.T) {
	t.Parallel()
	env := map[string]string{EnvModelBaseURL: "http://127.0.0.1:1/v1", EnvModel: "m", EnvModelAPIKey: "k-123456", EnvModelTimeout: "7", EnvTokenBudget: "500"}
	c := DefaultConfig()
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != env[EnvModelBaseURL] || c.APIKey.Reveal() != "k-123456" || c.Timeout != 7*time.Second || c.InputTokenBudget != 500 {
		t.Fatalf("%+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.BaseURL = "" },
		func(c *Config) { c.BaseURL = "ftp://x" },
		func(c *Config) { c.BaseURL = "http://user:" + testAPIKey + "@host/v1" },
		func(c *Config) { c.Model = "" },
		func(c *Config) { c.Thinking = "maybe" },
	} {
		x := c
		bad(&x)
		err := x.Validate()
		if err == nil {
			t.Errorf("accepted %+v", x)
		} else if strings.Contains(err.Error(), testAPIKey) {
			t.Error("a validation error shows the key")
		}
	}
}
