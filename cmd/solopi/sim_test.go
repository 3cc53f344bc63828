package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// cancelOnWrite cancels a context once something was written: `sim serve`
// prints its one object, then serves until interrupted.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.cancel()
	return w.buf.Write(p)
}

// TestSimServeFakeModelModes: the bare --fake-model keeps meaning the
// default mode, --fake-model=MODE picks a provider, and the printed env
// is what that mode needs.
func TestSimServeFakeModelModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arg, provider, env string }{
		{"--fake-model", fakemodel.ProviderOpenAI, ""},
		{"--fake-model=stream-only", fakemodel.ProviderStreamOnly, " SOLOPI_MODEL_STREAM=1"},
		{"--fake-model=azure", fakemodel.ProviderAzure, " SOLOPI_MODEL_API_STYLE=azure SOLOPI_MODEL_API_VERSION=" + fakemodel.AzureAPIVersion},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelOnWrite{cancel: cancel}
		code := run(ctx, []string{"solopi", "sim", "serve", tc.arg, "--no-adbd"}, cmdutil.Env{Stdout: w, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
		cancel()
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tc.arg, code, w.buf.String())
		}
		schematest.Validate(t, "sim-serve", w.buf.Bytes())
		var info simServeInfo
		json.Unmarshal(w.buf.Bytes(), &info)
		if fm := info.FakeModel; fm == nil || fm.Provider != tc.provider || fm.Env != chat.EnvModelBaseURL+"="+fm.BaseURL+tc.env {
			t.Fatalf("%s: %s", tc.arg, w.buf.String())
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"solopi", "sim", "serve", "--fake-model=bedrock"}, cmdutil.Env{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }}); code != 3 ||
		!strings.Contains(errb.String(), "stream-only") {
		t.Fatalf("an unknown mode: exit %d %s", code, errb.String())
	}
}

// The demo in process: the app runs itself on an in-process simulator.
func TestDemoInProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	r := inProc(t, "demo", "--artifacts", dir, "--time-scale", "100")
	if r.code != 0 {
		t.Fatalf("demo exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "demo", r.stdout)
	m := decodeObject(t, r)
	if d, _ := m["demo"].(map[string]any); d["simulated"] != true || d["device"] != "sim-demo" || m["state"] != "passed" {
		t.Fatalf("demo %v", m)
	}
	for _, bad := range []string{"0", "1001", "NaN"} {
		if r := inProc(t, "demo", "--time-scale", bad); r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"invalid_option"`) {
			t.Errorf("--time-scale %s: exit %d %s", bad, r.code, r.stdout)
		}
	}
}

// sim serve refuses what it must not start, before it starts anything.
func TestSimServeRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"--devices", "0"}, "invalid_option"},
		{[]string{"--devices", "65"}, "invalid_option"},
		{[]string{"--time-scale", "0"}, "invalid_option"},
		{[]string{"--host", "0.0.0.0"}, "unsafe_bind"},
	} {
		r := inProc(t, append([]string{"sim", "serve"}, c.args...)...)
		if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"`+c.code+`"`) {
			t.Errorf("%v: exit %d %s", c.args, r.code, r.stdout)
		}
		schematest.Validate(t, "error", r.stdout)
	}
}
