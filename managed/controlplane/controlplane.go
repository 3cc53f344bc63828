// Package controlplane is the managed store's HTTP API (managed-serve): the
// routes of SoloPi's own host CLI, Bearer authentication on everything but
// /health, canonical redacted JSON responses, River's dashboard under
// /riverui/ behind the same token, and retention purge. It manages data only:
// nothing here reaches a device, a shell or adb.
package controlplane

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/redact"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// ServerName is sent in the Server header.
const ServerName = "SoloPiManagedExecution/1"

// Config configures a control plane.
type Config struct {
	Store       managed.Store
	BearerToken string
	// ValidatePlan checks submitted plans as the CLI does; nil means
	// managed.StructuralPlan.
	ValidatePlan managed.PlanValidator
	// Host and ArtifactsRoots select the evidence POST
	// /v1/retention/purge may delete (this machine's workers').
	Host           string
	ArtifactsRoots []string
	Logger         *slog.Logger
}

// server is the control plane's http.Handler.
type server struct {
	cfg      Config
	mux      *http.ServeMux
	redactor *redact.Redactor // the bearer token, on every response and log line
}

// New checks the token and builds the routes; River's dashboard is started
// with ctx.
func New(ctx context.Context, cfg Config) (*server, error) {
	if !managed.ValidOwnerToken(cfg.BearerToken) {
		return nil, fault.Usage(fault.CodeInvalidBearerToken, "the bearer token must be 16 to 256 URL-safe characters")
	}
	if cfg.ValidatePlan == nil {
		cfg.ValidatePlan = managed.StructuralPlan
	}
	s := &server{cfg: cfg, mux: http.NewServeMux(), redactor: redact.New(cfg.BearerToken)}
	ui, err := cfg.Store.RiverUI(ctx, "/riverui")
	if err != nil {
		return nil, err
	}
	if err := ui.Start(ctx); err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeRiverUIFailed, "River's dashboard did not start", err)
	}
	s.mux.Handle("/riverui/", s.dashboardAuth(withJSONFetch(ui)))
	s.mux.Handle("GET "+jsonFetchPath, s.dashboardAuth(http.HandlerFunc(serveJSONFetch)))
	s.route("GET /health", false, s.health)
	s.route("GET /v1/devices", true, s.listDevices)
	s.route("POST /v1/devices", true, s.registerDevice)
	s.route("POST /v1/tasks", true, s.submit)
	s.route("GET /v1/tasks/{id}", true, s.status)
	s.route("GET /v1/tasks/{id}/events", true, s.events)
	s.route("GET /v1/tasks/{id}/report", true, s.report)
	s.route("POST /v1/tasks/{id}/cancel", true, s.cancel)
	s.route("POST /v1/recover", true, s.recover)
	s.route("POST /v1/retention/purge", true, s.purge)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			s.unauthorized(w)
			return
		}
		if allow := s.allowed(r); allow != "" {
			w.Header().Set("Allow", allow)
			s.fail(w, fault.New(fault.Invalid, fault.CodeMethodNotAllowed, "this resource does not answer "+r.Method))
			return
		}
		s.fail(w, fault.New(fault.Invalid, fault.CodeNotFound, "no such resource"))
	})
	return s, nil
}

// allowed lists the methods a path answers, for a request that reached the
// catch-all with another method.
func (s *server) allowed(r *http.Request) string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}

// ServeHTTP implements http.Handler.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", ServerName)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if err := s.guard(r); err != nil {
		f := fault.From(err)
		s.write(w, guardStatus(f.Code), f.Fields(), false)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// handler answers one route with a payload (merged into {"success":true})
// or an error.
type handler func(r *http.Request) (any, error)

func (s *server) route(pattern string, auth bool, h handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if auth && !s.authorized(r) {
			s.unauthorized(w)
			return
		}
		v, err := h(r)
		if err != nil {
			s.fail(w, err)
			return
		}
		s.write(w, http.StatusOK, v, true)
	})
}

// authorized compares the Authorization header with "Bearer <token>" in
// constant time.
func (s *server) authorized(r *http.Request) bool {
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+s.cfg.BearerToken)) == 1
}

// dashboardAuth admits River's dashboard with the Bearer token, or with
// HTTP Basic authentication whose password is the token: a browser asks for
// it once and then sends it with every request the dashboard makes.
func (s *server) dashboardAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, basic := r.BasicAuth()
		if s.authorized(r) || basic && subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.BearerToken)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="solopi managed", charset="UTF-8"`)
		s.write(w, http.StatusUnauthorized, errorBody(fault.CodeUnauthorized, "unauthorized"), false)
	})
}

func (s *server) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="solopi managed"`)
	s.write(w, http.StatusUnauthorized, errorBody(fault.CodeUnauthorized, "unauthorized"), false)
}

func errorBody(code, msg string) map[string]any {
	return map[string]any{"success": false, "errorCode": code, "error": msg}
}

// status is the HTTP status of a store or request error code.
func status(code string) int {
	switch code {
	case fault.CodeTaskNotFound, fault.CodeDeviceNotFound, fault.CodeNotFound:
		return http.StatusNotFound
	case fault.CodeOwnerMismatch, fault.CodeStaleAssignment:
		return http.StatusForbidden
	case fault.CodeIdempotencyConflict, fault.CodeSerialConflict:
		return http.StatusConflict
	case fault.CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	}
	return http.StatusBadRequest
}

func (s *server) fail(w http.ResponseWriter, err error) {
	f := fault.From(err)
	status := status(f.Code)
	if f.Kind == fault.Internal || f.Kind == fault.Transport || f.Kind == fault.Interrupted || f.Kind == fault.Timeout {
		// The cause stays in the log; the client learns only that it
		// was not its fault.
		if s.cfg.Logger != nil {
			s.cfg.Logger.Error("managed request failed", "error", s.redactor.Text(err.Error()))
		}
		s.write(w, http.StatusInternalServerError, errorBody(fault.CodeInternalError, "internal_error"), false)
		return
	}
	s.write(w, status, f.Fields(), false)
}

// write sends v as canonical JSON (sorted keys, compact), redacted, merged
// into {"success": true} when ok. A generated owner token, the one secret
// a response may carry, survives redaction on the response that created
// it.
func (s *server) write(w http.ResponseWriter, status int, v any, ok bool) {
	body, err := s.encode(v, ok)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = canonjson.Marshal(errorBody(fault.CodeInternalError, "internal_error"))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func (s *server) encode(v any, ok bool) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	tree, err := canonjson.Decode(raw)
	if err != nil {
		return nil, err
	}
	m, isObject := tree.(map[string]any)
	if !isObject {
		m = map[string]any{"value": tree}
	}
	token, _ := m["ownerToken"].(string)
	m = s.redactor.Value(m).(map[string]any)
	if token != "" {
		m["ownerToken"] = token
	}
	if ok {
		m["success"] = true
	}
	return canonjson.Marshal(m)
}

// body reads a JSON object of at most MaxBody bytes.
func body(r *http.Request) (map[string]any, error) {
	bad := func(msg string) error { return fault.New(fault.Invalid, fault.CodeInvalidRequest, msg) }
	if r.ContentLength > MaxBody {
		return nil, bad("the request body is larger than 1 MiB")
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, bad("the request body could not be read")
	}
	switch {
	case len(b) == 0:
		return nil, bad("the request needs a JSON object body ({} when empty)")
	case len(b) > MaxBody:
		return nil, bad("the request body is larger than 1 MiB")
	case !utf8.Valid(b):
		return nil, bad("the request body must be UTF-8 JSON")
	}
	v, err := canonjson.Decode(b)
	if err != nil {
		return nil, bad("the request body must be UTF-8 JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad("the request body must be a JSON object")
	}
	return m, nil
}

// ValidateBind accepts only loopback addresses: the API has no TLS.
func ValidateBind(bind string) error {
	switch bind {
	case "127.0.0.1", "::1", "localhost":
		return nil
	}
	return fault.New(fault.Invalid, fault.CodeUnsafeBind, "the managed API binds loopback only: 127.0.0.1, ::1 or localhost").
		With("bind", bind)
}

// Listen opens the listener (port 0 picks a free one).
func Listen(bind string, port int) (net.Listener, error) {
	if err := ValidateBind(bind); err != nil {
		return nil, err
	}
	if port < 0 || port > 65535 {
		return nil, fault.Usage(fault.CodeInvalidPort, "--port must be from 0 to 65535")
	}
	host := bind
	if bind == "localhost" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fault.Wrap(fault.Failed, fault.CodeListenFailed, "cannot listen on "+net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	return ln, nil
}

// URL is the base URL of a listener.
func URL(ln net.Listener) string { return "http://" + ln.Addr().String() }
