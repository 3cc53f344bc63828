package sim

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestControlEndpointInjectsFaults(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	post := func(path, body string) (int, string) { return controlPost(t, srv.URL+path, body) }
	d := f.Devices()[0]
	if code, body := post("/v1/devices/sim-0001/permission", `{"name":"accessibility","granted":false}`); code != 200 {
		t.Fatalf("permission: %d %s", code, body)
	}
	if d.App.Permission("accessibility") {
		t.Error("accessibility still granted")
	}
	cases := []struct {
		path, body string
		code       int
	}{
		{"/v1/devices/sim-0001/permission", `{"name":"nope","granted":true}`, 400},
		{"/v1/devices/sim-0001/permission", `{"bogus":1}`, 400},
		{"/v1/devices/sim-0001/no-such-fault", `{}`, 404},
		{"/v1/devices/sim-9999/restart-app", `{}`, 404},
		{"/v1/devices/sim-0001/adb-connect-outcome", `{"outcome":"fail","delayMs":10}`, 200},
		{"/v1/devices/sim-0001/adb-connect-outcome", `{"outcome":"sometimes"}`, 400},
		{"/v1/devices/sim-0001/transient-window", `{"durationMs":100}`, 200},
		{"/v1/devices/sim-0001/restart-app", ``, 200},
		{"/v1/devices/sim-0001/adb-state", `{"state":"offline"}`, 200},
	}
	for _, c := range cases {
		if code, body := post(c.path, c.body); code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.path, c.body, code, body, c.code)
		}
	}
	resp, err := http.Get(srv.URL + "/v1/devices")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %v", err)
	}
	resp.Body.Close()
	if len(faultNames()) < 20 {
		t.Errorf("only %d faults", len(faultNames()))
	}
}

// command-stall holds a shell command of the device (the host's evidence
// commands: screencap, logcat) until it is released or its caller leaves.
func TestControlStallsAShellCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, srv := controlFarm(t)
	post := func(body string) int {
		code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/command-stall", body)
		return code
	}
	for _, bad := range []string{`{"command":"screencap"}`, `{"command":"screencap","hang":true,"delayMs":5}`,
		`{"command":"no-such-tool","hang":true}`, `{"command":"screencap","release":true,"hang":true}`, `{"command":"screencap","delayMs":-1}`} {
		if code := post(bad); code != 400 {
			t.Errorf("%s: HTTP %d, want 400", bad, code)
		}
	}
	d := f.Devices()[0]
	if code := post(`{"command":"screencap","hang":true}`); code != 200 {
		t.Fatalf("hang: HTTP %d", code)
	}
	type result struct {
		out  []byte
		code int
		err  error
	}
	shell := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			out, _, code, err := d.Shell(ctx, "screencap -p")
			ch <- result{out, code, err}
		}()
		return ch
	}
	// A caller that gives up is not kept.
	gone, leave := context.WithCancel(ctx)
	ch := shell(gone)
	leave()
	if r := <-ch; r.err == nil || len(r.out) != 0 {
		t.Fatalf("abandoned stalled screencap: exit %d, %v, %d bytes", r.code, r.err, len(r.out))
	}
	ch = shell(ctx)
	if code := post(`{"command":"screencap","release":true}`); code != 200 {
		t.Fatalf("release: HTTP %d", code)
	}
	if r := <-ch; r.err != nil || r.code != 0 || !strings.HasPrefix(string(r.out), "\x89PNG") {
		t.Fatalf("released screencap: exit %d, %v", r.code, r.err)
	}
}

// controlPost posts a JSON body to a control route and returns the HTTP
// status and the answer.
func controlPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// controlFarm starts a one-device farm without adbd and its control
// endpoint; both stop with the test.
func controlFarm(t *testing.T) (*Farm, *httptest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	f, err := StartFarm(ctx, FarmOptions{TimeScale: 50, NoAdbd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	srv := httptest.NewServer(f.ControlHandler())
	t.Cleanup(srv.Close)
	return f, srv
}

// fail-replays takes {"caseName", "count"} strictly and answers what is due.
func TestControlFailReplays(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	url := srv.URL + "/v1/devices/sim-0001/fail-replays"
	for _, bad := range []string{``, `{"caseName":"a"}`, `{"count":1}`, `{"caseName":"a","count":-1}`, `{"caseName":"a","count":1,"extra":true}`} {
		if code, body := controlPost(t, url, bad); code != 400 {
			t.Errorf("%q: HTTP %d %s, want 400", bad, code, body)
		}
	}
	code, body := controlPost(t, url, `{"caseName":"login-ok","count":2}`)
	if code != 200 || !strings.Contains(body, `"pending":2`) {
		t.Fatalf("fail-replays: %d %s", code, body)
	}
	if n := f.Devices()[0].App.PendingReplayFailures("login-ok"); n != 2 {
		t.Fatalf("%d due, want 2", n)
	}
}
