package managedcmd

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

func TestManagedStoreCommands(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "farm", "managed.sqlite") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testManagedCommands(t, db(t))
		})
	}
}

func testManagedCommands(t *testing.T, db string) {
	r0 := newRig(t, db, nil)
	plan, matrix, decisions := cmdtest.ManagedFiles(t)
	h := r0.managed(0, "managed-init")
	if h["ready"] != true || h["schemaVersion"] != float64(1) {
		t.Fatalf("init %v", h)
	}
	r0.managed(0, "managed-health")
	d := r0.managed(0, "managed-device-register", "--device-id", "pixel-8", "--device-serial", "SERIAL-1", "--api-level", "35",
		"--capability", "agent", "--capability", "verification", "--label", "tier=physical")
	if d["device"].(map[string]any)["health"] != "healthy" {
		t.Fatalf("register %v", d)
	}
	r0.managed(3, "managed-device-register", "--device-id", "pixel-9", "--device-serial", "SERIAL-1", "--api-level", "35")
	r0.managed(3, "managed-device-register", "--device-id", "p", "--device-serial", "S", "--api-level", "35", "--label", "a=1", "--label", "a=2")
	r0.managed(3, "managed-device-register", "--device-id", "p", "--device-serial", "S", "--api-level", "0")
	if l := r0.managed(0, "managed-device-list"); l["count"] != float64(1) {
		t.Fatalf("list %v", l)
	}

	submit := []string{"managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-1"}
	created := r0.managed(0, submit...)
	owner, _ := created["ownerToken"].(string)
	if owner == "" || created["idempotent"] != false {
		t.Fatalf("a generated owner token must be printed once: %v", created)
	}
	id := created["taskId"].(string)
	again := r0.managed(0, append(submit, "--owner-token", owner)...)
	if again["idempotent"] != true || again["ownerToken"] != nil || again["taskId"] != id {
		t.Fatalf("resubmit %v", again)
	}
	if e := r0.managed(3, append(submit, "--owner-token", owner, "--agent-decisions", decisions)...); e["errorCode"] != "idempotency_conflict" || e["taskId"] != id {
		t.Fatalf("conflict %v", e)
	}
	if e := r0.managed(3, append(submit, "--owner-token", "another-owner-1234567890")...); e["errorCode"] != "owner_mismatch" {
		t.Fatalf("foreign owner %v", e)
	}
	// The full verify-validate runs first: a plan whose fingerprint does
	// not match its content passes the store's own structural check but
	// is refused.
	bad := filepath.Join(t.TempDir(), "bad-plan.json")
	tree, _ := canonjson.Decode(cmdtest.Read(t, plan))
	tree.(map[string]any)["planFingerprint"] = strings.Repeat("0", 64)
	tampered, _ := canonjson.Marshal(tree)
	os.WriteFile(bad, tampered, 0o600)
	if e := r0.managed(3, "managed-submit", "--plan", bad, "--matrix", matrix, "--idempotency-key", "ci-2"); e["errorCode"] != "fingerprint_mismatch" {
		t.Fatalf("tampered plan %v", e)
	}
	r0.managed(3, "managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-3", "--max-retries", "11")
	// Vision oracles need a model; managed work has none.
	if e := r0.managed(3, "managed-submit", "--plan", visionOraclePlan(t), "--matrix", matrix, "--idempotency-key", "ci-4"); e["errorCode"] != fault.CodeVisionNotSupported {
		t.Fatalf("vision plan %v", e)
	}

	if st := r0.managed(0, "managed-status", "--task-id", id); st["status"] != "queued" {
		t.Fatalf("status %v", st)
	}
	if ev := r0.managed(0, "managed-events", "--task-id", id); len(ev["events"].([]any)) != 1 {
		t.Fatalf("events %v", ev)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	r := r0.managed(4, "managed-report", "--task-id", id, "--output", out)
	if r["success"] != false || r["terminal"] != false || r["output"] != out {
		t.Fatalf("report of a queued task %v", r)
	}
	written, _ := os.ReadFile(out)
	if err := schematest.NewSet().ValidateBytes("managed-report-file", written); err != nil {
		t.Fatal(err)
	}
	r0.managed(3, "managed-report", "--task-id", id, "--output", out)

	r0.managed(3, "managed-cancel", "--task-id", id, "--owner-token", "another-owner-1234567890")
	if c := r0.managed(0, "managed-cancel", "--task-id", id, "--owner-token", owner); c["status"] != "cancelled" {
		t.Fatalf("cancel %v", c)
	}
	if c := r0.managed(0, "managed-cancel", "--task-id", id, "--owner-token", owner); c["idempotent"] != true {
		t.Fatalf("second cancel %v", c)
	}
	if r := r0.managed(130, "managed-report", "--task-id", id); r["status"] != "cancelled" {
		t.Fatalf("report after cancel %v", r)
	}
	r0.managed(3, "managed-report", "--task-id", "task-unknown")
	r0.managed(0, "managed-recover")
	if p := r0.managed(0, "managed-purge", "--artifacts-root", t.TempDir()); len(p["purged"].([]any)) != 0 {
		t.Fatalf("purge %v", p)
	}
	if res := r0.Run("managed-purge", "--database", r0.db); res.Code != 3 || len(res.Stdout) != 0 || !strings.Contains(string(res.Stderr), "--artifacts-root") {
		t.Fatalf("managed-purge without --artifacts-root: exit %d %s %s", res.Code, res.Stdout, res.Stderr)
	}

	// Owner tokens are in no output but the creating one.
	for _, args := range [][]string{{"managed-events", "--task-id", id}, {"managed-report", "--task-id", id}, {"managed-status", "--task-id", id}} {
		r := r0.Run(append([]string{args[0], "--database", db}, args[1:]...)...)
		if bytes.Contains(r.Stdout, []byte(owner)) {
			t.Fatalf("%s prints the owner token", args[0])
		}
	}
}

func TestManagedRefusesUpstreamDatabase(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "upstream.sqlite")
	writeUpstreamDB(t, db)
	before, _ := os.ReadFile(db)
	if e := newRig(t, db, nil).managed(3, "managed-health"); e["errorCode"] != "unsupported_schema" {
		t.Fatalf("upstream database: %v", e)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Fatal("the upstream database was modified")
	}
}

// managed-serve refuses a non-loopback bind and a weak token before it
// listens; it serves the control plane until interrupted, printing its
// listening line first and its end object last (exit 130).
func TestManagedServe(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "managed.sqlite")
	r0 := newRig(t, db, nil)
	plan, matrix, _ := cmdtest.ManagedFiles(t)
	const token = "serve-token-1234567890abcd"
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"--bind", "0.0.0.0"}, "unsafe_bind"},
		{[]string{"--bind", "::"}, "unsafe_bind"},
		{[]string{"--bearer-token", "short"}, "invalid_bearer_token"},
	} {
		if e := r0.managed(3, append([]string{"managed-serve", "--bearer-token", token, "--port", "0"}, c.args...)...); e["errorCode"] != c.code {
			t.Fatalf("%v: %v", c.args, e)
		}
	}
	lines := &lineWriter{first: make(chan string, 1)}
	r0.Tee = lines
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan cmdtest.Result, 1)
	go func() {
		done <- r0.RunCtx(ctx, "managed-serve", "--database", db, "--bearer-token", token, "--port", "0")
	}()
	var first string
	select {
	case first = <-lines.first:
	case res := <-done:
		t.Fatalf("managed-serve ended: %d %s", res.Code, res.Stdout)
	}
	schematest.Validate(t, "managed-serve", []byte(strings.TrimSpace(first)))
	var l struct{ Listening struct{ URL string } }
	json.Unmarshal([]byte(first), &l)
	cmdtest.SubmitOverHTTP(t, l.Listening.URL, token, plan, matrix, "serve-1")
	cancel()
	res := <-done
	rest := strings.TrimPrefix(string(res.Stdout), first)
	if res.Code != 130 || !strings.Contains(rest, `"stopped":true`) {
		t.Fatalf("after the interrupt: exit %d %s", res.Code, res.Stdout)
	}
	schematest.Validate(t, "managed-serve", []byte(strings.TrimSpace(rest)))
	if strings.Contains(string(res.Stdout), token) || strings.Contains(string(res.Stderr), token) {
		t.Fatal("the bearer token was printed")
	}
}

// lineWriter hands over the first line written to it.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	first chan string
	sent  bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if s := w.buf.String(); !w.sent && strings.Contains(s, "\n") {
		w.sent = true
		w.first <- s[:strings.Index(s, "\n")+1]
	}
	return len(p), nil
}

// visionOraclePlan is a plan with vision oracles.
func visionOraclePlan(t *testing.T) string {
	t.Helper()
	return cmdtest.CompilePlan(t, cmdtest.Read(t, filepath.Join(cmdtest.Fixtures(), "..", "vision-requirement.json")))
}

// writeUpstreamDB writes what SoloPi's Python host CLI leaves: a metadata
// table with its schema version and its own tables, no River.
func writeUpstreamDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`PRAGMA journal_mode = WAL`,
		`CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO metadata VALUES ('schema_version', '1')`,
		`CREATE TABLE tasks (task_id TEXT PRIMARY KEY, status TEXT NOT NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// The commands that only read or act on an existing farm never create a
// store: a mistyped --database (or a directory) is refused with its own
// code, and nothing appears on disk.
func TestManagedReadOnlyCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo", "managed.sqlite")
	r := newRig(t, typo, nil)
	for _, args := range [][]string{
		{"managed-status", "--task-id", "task-00000000000000000000000000000000"},
		{"managed-health"}, {"managed-device-list"}, {"managed-recover"},
		{"managed-events", "--task-id", "task-00000000000000000000000000000000"},
		{"managed-report", "--task-id", "task-00000000000000000000000000000000"},
		{"managed-cancel", "--task-id", "task-00000000000000000000000000000000", "--owner-token", ownerToken},
		{"managed-purge", "--artifacts-root", dir},
	} {
		if e := r.managed(3, args...); e["errorCode"] != "database_not_found" || e["database"] != typo {
			t.Fatalf("%s on a mistyped path: %v", args[0], e)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a read-only command created %v", entries)
	}
	d := newRig(t, dir, nil)
	for _, name := range []string{"managed-status", "managed-init"} {
		args := []string{name}
		if name == "managed-status" {
			args = append(args, "--task-id", "task-00000000000000000000000000000000")
		}
		if e := d.managed(3, args...); e["errorCode"] != "database_is_directory" {
			t.Fatalf("%s on a directory: %v", name, e)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a command wrote into the directory: %v", entries)
	}
}

// managed-submit of a matrix no registered device can run is queued with a
// warning per target (schema-checked), not silently.
func TestManagedSubmitWarnsWithoutDevices(t *testing.T) {
	t.Parallel()
	r := newRig(t, filepath.Join(t.TempDir(), "managed.sqlite"), nil)
	plan, matrix, _ := cmdtest.ManagedFiles(t)
	task := r.managed(0, "managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-warn")
	ws, _ := task["warnings"].([]any)
	if task["status"] != "queued" || len(ws) != 1 || ws[0].(map[string]any)["code"] != "no_matching_device" {
		t.Fatalf("submit without devices: %v", task)
	}
	r.managed(0, "managed-device-register", "--device-id", "pixel-8", "--device-serial", "SERIAL-1", "--api-level", "35",
		"--capability", "agent", "--capability", "verification")
	again := r.managed(0, "managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-warn-2")
	if _, has := again["warnings"]; has {
		t.Fatalf("warnings with a matching healthy device: %v", again)
	}
}
