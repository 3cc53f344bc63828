package devicecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// inspect --serve --record-to: the command announces its page on stderr,
// records a click made through the page, and at the interrupt prints its
// final result (exit 0) with the case file written. The owner token of
// the Agent session appears nowhere.
func TestInspectServeRecordsUntilInterrupted(t *testing.T) {
	// Not parallel: inspectorStarted is a package hook.
	r := &rig{&cmdtest.Rig{CLI: cmdtest.New(t, Commands, cmdtest.CounterPhone(t, sim.Options{})), T: t}}
	file := filepath.Join(t.TempDir(), "served.json")
	urls := make(chan string, 1)
	inspectorStarted = func(u string) { urls <- u }
	t.Cleanup(func() { inspectorStarted = nil })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan cmdtest.Result, 1)
	go func() { done <- r.RunCtx(ctx, "inspect", "--serve", "--record-to", file) }()
	var page string
	select {
	case page = <-urls:
	case res := <-done:
		t.Fatalf("inspect --serve ended: exit %d %s %s", res.Code, res.Stdout, res.Stderr)
	case <-time.After(60 * time.Second):
		t.Fatal("inspect --serve never listened")
	}
	u, _ := url.Parse(page)
	base, token := "http://"+u.Host, u.Query().Get("token")
	var snap struct {
		Seq   int `json:"seq"`
		Nodes []struct {
			Index      int    `json:"index"`
			ResourceID string `json:"resourceId"`
		} `json:"nodes"`
	}
	for i := 0; snap.Seq == 0; i++ {
		if i == 50 {
			t.Fatal("the inspector never showed a screen")
		}
		getJSON(t, base+"/snapshot?token="+token, &snap)
	}
	node := -1
	for _, n := range snap.Nodes {
		if strings.HasSuffix(n.ResourceID, ":id/increment_button") {
			node = n.Index
		}
	}
	body := `{"seq":` + itoa(snap.Seq) + `,"node":` + itoa(node) + `,"action":"click"}`
	resp, err := http.Post(base+"/act?token="+token, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("act: %d %s", resp.StatusCode, b)
	}
	cancel() // Ctrl-C
	res := <-done
	if res.Code != 0 {
		t.Fatalf("exit %d: %s %s", res.Code, res.Stdout, res.Stderr)
	}
	schematest.Validate(t, "inspect-serve", res.Stdout)
	line, _, _ := bytes.Cut(res.Stderr, []byte("\n"))
	schematest.Validate(t, "inspect-serve", line)
	if !bytes.Contains(line, []byte(page)) {
		t.Fatalf("stderr does not announce %s: %s", page, res.Stderr)
	}
	m := res.Object(t)
	rec := cmdtest.Obj(m, "recording")
	if cmdtest.Num(rec, "stepsAdded") != 1 || cmdtest.Str(rec, "file") != file || cmdtest.Str(m, "url") != page {
		t.Fatalf("result %s", res.Stdout)
	}
	written, err := os.ReadFile(file)
	if err != nil || !bytes.Contains(written, []byte(`"CLICK"`)) {
		t.Fatalf("the case file: %v %s", err, written)
	}
	for _, blob := range [][]byte{res.Stdout, res.Stderr, written} {
		if bytes.Contains(blob, []byte("ownerToken")) {
			t.Fatalf("an output names the owner token: %s", blob)
		}
	}
}

// A --record-to that cannot be written is a JSON error before anything
// listens; plain inspect prints the tree as before.
func TestInspectRecordToRefused(t *testing.T) {
	t.Parallel()
	r := &rig{&cmdtest.Rig{CLI: cmdtest.New(t, Commands, cmdtest.CounterPhone(t, sim.Options{})), T: t}}
	m := r.Expect(3, "error", "inspect", "--serve", "--record-to", t.TempDir())
	if cmdtest.Str(m, "errorCode") != "invalid_output_path" {
		t.Fatalf("a directory as --record-to: %v", m)
	}
	notCase := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(notCase, []byte(`{"hello":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := r.Expect(3, "error", "inspect", "--record-to", notCase); !strings.HasPrefix(cmdtest.Str(m, "errorCode"), "invalid_") && cmdtest.Str(m, "errorCode") != "case_schema_violation" {
		t.Fatalf("a file that is not a case: %v", m)
	}
	if m := r.Cmd(0, "inspect"); cmdtest.Obj(m, "page") == nil {
		t.Fatalf("inspect: %v", m)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
