package controlplane

import (
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/fault"
)

// The guard runs on every request, before authentication:
//
//   - Host must be a loopback name of this server (127.0.0.1, localhost or
//     [::1], with the port it listens on): a page on a name that an
//     attacker's DNS points at 127.0.0.1 is not served, /health included.
//   - An Origin header must be this server's origin, and Sec-Fetch-Site,
//     when a browser sends it, same-origin or none (typed by the user), for
//     any method but GET, HEAD and OPTIONS; a cross-site link to a page
//     (GET) still opens.
//   - Under /riverui/, where a browser holds the Basic credentials and sends
//     them by itself, a state-changing request must prove that it comes
//     from the dashboard's own origin (Origin or Sec-Fetch-Site), and a
//     POST, or any such request with a body, must be application/json, a
//     content type no form can send and no foreign page can set without a
//     CORS preflight. River's UI sends its JSON as plain strings (which a
//     browser labels text/plain); the dashboard's pages load a script of
//     ours first that labels them application/json (dashboard.go).
//   - /v1/ routes need the Authorization: Bearer header, which a browser
//     never attaches by itself and a cross-site page cannot set without a
//     CORS preflight this server never grants; a body there must not be a
//     form's either when a browser sent it.
func (s *server) guard(r *http.Request) error {
	hosts := loopbackHosts(r)
	if !hosts[strings.ToLower(r.Host)] {
		return fault.New(fault.Invalid, fault.CodeForeignHost, "this server answers only to its loopback address").With("host", r.Host)
	}
	if safeMethod(r.Method) {
		return nil
	}
	origin, site := r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")
	if origin != "" && !hosts[strings.ToLower(strings.TrimPrefix(origin, "http://"))] {
		return fault.New(fault.Invalid, fault.CodeCrossSiteRequest, "a state-changing request from another origin is refused").With("origin", origin)
	}
	if site != "" && site != "same-origin" && site != "none" {
		return fault.New(fault.Invalid, fault.CodeCrossSiteRequest, "a state-changing request from another site is refused").With("secFetchSite", site)
	}
	browser := origin != "" || site != ""
	dashboard := strings.HasPrefix(r.URL.Path, "/riverui/")
	if dashboard && origin == "" && site != "same-origin" {
		return fault.New(fault.Invalid, fault.CodeCrossSiteRequest, "a state-changing dashboard request must come from the dashboard's own page (Origin header)")
	}
	if dashboard && (r.Method == http.MethodPost || r.ContentLength != 0) && !jsonBody(r.Header.Get("Content-Type")) {
		return fault.New(fault.Invalid, fault.CodeUnsupportedMediaType, "a state-changing dashboard request must send application/json")
	}
	if browser && formBody(r.Header.Get("Content-Type")) {
		return fault.New(fault.Invalid, fault.CodeUnsupportedMediaType, "a state-changing request must not carry a form body; send JSON")
	}
	return nil
}

func jsonBody(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// formBody reports the content types an HTML form submits without script.
func formBody(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct != ""
	}
	return mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data"
}

// loopbackHosts are the Host values this server answers to: its loopback
// names with the port the request arrived on (and without it on port 80).
// A request whose local address is unknown gets none.
func loopbackHosts(r *http.Request) map[string]bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return nil
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		out[h+":"+port] = true
		if port == strconv.Itoa(80) {
			out[h] = true
		}
	}
	return out
}

// guardStatus is the HTTP status of a guard refusal.
func guardStatus(code string) int {
	if code == fault.CodeUnsupportedMediaType {
		return http.StatusUnsupportedMediaType
	}
	return http.StatusForbidden
}
