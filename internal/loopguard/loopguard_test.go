package loopguard

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

// The guard lets through only requests with the token, this Host and no
// foreign Origin, and marks every answer; a page gets a fresh nonce each
// time and a policy naming it.
func TestGuardAndPage(t *testing.T) {
	t.Parallel()
	s, err := Listen(fault.CodeConsoleListenFailed)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: s.Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		ServePage(w, `<script nonce="{{NONCE}}"></script>`)
	}), QueryToken)}
	s.Serve(srv)
	t.Cleanup(func() { srv.Close() })
	u, _ := url.Parse(s.URL())
	if u.Hostname() != "127.0.0.1" || u.Query().Get("token") != s.Token() || len(s.Token()) != 48 || s.TokenOK("") || !s.TokenOK(s.Token()) {
		t.Fatalf("url %s", s.URL())
	}
	get := func(rawURL, host, origin string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", rawURL, nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for name, c := range map[string][3]string{
		"no token":     {"http://" + u.Host + "/", "", ""},
		"wrong token":  {"http://" + u.Host + "/?token=" + strings.Repeat("a", 48), "", ""},
		"foreign host": {s.URL(), "localhost:" + u.Port(), ""},
		"foreign site": {s.URL(), "", "http://evil.example"},
	} {
		if resp, _ := get(c[0], c[1], c[2]); resp.StatusCode != 403 || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	r1, b1 := get(s.URL(), "", "http://"+u.Host)
	r2, b2 := get(s.URL(), "", "")
	csp := r1.Header.Get("Content-Security-Policy")
	if r1.StatusCode != 200 || b1 == b2 || !strings.Contains(b1, `nonce="`) || strings.Contains(b1, "{{NONCE}}") ||
		!strings.Contains(csp, "script-src 'nonce-"+strings.Split(strings.Split(b1, `nonce="`)[1], `"`)[0]+"'") || r2.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("page %d %q %q csp %q", r1.StatusCode, b1, b2, csp)
	}
}
