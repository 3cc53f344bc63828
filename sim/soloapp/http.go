package soloapp

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// noValidListener is NanoHTTPD's fallback body; served as text/html for
// unknown or unhandled requests and as application/json for POST
// (docs/device-protocol.md#queries).
const noValidListener = `{"success": false, "error": "No Valid Listener"}`

// ServeHTTP is the read-only channel: GET /scheme/<action>?… on the device's
// loopback port. The status is always 200; docs/device-protocol.md#queries
// lists the bodies.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	write := func(contentType, body string) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(body))
	}
	if r.Method == http.MethodPost {
		write("application/json", noValidListener)
		return
	}
	a.Mu.Lock()
	ready := a.HttpReadyLocked()
	p := a.P
	a.Mu.Unlock()
	if !ready {
		write("text/html", noValidListener)
		return
	}
	action, found := strings.CutPrefix(r.URL.Path, protocol.HTTPPathPrefix)
	if !found || action == "" || strings.Contains(action, "/") {
		write("text/html", noValidListener)
		return
	}
	q := parseHTTPQuery(r.URL.RawQuery)
	ctx := r.Context()
	body, handled, _ := a.dispatch(ctx, p, core.ViaHTTP, action, q)
	if !handled {
		write("text/html", noValidListener)
		return
	}
	write("application/json", string(body))
}

// dispatch runs the resolver chain for one action. panicked reports a
// resolver exception, whose body is NanoHTTPD's hand-built, unescaped text.
func (a *App) dispatch(ctx context.Context, p *core.Process, via core.Transport, action string, q map[string]string) (body []byte, handled, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			body = []byte(fmt.Sprintf(`{"success": false, "error": "Process failed, throw exception: %v"}`, r))
			handled, panicked = true, true
		}
	}()
	var resp core.Obj
	switch action {
	case protocol.ActionHarness:
		resp, handled = a.harness(ctx, p, via, core.Params(q)), true
	case protocol.ActionReplay:
		resp, handled = a.replay(ctx, p, via, core.Params(q)), true
	case protocol.ActionAgent:
		resp, handled = a.Agent.Agent(ctx, p, via, core.Params(q)), true
	case protocol.ActionConfig:
		resp, handled = a.config(p, via, core.Params(q)), true
	case protocol.ActionStatus:
		resp, handled = a.status(ctx, p, core.Params(q))
	default:
		a.Mu.Lock()
		r := a.resolvers[action]
		a.Mu.Unlock()
		if r == nil {
			return nil, false, false
		}
		b, h := r(ctx, request{Action: action, Params: q, Protected: via == core.ViaAdb, Transport: via.String()})
		if !h {
			return nil, false, false
		}
		if len(b) == 0 {
			b = []byte(`{"status":"success"}`)
		}
		return b, true, false
	}
	if !handled {
		return nil, false, false
	}
	if len(resp) == 0 {
		return []byte(`{"status":"success"}`), true, false
	}
	return core.Encode(resp, false), true, false
}
