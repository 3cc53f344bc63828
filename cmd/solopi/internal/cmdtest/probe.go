package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/sim"
)

// Rig is a CLI on one fresh in-process simulated device.
type Rig struct {
	*CLI
	T   *testing.T
	Dev *sim.Device
}

// NewRig is a rig for cmds on a new device made from o.
func NewRig(t *testing.T, cmds commands, o sim.Options) *Rig {
	dev := Device(t, o)
	return &Rig{CLI: New(t, cmds, dev), T: t, Dev: dev}
}

// Cmd runs a command line, checks its exit code and its output against
// the schema named after the command (a handled error against "error"),
// and decodes it.
func (c *CLI) Cmd(code int, args ...string) map[string]any {
	c.t.Helper()
	return c.Expect(code, args[0], args...)
}

// launchCounter brings the counter app to the front of d.
func launchCounter(t testing.TB, d *sim.Device) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, stderr, code, err := d.Shell(ctx, "am start -W -n com.example.counter/.MainActivity"); err != nil || code != 0 {
		t.Fatalf("launch the counter: %v %d %s", err, code, stderr)
	}
}

// CounterOnScreen reads the counter from a fresh screenshot with the fake
// model's own vision (the test needs no access to the simulator's state).
func CounterOnScreen(t testing.TB, d *sim.Device) string {
	t.Helper()
	b, err := d.Exec(context.Background(), "screencap -p")
	if err != nil {
		t.Fatal(err)
	}
	s, err := agentloop.NewScreen(b, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fakemodel.FindControls(s.Image, "text", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
		if c.Label != "" {
			return c.Label
		}
	}
	return ""
}

// LogcatCount counts the device's logcat lines containing every part.
func LogcatCount(dev *sim.Device, parts ...string) int {
	n := 0
	for _, e := range dev.Phone.Logcat() {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e.Tag+": "+e.Msg, p)
		}
		if all {
			n++
		}
	}
	return n
}

// NoSecretIn fails the test when any blob, or any file under the dirs,
// contains the secret (an API key, a token).
func NoSecretIn(t testing.TB, secret string, blobs [][]byte, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				b, _ := os.ReadFile(p)
				blobs = append(blobs, b)
			}
			return nil
		})
	}
	for _, b := range blobs {
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("the secret appears in an output or a file: %.300s", b)
		}
	}
}

// Read is the file's content (the test fails without it).
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SubmitOverHTTP submits a task (plan and matrix files) to a managed
// control plane at url with the bearer token and checks that it was
// accepted with an owner token.
func SubmitOverHTTP(t testing.TB, url, token, plan, matrix, key string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"plan": json.RawMessage(Read(t, plan)), "matrix": json.RawMessage(Read(t, matrix)), "idempotencyKey": key})
	req, _ := http.NewRequest("POST", url+"/v1/tasks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(created), `"ownerToken":"`) {
		t.Fatalf("submit over HTTP: %d %s", resp.StatusCode, created)
	}
}

// CounterPhone is a ready device made from o, showing the counter app.
func CounterPhone(t testing.TB, o sim.Options) *sim.Device {
	t.Helper()
	d := Device(t, o)
	launchCounter(t, d)
	return d
}
