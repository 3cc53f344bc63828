package controlplane_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/controlplane"
	"github.com/solopi-dev/solopi/managed/storetest"
)

const token = "service-token-1234567890abcdef"

type api struct {
	t    *testing.T
	url  string
	srv  *httptest.Server
	s    managed.Store
	path string
}

func start(t *testing.T, path string, validate managed.PlanValidator) *api {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := managed.Open(ctx, path, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := controlplane.New(ctx, controlplane.Config{Store: s, BearerToken: token, ValidatePlan: validate,
		Host: "host-a", ArtifactsRoots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &api{t: t, url: srv.URL, srv: srv, s: s, path: path}
}

type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (a *api) do(method, path string, body any, headers ...string) reply {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" { // Go's client sends req.Host, not a Host header
			req.Host = headers[i+1]
			continue
		}
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	json.Unmarshal(raw, &r.body)
	return r
}

func (r reply) want(t *testing.T, status int, code string) reply {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if code != "" && r.body["errorCode"] != code {
		t.Fatalf("errorCode %v, want %s: %s", r.body["errorCode"], code, r.raw)
	}
	if code == "" && status == 200 && r.body["success"] != true {
		t.Fatalf("success is not true: %s", r.raw)
	}
	return r
}

func submission(key string) map[string]any {
	return map[string]any{"plan": storetest.Plan(strings.Repeat("a", 64)), "matrix": storetest.Matrix(1, nil), "idempotencyKey": key}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	a := start(t, filepath.Join(t.TempDir(), "m.sqlite"), nil)

	h := a.do("GET", "/health", nil, "Authorization", "").want(t, 200, "")
	if h.body["database"] != a.path || h.body["ready"] != true {
		t.Fatalf("health %s", h.raw)
	}
	if h.header.Get("Content-Type") != "application/json; charset=utf-8" || h.header.Get("Cache-Control") != "no-store" ||
		h.header.Get("Server") != controlplane.ServerName {
		t.Fatalf("headers %v", h.header)
	}
	// Responses are canonical JSON: sorted keys, compact.
	tree, _ := canonjson.Decode(h.raw)
	if canon, _ := canonjson.Marshal(tree); !bytes.Equal(canon, h.raw) {
		t.Fatalf("not canonical: %s", h.raw)
	}

	d := a.do("POST", "/v1/devices", map[string]any{"deviceId": "pixel-api", "serial": "API-SERIAL", "apiLevel": 35,
		"capabilities": []string{"verification"}, "labels": map[string]string{"tier": "physical", "owner": token}}).want(t, 200, "")
	if d.body["deviceId"] != "pixel-api" || d.body["platform"] != "android" || d.body["health"] != "healthy" {
		t.Fatalf("device %s", d.raw)
	}
	a.do("POST", "/v1/devices", map[string]any{"deviceId": "other", "serial": "API-SERIAL", "apiLevel": 35}).want(t, 409, fault.CodeSerialConflict)
	a.do("POST", "/v1/devices", map[string]any{"deviceId": "x", "serial": "S", "apiLevel": true}).want(t, 400, fault.CodeInvalidContract)
	list := a.do("GET", "/v1/devices", nil).want(t, 200, "")
	if n := len(list.body["devices"].([]any)); n != 1 || strings.Contains(string(list.raw), token) {
		t.Fatalf("devices %s", list.raw)
	}

	created := a.do("POST", "/v1/tasks", submission("api-ci-1")).want(t, 200, "")
	owner, _ := created.body["ownerToken"].(string)
	if !managed.ValidOwnerToken(owner) || created.body["idempotent"] != false {
		t.Fatalf("creation must return a generated owner token once: %s", created.raw)
	}
	id := created.body["taskId"].(string)
	again := submission("api-ci-1")
	again["ownerToken"] = owner
	dup := a.do("POST", "/v1/tasks", again).want(t, 200, "")
	if dup.body["taskId"] != id || dup.body["idempotent"] != true || dup.body["ownerToken"] != nil {
		t.Fatalf("resubmission %s", dup.raw)
	}
	conflict := submission("api-ci-1")
	conflict["ownerToken"], conflict["maxRetries"] = owner, 2
	a.do("POST", "/v1/tasks", conflict).want(t, 409, fault.CodeIdempotencyConflict)
	a.do("POST", "/v1/tasks", submission("api-ci-1")).want(t, 403, fault.CodeOwnerMismatch)
	bad := submission("api-ci-2")
	bad["plan"] = map[string]any{"schemaVersion": "nope"}
	a.do("POST", "/v1/tasks", bad).want(t, 400, fault.CodeInvalidPlan)
	bad = submission("api-ci-2")
	bad["leaseDurationMs"] = 1.5
	a.do("POST", "/v1/tasks", bad).want(t, 400, fault.CodeInvalidContract)

	st := a.do("GET", "/v1/tasks/"+id, nil).want(t, 200, "")
	if st.body["status"] != "queued" || st.body["shardCounts"].(map[string]any)["queued"] != float64(1) {
		t.Fatalf("status %s", st.raw)
	}
	a.do("GET", "/v1/tasks/task-missing", nil).want(t, 404, fault.CodeTaskNotFound)
	ev := a.do("GET", "/v1/tasks/"+id+"/events?after=0", nil).want(t, 200, "")
	if ev.body["taskId"] != id || len(ev.body["events"].([]any)) != 1 {
		t.Fatalf("events %s", ev.raw)
	}
	if ev := a.do("GET", "/v1/tasks/"+id+"/events?after=1", nil).want(t, 200, ""); len(ev.body["events"].([]any)) != 0 {
		t.Fatalf("events after 1: %s", ev.raw)
	}
	a.do("GET", "/v1/tasks/"+id+"/events?after=abc", nil).want(t, 400, fault.CodeInvalidContract)
	rep := a.do("GET", "/v1/tasks/"+id+"/report", nil).want(t, 200, "")
	if rep.body["exitCode"] != float64(4) || rep.body["terminal"] != false {
		t.Fatalf("report %s", rep.raw)
	}

	a.do("POST", "/v1/tasks/"+id+"/cancel", map[string]any{"ownerToken": "foreign-owner-1234567890"}).want(t, 403, fault.CodeOwnerMismatch)
	c := a.do("POST", "/v1/tasks/"+id+"/cancel", map[string]any{"ownerToken": owner}).want(t, 200, "")
	if c.body["status"] != "cancelled" {
		t.Fatalf("cancel %s", c.raw)
	}
	if rep := a.do("GET", "/v1/tasks/"+id+"/report", nil).want(t, 200, ""); rep.body["exitCode"] != float64(130) {
		t.Fatalf("report after cancel %s", rep.raw)
	}
	rec := a.do("POST", "/v1/recover", map[string]any{}).want(t, 200, "")
	if rec.body["requeued"] != float64(0) || rec.body["terminated"] != float64(0) {
		t.Fatalf("recover %s", rec.raw)
	}
	p := a.do("POST", "/v1/retention/purge", map[string]any{}).want(t, 200, "")
	if len(p.body["purged"].([]any)) != 0 || len(p.body["elsewhere"].([]any)) != 0 {
		t.Fatalf("purge %s", p.raw)
	}

	a.do("GET", "/v1/nothing", nil).want(t, 404, fault.CodeNotFound)
	a.do("DELETE", "/v1/tasks/"+id, nil).want(t, 405, fault.CodeMethodNotAllowed)
	a.do("PUT", "/v1/recover", map[string]any{}).want(t, 405, fault.CodeMethodNotAllowed)
}

func TestAuthAndBodies(t *testing.T) {
	t.Parallel()
	a := start(t, filepath.Join(t.TempDir(), "m.sqlite"), nil)
	routes := [][2]string{{"GET", "/v1/devices"}, {"POST", "/v1/devices"}, {"POST", "/v1/tasks"}, {"GET", "/v1/tasks/t"},
		{"GET", "/v1/tasks/t/events"}, {"GET", "/v1/tasks/t/report"}, {"POST", "/v1/tasks/t/cancel"}, {"POST", "/v1/recover"},
		{"POST", "/v1/retention/purge"}, {"GET", "/v1/unknown"}, {"DELETE", "/v1/devices"}}
	for _, auth := range []string{"", "Bearer wrong-token-1234567890", "bearer " + token, "Basic " + token} {
		for _, r := range routes {
			resp := a.do(r[0], r[1], map[string]any{}, "Authorization", auth)
			resp.want(t, 401, fault.CodeUnauthorized)
			if strings.Contains(string(resp.raw), token) {
				t.Fatalf("401 echoes the token: %s", resp.raw)
			}
		}
	}
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"empty", []byte{}},
		{"not json", []byte("{nope")},
		{"not an object", []byte("[1]")},
		{"invalid utf-8", []byte("{\"a\":\"\xff\"}")},
		{"over 1 MiB", []byte(`{"a":"` + strings.Repeat("x", controlplane.MaxBody) + `"}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a.do("POST", "/v1/recover", c.body).want(t, 400, fault.CodeInvalidRequest)
		})
	}
	a.do("POST", "/v1/recover", []byte("{}")).want(t, 200, "")
}

// The owner token survives a restart of the server on the same database
// (only its hash is stored), and River's dashboard is behind the token.
func TestRestartAndDashboard(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.sqlite")
	a := start(t, path, nil)
	body := submission("restart-1")
	body["ownerToken"] = "api-owner-token-1234567890"
	id := a.do("POST", "/v1/tasks", body).want(t, 200, "").body["taskId"].(string)
	a.srv.Close()
	a.s.Close()

	b := start(t, path, nil)
	if st := b.do("GET", "/v1/tasks/"+id, nil).want(t, 200, ""); st.body["status"] != "queued" {
		t.Fatalf("after restart %s", st.raw)
	}
	b.do("POST", "/v1/tasks/"+id+"/cancel", map[string]any{"ownerToken": "api-owner-token-1234567890"}).want(t, 200, "")

	ui := b.do("GET", "/riverui/", nil, "Authorization", "")
	if ui.status != 401 || !strings.HasPrefix(ui.header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("dashboard without credentials: %d %v", ui.status, ui.header)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+token))
	if ui := b.do("GET", "/riverui/", nil, "Authorization", basic); ui.status != 200 || !strings.Contains(string(ui.raw), "<html") {
		t.Fatalf("dashboard with Basic: %d %.200s", ui.status, ui.raw)
	}
	jobs := b.do("GET", "/riverui/api/jobs?state=cancelled&limit=10", nil)
	if jobs.status != 200 || !strings.Contains(string(jobs.raw), managed.KindShard) {
		t.Fatalf("dashboard API with Bearer: %d %.300s", jobs.status, jobs.raw)
	}
	wrong := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:wrong"))
	b.do("GET", "/riverui/api/jobs", nil, "Authorization", wrong).want(t, 401, fault.CodeUnauthorized)
}

// A plan validator plugged in (the verification engine's) runs on HTTP
// submissions as on the CLI's.
func TestPlanValidatorRuns(t *testing.T) {
	t.Parallel()
	reject := func(any) error {
		return fault.New(fault.Invalid, "plan_unreachable_checkpoint", "checkpoint c1 is never reached")
	}
	a := start(t, filepath.Join(t.TempDir(), "m.sqlite"), reject)
	a.do("POST", "/v1/tasks", submission("v-1")).want(t, 400, "plan_unreachable_checkpoint")
	if h, _ := a.s.Health(context.Background()); len(h.Tasks) != 0 {
		t.Fatal("a rejected plan created a task")
	}
}

func TestBindAndToken(t *testing.T) {
	t.Parallel()
	for _, bind := range []string{"0.0.0.0", "192.168.1.2", "::", "example.com", ""} {
		if _, err := controlplane.Listen(bind, 0); fault.CodeOf(err) != fault.CodeUnsafeBind {
			t.Errorf("bind %q: %v", bind, err)
		}
	}
	for _, bind := range []string{"127.0.0.1", "::1", "localhost"} {
		ln, err := controlplane.Listen(bind, 0)
		if err != nil {
			t.Fatalf("bind %s: %v", bind, err)
		}
		if !strings.HasPrefix(controlplane.URL(ln), "http://") {
			t.Fatal(controlplane.URL(ln))
		}
		ln.Close()
	}
	s, err := managed.Open(context.Background(), filepath.Join(t.TempDir(), "m.sqlite"), managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, bad := range []string{"short", strings.Repeat("a", 257), "has space in it 123456"} {
		if _, err := controlplane.New(context.Background(), controlplane.Config{Store: s, BearerToken: bad}); fault.KindOf(err) != fault.Invalid {
			t.Errorf("token %q: %v", bad, err)
		}
	}
}

func FuzzRequestBody(f *testing.F) {
	f.Add([]byte(`{"plan":{},"matrix":[],"idempotencyKey":"k","maxRetries":1}`))
	f.Add([]byte(`{"deviceId":"d","serial":"s","apiLevel":30,"labels":{"a":"b"},"capabilities":["x"]}`))
	f.Add([]byte(`[]`))
	s, err := managed.Open(context.Background(), filepath.Join(f.TempDir(), "m.sqlite"), managed.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h, err := controlplane.New(context.Background(), controlplane.Config{Store: s, BearerToken: token})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, path := range []string{"/v1/tasks", "/v1/devices", "/v1/tasks/task-x/cancel"} {
			req := httptest.NewRequest("POST", "http://127.0.0.1:8765"+path, bytes.NewReader(b))
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s answered %d to %q: %s", path, rec.Code, b, rec.Body.Bytes())
			}
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("%s answered non-JSON %q", path, rec.Body.Bytes())
			}
		}
	})
}

// Every request is checked before its route: a foreign Host is never
// served (DNS rebinding), a state-changing request from another origin or
// site is refused, the dashboard's state-changing routes need the
// dashboard's own origin and never take a form body.
func TestGuard(t *testing.T) {
	t.Parallel()
	a := start(t, filepath.Join(t.TempDir(), "m.sqlite"), nil)
	origin := "http://" + strings.TrimPrefix(a.url, "http://")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+token))
	for _, c := range []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code               string
	}{
		{"foreign host", "GET", "/health", nil, []string{"Host", "rebind.attacker.example:80"}, 403, fault.CodeForeignHost},
		{"foreign host with the port", "GET", "/v1/devices", nil, []string{"Host", "attacker.example" + a.url[strings.LastIndex(a.url, ":"):]}, 403, fault.CodeForeignHost},
		{"foreign host on the dashboard", "GET", "/riverui/", nil, []string{"Host", "attacker.example", "Authorization", basic}, 403, fault.CodeForeignHost},
		{"loopback name", "GET", "/health", nil, []string{"Host", "localhost" + a.url[strings.LastIndex(a.url, ":"):]}, 200, ""},
		{"another port", "GET", "/health", nil, []string{"Host", "127.0.0.1:1"}, 403, fault.CodeForeignHost},
		{"cross-origin API post", "POST", "/v1/recover", map[string]any{}, []string{"Origin", "http://attacker.example"}, 403, fault.CodeCrossSiteRequest},
		{"null origin", "POST", "/v1/recover", map[string]any{}, []string{"Origin", "null"}, 403, fault.CodeCrossSiteRequest},
		{"cross-site fetch metadata", "POST", "/v1/recover", map[string]any{}, []string{"Sec-Fetch-Site", "cross-site"}, 403, fault.CodeCrossSiteRequest},
		{"same-site other port", "POST", "/v1/recover", map[string]any{}, []string{"Sec-Fetch-Site", "same-site"}, 403, fault.CodeCrossSiteRequest},
		{"same-origin browser post", "POST", "/v1/recover", map[string]any{}, []string{"Origin", origin, "Content-Type", "application/json"}, 200, ""},
		{"browser form body", "POST", "/v1/recover", []byte("{}"), []string{"Origin", origin, "Content-Type", "application/x-www-form-urlencoded"}, 415, fault.CodeUnsupportedMediaType},
		{"a CLI client (no Origin)", "POST", "/v1/recover", []byte("{}"), []string{"Content-Type", "application/x-www-form-urlencoded"}, 200, ""},
		{"dashboard post without origin", "POST", "/riverui/api/jobs/delete", []byte(`{"ids":["1"]}`), []string{"Authorization", basic}, 403, fault.CodeCrossSiteRequest},
		{"dashboard post cross-site", "POST", "/riverui/api/jobs/delete", []byte(`{"ids":["1"]}`),
			[]string{"Authorization", basic, "Origin", "http://attacker.example", "Content-Type", "text/plain"}, 403, fault.CodeCrossSiteRequest},
		{"dashboard form post", "POST", "/riverui/api/jobs/delete", []byte(`ids=1`),
			[]string{"Authorization", basic, "Origin", origin, "Content-Type", "multipart/form-data; boundary=x"}, 415, fault.CodeUnsupportedMediaType},
		{"dashboard page cross-site link", "GET", "/riverui/", nil, []string{"Authorization", basic, "Sec-Fetch-Site", "cross-site"}, 200, ""},
		{"dashboard text/plain from its own page", "POST", "/riverui/api/jobs/cancel", []byte(`{"ids":["1"]}`),
			[]string{"Authorization", basic, "Origin", origin, "Content-Type", "text/plain;charset=UTF-8"}, 415, fault.CodeUnsupportedMediaType},
		{"dashboard post without a content type", "POST", "/riverui/api/jobs/cancel", []byte(`{"ids":["1"]}`),
			[]string{"Authorization", basic, "Sec-Fetch-Site", "same-origin"}, 415, fault.CodeUnsupportedMediaType},
		{"dashboard JSON from its own page", "POST", "/riverui/api/jobs/cancel", []byte(`{"ids":["1"]}`),
			[]string{"Authorization", basic, "Origin", origin, "Content-Type", "application/json"}, 200, ""},
		{"dashboard bodyless PUT from its own page", "PUT", "/riverui/api/queues/solopi_managed_shards/pause", nil,
			[]string{"Authorization", basic, "Origin", origin}, 200, ""},
	} {
		r := a.do(c.method, c.path, c.body, c.headers...)
		if c.code == "" && c.status == 200 && strings.HasPrefix(c.path, "/riverui/api/") && r.status < 500 && r.status != 403 && r.status != 415 {
			continue // River answered: the guard let it through
		}
		if r.status != c.status || c.code != "" && r.body["errorCode"] != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.raw, c.status, c.code)
		}
		if c.code != "" && (r.body["success"] != false || r.body["error"] == "") {
			t.Errorf("%s: not an error object: %s", c.name, r.raw)
		}
	}
	// The dashboard's pages load the script that labels River's JSON
	// bodies, before River's own scripts; it needs the credentials too.
	page := a.do("GET", "/riverui/jobs", nil, "Authorization", basic, "Accept", "text/html", "If-Modified-Since", "Mon, 01 Jan 2035 00:00:00 GMT")
	script := `<script src="/riverui/solopi-json-fetch.js"></script>`
	if page.status != 200 || !strings.Contains(string(page.raw), script) ||
		strings.Index(string(page.raw), script) > strings.Index(string(page.raw), `type="module"`) {
		t.Fatalf("dashboard page %d: %s", page.status, page.raw)
	}
	if js := a.do("GET", "/riverui/solopi-json-fetch.js", nil, "Authorization", basic); js.status != 200 ||
		!strings.Contains(string(js.raw), "application/json") || !strings.HasPrefix(js.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("script %d %v", js.status, js.header)
	}
	a.do("GET", "/riverui/solopi-json-fetch.js", nil, "Authorization", "").want(t, 401, fault.CodeUnauthorized)
}
