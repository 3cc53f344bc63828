package fakemodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
)

const wireKey = "fake-wire-key-123"

func startProvider(t *testing.T, provider string) *Server {
	t.Helper()
	s, err := Start(Options{Provider: provider, APIKey: wireKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func pngDataURL(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// post sends body to url with headers and returns the status and body.
func post(t *testing.T, url string, headers map[string]string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func textBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": "fake-vision", "messages": []any{map[string]any{"role": "user", "content": "hello"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

var bearer = map[string]string{"Authorization": "Bearer " + wireKey}

func TestProviderRefusals(t *testing.T) {
	t.Parallel()
	image := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": ""}}, map[string]any{"type": "text", "text": "look"}}}}}
	for _, tc := range []struct {
		provider string
		body     map[string]any
		status   int
		names    string
	}{
		{ProviderStreamOnly, textBody(map[string]any{"stream": false}), 400, `"param":"stream"`},
		{ProviderStreamOnly, textBody(map[string]any{"stream": true}), 200, "data: [DONE]"},
		{ProviderNoTemperature, textBody(map[string]any{"temperature": 0}), 400, `"param":"temperature"`},
		{ProviderNoTemperature, textBody(nil), 200, `"content":"`},
		{ProviderNoMaxTokens, textBody(map[string]any{"max_tokens": 10}), 400, "Use 'max_completion_tokens' instead"},
		{ProviderNoMaxTokens, textBody(map[string]any{"max_completion_tokens": 10}), 200, `"content":"`},
		{ProviderTextOnly, image, 400, "does not support image input"},
		{ProviderTextOnly, textBody(nil), 200, `"content":"`},
		{ProviderParts, textBody(nil), 200, `"content":[{"text":`},
		{ProviderOpenAI, textBody(map[string]any{"stream": true, "stream_options": map[string]bool{"include_usage": true}}), 200, `"usage":{"prompt_tokens"`},
	} {
		s := startProvider(t, tc.provider)
		if tc.body["messages"].([]any)[0].(map[string]any)["content"] != "hello" {
			tc.body["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["image_url"].(map[string]any)["url"] = pngDataURL(t)
		}
		status, body := post(t, s.URL+"/chat/completions", bearer, tc.body)
		if status != tc.status || !strings.Contains(body, tc.names) {
			t.Errorf("%s: HTTP %d %s; want %d containing %s", tc.provider, status, body, tc.status, tc.names)
		}
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Status != tc.status || (tc.status != 200) != (reqs[0].Refused != "") {
			t.Errorf("%s: recorded %+v", tc.provider, reqs)
		}
	}
}

func TestAzureProvider(t *testing.T) {
	t.Parallel()
	s := startProvider(t, ProviderAzure)
	if !strings.HasSuffix(s.URL, "/openai/deployments/"+azureDeployment) {
		t.Fatalf("URL %s", s.URL)
	}
	key := map[string]string{"api-key": wireKey}
	for _, tc := range []struct {
		url     string
		headers map[string]string
		status  int
	}{
		{s.URL + "/chat/completions?api-version=" + AzureAPIVersion, key, 200},
		{s.URL + "/chat/completions", key, 404},                                   // no api-version
		{s.URL + "/chat/completions?api-version=latest", key, 404},                // not a version
		{s.URL + "/chat/completions?api-version=" + AzureAPIVersion, bearer, 401}, // a bearer token is not the api-key
		{s.URL + "/chat/completions?api-version=" + AzureAPIVersion, map[string]string{"api-key": "wrong"}, 401},
		{strings.Replace(s.URL, "/openai/deployments/", "/v1/", 1) + "/chat/completions?api-version=" + AzureAPIVersion, key, 404},
	} {
		if status, body := post(t, tc.url, tc.headers, textBody(nil)); status != tc.status {
			t.Errorf("%s %v: HTTP %d %s, want %d", tc.url, tc.headers, status, body, tc.status)
		}
	}
}

func TestStartRejectsUnknownProvider(t *testing.T) {
	t.Parallel()
	if s, err := Start(Options{Provider: "bedrock"}); err == nil {
		s.Close()
		t.Fatal("an unknown provider was accepted")
	}
}

func TestDecodeDataURL(t *testing.T) {
	t.Parallel()
	u := pngDataURL(t)
	if _, f, err := decodeDataURL(u); err != nil || f != "png" {
		t.Fatalf("png: %s %v", f, err)
	}
	// The declared type must match the bytes.
	if _, _, err := decodeDataURL(strings.Replace(u, "image/png", "image/jpeg", 1)); err == nil {
		t.Error("PNG bytes declared as JPEG were accepted")
	}
	for _, bad := range []string{"http://x/y.png", "data:image/gif;base64,R0lG", "data:image/png;base64,!!"} {
		if _, _, err := decodeDataURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
