package inspector

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func status(t *testing.T, method, rawURL, host, origin, contentType, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestGuardRefusesForeignRequests: a wrong or missing token, a foreign
// Origin and a Host that is not the loopback address are all 403, on every
// route; a form post is not JSON; a bad act body is refused before it
// reaches the recorder.
func TestGuardRefusesForeignRequests(t *testing.T) {
	t.Parallel()
	p := newPhone(t)
	r := serve(t, p, t.TempDir()+"/rec.json")
	if len(r.token) < 32 || !strings.HasPrefix(r.url, "http://127.0.0.1:") {
		t.Fatalf("url %s: want a loopback address and a long random token", r.url)
	}
	port := r.base[strings.LastIndex(r.base, ":")+1:]
	tok := "token=" + r.token
	act := `{"seq":1,"node":0,"action":"click"}`
	cases := []struct {
		name                       string
		method, path, host, origin string
		contentType, body          string
		want                       int
	}{
		{name: "page", method: "GET", path: "/?" + tok, want: 200},
		{name: "no token", method: "GET", path: "/", want: 403},
		{name: "wrong token", method: "GET", path: "/?token=" + strings.Repeat("0", len(r.token)), want: 403},
		{name: "wrong token on snapshot", method: "GET", path: "/snapshot?token=x", want: 403},
		{name: "no token on act", method: "POST", path: "/act", contentType: "application/json", body: act, want: 403},
		{name: "foreign origin", method: "GET", path: "/?" + tok, origin: "http://evil.example", want: 403},
		{name: "foreign origin on act", method: "POST", path: "/act?" + tok, origin: "http://evil.example", contentType: "application/json", body: act, want: 403},
		{name: "other port origin", method: "GET", path: "/?" + tok, origin: "http://127.0.0.1:1", want: 403},
		{name: "rebinding host", method: "GET", path: "/?" + tok, host: "evil.example:" + port, want: 403},
		{name: "localhost host", method: "GET", path: "/?" + tok, host: "localhost:" + port, want: 403},
		{name: "own origin", method: "GET", path: "/?" + tok, origin: r.base, want: 200},
		{name: "form post", method: "POST", path: "/act?" + tok, origin: r.base, contentType: "application/x-www-form-urlencoded", body: "seq=1&node=0&action=click", want: 415},
		{name: "unknown key", method: "POST", path: "/act?" + tok, origin: r.base, contentType: "application/json", body: `{"seq":1,"node":0,"action":"click","x":1}`, want: 400},
		{name: "unknown action", method: "POST", path: "/act?" + tok, origin: r.base, contentType: "application/json", body: `{"seq":1,"node":0,"action":"tap"}`, want: 400},
		{name: "gone screen", method: "POST", path: "/act?" + tok, origin: r.base, contentType: "application/json", body: `{"seq":999,"node":0,"action":"click"}`, want: 410},
		{name: "unknown screen", method: "GET", path: "/screen/00.png?" + tok, want: 404},
	}
	for _, c := range cases {
		if got := status(t, c.method, r.base+c.path, c.host, c.origin, c.contentType, c.body); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	if res := r.stop(); res.Recording.StepsAdded != 0 {
		t.Fatalf("a refused request recorded a step: %+v", res.Recording)
	}
}
