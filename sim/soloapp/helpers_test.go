package soloapp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

const testScale = 100

type rig struct {
	t     *testing.T
	app   *App
	phone *fakePhone
	clk   *clock.Scaled
}

// newRig starts an app with all permissions and waits for its HTTP server.
func newRig(t *testing.T, cfg core.Config) *rig {
	t.Helper()
	return newRigScale(t, cfg, testScale)
}

// newRigScale is newRig with a slower clock, for tests whose assertions
// depend on the host reacting within a device-time window.
func newRigScale(t *testing.T, cfg core.Config, scale float64) *rig {
	t.Helper()
	ph := newFakePhone()
	clk := clock.NewScaled(scale)
	r := &rig{t: t, app: New(cfg, ph, clk), phone: ph, clk: clk}
	t.Cleanup(func() { r.app.Mu.Lock(); p := r.app.P; r.app.Mu.Unlock(); p.Cancel() })
	r.waitReady()
	return r
}

func (r *rig) waitReady() {
	r.t.Helper()
	r.eventually("http ready", 10*time.Second, r.app.HTTPReady)
}

// eventually polls cond (real time) until it holds or timeout (device time).
func (r *rig) eventually(what string, device time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(r.clk.Real(device) + 2*time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sleep waits d of device time.
func (r *rig) sleep(d time.Duration) { _ = r.clk.Sleep(context.Background(), d) }

// queryPath is the host's /scheme/<action>?<kv>.
func queryPath(action string, kv ...string) string {
	return protocol.QueryPath(action, protocol.P(kv...))
}

// raw performs an HTTP GET through ServeHTTP.
func (r *rig) raw(method, target string) (string, string, int) {
	req := httptest.NewRequest(method, target, nil)
	w := httptest.NewRecorder()
	r.app.ServeHTTP(w, req)
	return w.Header().Get("Content-Type"), w.Body.String(), w.Code
}

// get queries /scheme/<action>?<kv> and decodes the JSON object.
func (r *rig) get(action string, kv ...string) map[string]any {
	r.t.Helper()
	ct, body, code := r.raw(http.MethodGet, queryPath(action, kv...))
	if code != 200 || ct != "application/json" {
		r.t.Fatalf("GET %s %v: %d %s %s", action, kv, code, ct, body)
	}
	return decode(r.t, body)
}

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad JSON %q: %v", body, err)
	}
	return m
}

// adb runs a mutation through the protected activity (results invisible).
func (r *rig) adb(action string, kv ...string) {
	r.t.Helper()
	uri := protocol.MutationURI(action, protocol.P(kv...))
	if err := r.app.HandleActivity(context.Background(), solopiPkg+"/"+protocol.AdbSchemeActivity, uri); err != nil {
		r.t.Fatal(err)
	}
}

// direct runs a request through the resolver chain with the given
// transport and returns the (normally invisible) answer.
func (r *rig) direct(via core.Transport, action string, kv ...string) map[string]any {
	r.t.Helper()
	q := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		q[kv[i]] = kv[i+1]
	}
	r.app.Mu.Lock()
	p := r.app.P
	r.app.Mu.Unlock()
	body, handled, _ := r.app.dispatch(context.Background(), p, via, action, q)
	if !handled {
		r.t.Fatalf("%s %v not handled", action, kv)
	}
	return decode(r.t, string(body))
}

func (r *rig) mutate(action string, kv ...string) map[string]any {
	r.t.Helper()
	return r.direct(core.ViaAdb, action, kv...)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func sub(m map[string]any, k string) map[string]any { s, _ := m[k].(map[string]any); return s }

func num(m map[string]any, k string) int64 {
	n, _ := m[k].(json.Number)
	v, _ := n.Int64()
	return v
}

// wantErr checks an E1 answer (docs/device-protocol.md#response-envelopes).
func wantErr(t *testing.T, m map[string]any, code, msg string) {
	t.Helper()
	if m["success"] != false || str(m, "errorCode") != code || (msg != "" && str(m, "error") != msg) {
		t.Fatalf("want %s %q, got %v", code, msg, m)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
