package controlplane

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// River's UI posts its JSON bodies as plain strings, which a browser sends
// as text/plain: a content type any foreign page's form can send too. The
// dashboard's pages therefore load one script of ours first, which gives
// the UI's string bodies the JSON content type they are, so that the guard
// can require application/json on every state-changing dashboard request.
const (
	jsonFetchPath = "/riverui/solopi-json-fetch.js"
	jsonFetchJS   = `(() => {
	const send = window.fetch.bind(window);
	window.fetch = (input, init) => {
		if (init && typeof init.body === "string") {
			const headers = new Headers(init.headers);
			if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
			init = Object.assign({}, init, {headers});
		}
		return send(input, init);
	};
})();
`
)

func serveJSONFetch(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(jsonFetchJS)))
	w.Write([]byte(jsonFetchJS))
}

// withJSONFetch adds the script to the dashboard's HTML pages, ahead of
// River's own scripts; API calls and assets pass through untouched.
func withJSONFetch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !safeMethod(r.Method) || r.Method == http.MethodOptions ||
			strings.HasPrefix(r.URL.Path, "/riverui/api/") || strings.HasPrefix(r.URL.Path, "/riverui/assets/") {
			next.ServeHTTP(w, r)
			return
		}
		// A whole page, never a range of it or a 304 of a page without
		// the script.
		r = r.Clone(r.Context())
		for _, h := range []string{"Range", "If-Range", "If-Modified-Since", "If-None-Match"} {
			r.Header.Del(h)
		}
		page := &pageBuffer{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(page, r)
		body := page.body.Bytes()
		if page.status == http.StatusOK && strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
			body = bytes.Replace(body, []byte("<head>"), []byte(`<head><script src="`+jsonFetchPath+`"></script>`), 1)
		}
		for k, v := range page.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(page.status)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
}

// pageBuffer holds a dashboard page's response until the script is added.
type pageBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (p *pageBuffer) Header() http.Header         { return p.header }
func (p *pageBuffer) WriteHeader(status int)      { p.status = status }
func (p *pageBuffer) Write(b []byte) (int, error) { return p.body.Write(b) }
