package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// testAPIKey must never appear in any output, error or file.
const testAPIKey = "sk-test-SECRET-6f1c0b9e2d7a4c35"

// providerConfig is the client configuration that fits a fake provider.
func providerConfig(srv *fakemodel.Server) func(*chat.Config) {
	return func(mc *chat.Config) {
		mc.APIKey, mc.Retries = redact.NewSecret(testAPIKey), 0
		switch srv.Provider() {
		case fakemodel.ProviderStreamOnly:
			mc.Stream = true
		case fakemodel.ProviderAzure:
			mc.APIStyle, mc.APIVersion = chat.APIStyleAzure, fakemodel.AzureAPIVersion
		}
	}
}

func probeRequest(t *testing.T, enc chat.ImageEncoding) chat.Request {
	t.Helper()
	img, err := chat.EncodeImage(agentloop.SyntheticTarget(200, 400, [2]float64{0.3, 0.6}), enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chat.Request{Purpose: "preflight", Messages: []chat.Message{{Role: "user", Text: agentloop.HeaderPreflight + "\nWhat do you see?", Image: img}}}
}

// TestHTTPModelAgainstProviders: every provider style answers through the
// one client; refused fields are dropped once, remembered, and cached so a
// new client never sends them again.
func TestHTTPModelAgainstProviders(t *testing.T) {
	t.Parallel()
	for _, p := range []string{fakemodel.ProviderOpenAI, fakemodel.ProviderStreamOnly, fakemodel.ProviderParts, fakemodel.ProviderAzure,
		fakemodel.ProviderNoTemperature, fakemodel.ProviderNoMaxTokens} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			srv, err := fakemodel.Start(fakemodel.Options{Provider: p, APIKey: testAPIKey})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			cache := t.TempDir()
			newClient := func() *chat.Client {
				mc := chat.DefaultConfig()
				mc.BaseURL, mc.Model = srv.URL, "fake-vision"
				providerConfig(srv)(&mc)
				m, err := chat.NewClient(mc)
				if err != nil {
					t.Fatal(err)
				}
				m.UseCache(cache)
				return m
			}
			m := newClient()
			for i := 0; i < 2; i++ {
				resp, err := m.Chat(context.Background(), probeRequest(t, m.ImageEncoding()))
				if err != nil {
					t.Fatalf("chat %d: %v", i, err)
				}
				if resp.Content != "A magenta disc on a light grey card." {
					t.Fatalf("chat %d: content %q", i, resp.Content)
				}
				if resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens == 0 {
					t.Errorf("chat %d: usage %+v not reported", i, resp.Usage)
				}
				if i == 1 && len(resp.Adaptations) != 0 {
					t.Errorf("the second call adapted again: %v", resp.Adaptations)
				}
			}
			// A fresh client reads what was learned from the cache.
			m2 := newClient()
			if _, err := m2.Chat(context.Background(), probeRequest(t, m2.ImageEncoding())); err != nil {
				t.Fatal(err)
			}
			var refused []string
			for _, r := range srv.Requests() {
				if r.Refused != "" {
					refused = append(refused, r.Refused)
				}
				if r.Refused == "" && (r.ImageFormat != chat.ImageJPEG || r.Images != 1) {
					t.Errorf("request %+v: want one JPEG image", r)
				}
			}
			want := map[string]string{fakemodel.ProviderNoTemperature: "temperature", fakemodel.ProviderNoMaxTokens: "max_tokens"}[p]
			if (want == "" && len(refused) != 0) || (want != "" && (len(refused) != 1 || refused[0] != want)) {
				t.Fatalf("refused requests %v, want exactly one refusal of %q", refused, want)
			}
			prof := m2.EndpointProfile()
			entries, _ := os.ReadDir(cache)
			if want != "" {
				if prof.Source != chat.ParamsCache || len(entries) != 1 {
					t.Fatalf("profile %+v, %d cache files", prof, len(entries))
				}
				b, _ := os.ReadFile(cache + "/" + entries[0].Name())
				if strings.Contains(string(b), testAPIKey) {
					t.Fatal("the endpoint cache holds the key")
				}
			}
			switch p {
			case fakemodel.ProviderNoTemperature:
				if prof.Params.Temperature || prof.Params.TokenField != chat.TokenFieldMaxTokens {
					t.Errorf("params %+v", prof.Params)
				}
			case fakemodel.ProviderNoMaxTokens:
				if !prof.Params.Temperature || prof.Params.TokenField != chat.TokenFieldMaxCompletionTokens {
					t.Errorf("params %+v", prof.Params)
				}
			default:
				if prof.Params != chat.DefaultRequestParams() || len(entries) != 0 {
					t.Errorf("params %+v with %d cache files for an endpoint that refused nothing", prof.Params, len(entries))
				}
			}
		})
	}
}

// TestHTTPModelRequestWire checks the bytes on the wire per style: the URL
// (query kept, /chat/completions in the path), the credential header, the
// stream switch and the optional fields.
func TestHTTPModelRequestWire(t *testing.T) {
	t.Parallel()
	type seen struct {
		url, auth, apiKey, accept string
		body                      map[string]any
	}
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{url: r.URL.String(), auth: r.Header.Get("Authorization"), apiKey: r.Header.Get("api-key"), accept: r.Header.Get("Accept")}
		json.Unmarshal(b, &got.body)
		if got.body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hm\"}}]}\n\n"+
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"do(action=\\\"Back\\\")\"}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"content":[{"type":"text","text":"do(action=\"Home\")"}]}}]}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		adjust  func(*chat.Config)
		url     string
		content string
	}{
		{"openai with a gateway query", func(mc *chat.Config) { mc.BaseURL = srv.URL + "/v1?tenant=qa" }, "/v1/chat/completions?tenant=qa", `do(action="Home")`},
		{"azure", func(mc *chat.Config) {
			mc.BaseURL, mc.APIStyle, mc.APIVersion = srv.URL+"/openai/deployments/gpt4o", chat.APIStyleAzure, "2024-10-21"
		}, "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", `do(action="Home")`},
		{"stream", func(mc *chat.Config) { mc.BaseURL, mc.Stream = srv.URL+"/v1", true }, "/v1/chat/completions", `do(action="Back")`},
	} {
		mc := chat.DefaultConfig()
		mc.Model, mc.APIKey = "m", redact.NewSecret(testAPIKey)
		tc.adjust(&mc)
		m, err := chat.NewClient(mc)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Chat(context.Background(), chat.Request{Purpose: "plan", Messages: []chat.Message{{Role: "user", Text: "hi"}}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.url != tc.url || resp.Content != tc.content {
			t.Errorf("%s: url %s content %q", tc.name, got.url, resp.Content)
		}
		if mc.APIStyle == chat.APIStyleAzure {
			if got.apiKey != testAPIKey || got.auth != "" {
				t.Errorf("%s: api-key %q Authorization %q", tc.name, got.apiKey, got.auth)
			}
		} else if got.auth != "Bearer "+testAPIKey || got.apiKey != "" {
			t.Errorf("%s: Authorization %q api-key %q", tc.name, got.auth, got.apiKey)
		}
		if mc.Stream {
			so, _ := got.body["stream_options"].(map[string]any)
			if got.accept != "text/event-stream" || so["include_usage"] != true || resp.Reasoning != "hm" {
				t.Errorf("%s: accept %q stream_options %v reasoning %q", tc.name, got.accept, got.body["stream_options"], resp.Reasoning)
			}
		} else if _, ok := got.body["stream_options"]; ok || got.body["stream"] != false {
			t.Errorf("%s: stream %v stream_options %v", tc.name, got.body["stream"], got.body["stream_options"])
		}
		if got.body["temperature"] != 0.0 || got.body["max_tokens"] != 3000.0 {
			t.Errorf("%s: temperature %v max_tokens %v", tc.name, got.body["temperature"], got.body["max_tokens"])
		}
	}
}

// TestRefusalRetriedOnce: an endpoint that keeps naming a field is asked
// once without it, then its error is reported; it is never looped on.
func TestRefusalRetriedOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"temperature and max_tokens and max_completion_tokens are all wrong"}}`)
	}))
	defer srv.Close()
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model = srv.URL, "m"
	m, _ := chat.NewClient(mc)
	_, err := m.Chat(context.Background(), chat.Request{Purpose: "plan", Messages: []chat.Message{{Role: "user", Text: "hi"}}})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeModelHTTPError || chat.HTTPStatus(err) != 400 {
		t.Fatalf("err %v", err)
	}
	// max_tokens → max_completion_tokens → none, temperature: four sends.
	if calls != 4 {
		t.Fatalf("%d requests, want 4", calls)
	}
}

// TestModelErrorKinds: every failure is a typed fault with a stable code.
func TestModelErrorKinds(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	// The slow model answers when the test is over (its client gave up
	// long before).
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client hanging up only once the body is
		// read: without this the handler outlives the timeout by 5 s.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key `+r.Header.Get("Authorization")+`"}}`)
	}))
	defer denied.Close()
	for _, tc := range []struct {
		url, code string
		timeout   time.Duration
	}{
		{closed, fault.CodeModelUnreachable, time.Second},
		{slow.URL, fault.CodeModelTimeout, 50 * time.Millisecond},
		{denied.URL, fault.CodeModelAuthFailed, time.Second},
	} {
		mc := chat.DefaultConfig()
		mc.BaseURL, mc.Model, mc.APIKey, mc.Retries, mc.Timeout = tc.url, "m", redact.NewSecret(testAPIKey), 0, tc.timeout
		m, _ := chat.NewClient(mc)
		_, err := m.Chat(context.Background(), chat.Request{Purpose: "plan", Messages: []chat.Message{{Role: "user", Text: "hi"}}})
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != tc.code || fe.Kind != fault.Transport || fe.UserAction == "" {
			t.Errorf("%s: %v (%+v)", tc.code, err, fe)
		}
		if err != nil && strings.Contains(err.Error(), testAPIKey) {
			t.Errorf("%s: the error shows the key", tc.code)
		}
	}
}

func TestModelConfigProviderStyles(t *testing.T) {
	t.Parallel()
	env := map[string]string{chat.EnvModelBaseURL: "https://r.openai.azure.com/openai/deployments/d", chat.EnvModel: "d", chat.EnvModelAPIKey: "k-123456",
		chat.EnvModelStream: "1", chat.EnvModelAPIStyle: "azure", chat.EnvModelAPIVersion: "2024-10-21", chat.EnvModelImageFormat: "PNG", chat.EnvModelImageQuality: "70"}
	c := chat.DefaultConfig()
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if !c.Stream || c.APIStyle != chat.APIStyleAzure || c.APIVersion != "2024-10-21" || c.Image != (chat.ImageEncoding{Format: chat.ImagePNG, Quality: 70}) {
		t.Fatalf("%+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]func(*chat.Config){
		"azure without version": func(c *chat.Config) { c.APIVersion = "" },
		"azure without key":     func(c *chat.Config) { c.APIKey = redact.Secret{} },
		"unknown style":         func(c *chat.Config) { c.APIStyle = "bedrock" },
		"gif":                   func(c *chat.Config) { c.Image.Format = "gif" },
		"jpeg quality 0":        func(c *chat.Config) { c.Image = chat.ImageEncoding{Format: chat.ImageJPEG} },
		"key in the query":      func(c *chat.Config) { c.BaseURL += "?api-key=" + testAPIKey },
	} {
		x := c
		bad(&x)
		if err := x.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), testAPIKey) {
			t.Errorf("%s: the error shows the key", name)
		}
	}
	for _, v := range []string{"2", "maybe"} {
		c := chat.DefaultConfig()
		if err := c.ApplyEnv(func(k string) string { return map[string]string{chat.EnvModelStream: v}[k] }); err == nil {
			t.Errorf("%s=%s accepted", chat.EnvModelStream, v)
		}
	}
}

// TestEndpointCacheIsAnOptimisation: a corrupt or foreign cache file is
// ignored and an unwritable cache directory only reported; the requests
// still succeed.
func TestEndpointCacheIsAnOptimisation(t *testing.T) {
	t.Parallel()
	srv, err := fakemodel.Start(fakemodel.Options{Provider: fakemodel.ProviderNoTemperature})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model = srv.URL, "fake-vision"
	dir := t.TempDir()
	if err := os.WriteFile(chat.EndpointCacheFile(dir, mc), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, _ := chat.NewClient(mc)
	m.UseCache(dir)
	if m.EndpointProfile().Source != chat.ParamsDefault || m.CacheError() == nil {
		t.Fatalf("a corrupt cache file: %+v %v", m.EndpointProfile(), m.CacheError())
	}
	// A directory where a file is expected: the learned fields cannot be
	// written, the call still succeeds.
	blocked := t.TempDir()
	if err := os.Mkdir(chat.EndpointCacheFile(blocked, mc), 0o700); err != nil {
		t.Fatal(err)
	}
	m, _ = chat.NewClient(mc)
	m.UseCache(blocked)
	if _, err := m.Chat(context.Background(), chat.Request{Purpose: "plan", Messages: []chat.Message{{Role: "user", Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if m.EndpointProfile().Params.Temperature || m.CacheError() == nil {
		t.Fatalf("%+v %v", m.EndpointProfile(), m.CacheError())
	}
}
