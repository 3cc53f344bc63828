package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/managedcmd"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed/devicehost"
	"github.com/solopi-dev/solopi/schemas"
)

// managedFiles compiles the counter-success requirement into a plan and
// writes the upstream fixture matrix and a decisions file.
func managedFiles(t *testing.T) (plan, matrix, decisions string) {
	t.Helper()
	dir := t.TempDir()
	plan = filepath.Join(dir, "plan.json")
	if r := runBinary(t, nil, "verify-compile", "--file", "../../verify/testdata/solopi-ai/counter-success.json", "--output", plan); r.code != 0 {
		t.Fatalf("verify-compile: %s", r.stdout)
	}
	matrix = filepath.Join(dir, "matrix.json")
	os.WriteFile(matrix, []byte(`[{"id":"android-agent","replicas":1,"selector":{"platform":"android","capabilities":["agent","verification"]}}]`), 0o600)
	decisions = filepath.Join(dir, "decisions.json")
	os.WriteFile(decisions, []byte(`{"explore":[{"action":"done"}]}`), 0o600)
	return plan, matrix, decisions
}

// managedCLI runs one managed command, checks its exit code and validates
// its stdout against the command's schema.
func managedCLI(t *testing.T, db string, wantCode int, args ...string) map[string]any {
	t.Helper()
	args = append(args[:1:1], append([]string{"--database", db}, args[1:]...)...)
	r := runBinary(t, nil, args...)
	if r.code != wantCode {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", args[0], r.code, wantCode, r.stdout, r.stderr)
	}
	schemas.Validate(t, args[0], r.stdout)
	return decodeObject(t, r)
}

func TestManagedCommandsEndToEnd(t *testing.T) {
	for name, db := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "farm", "managed.sqlite") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	} {
		t.Run(name, func(t *testing.T) { testManagedCommands(t, db(t)) })
	}
}

func testManagedCommands(t *testing.T, db string) {
	plan, matrix, decisions := managedFiles(t)
	h := managedCLI(t, db, 0, "managed-init")
	if h["ready"] != true || h["schemaVersion"] != float64(1) {
		t.Fatalf("init %v", h)
	}
	managedCLI(t, db, 0, "managed-health")
	d := managedCLI(t, db, 0, "managed-device-register", "--device-id", "pixel-8", "--device-serial", "SERIAL-1", "--api-level", "35",
		"--capability", "agent", "--capability", "verification", "--label", "tier=physical")
	if d["device"].(map[string]any)["health"] != "healthy" {
		t.Fatalf("register %v", d)
	}
	managedCLI(t, db, 3, "managed-device-register", "--device-id", "pixel-9", "--device-serial", "SERIAL-1", "--api-level", "35")
	managedCLI(t, db, 3, "managed-device-register", "--device-id", "p", "--device-serial", "S", "--api-level", "35", "--label", "a=1", "--label", "a=2")
	managedCLI(t, db, 3, "managed-device-register", "--device-id", "p", "--device-serial", "S", "--api-level", "0")
	if l := managedCLI(t, db, 0, "managed-device-list"); l["count"] != float64(1) {
		t.Fatalf("list %v", l)
	}

	submit := []string{"managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-1"}
	created := managedCLI(t, db, 0, submit...)
	owner, _ := created["ownerToken"].(string)
	if owner == "" || created["idempotent"] != false {
		t.Fatalf("a generated owner token must be printed once: %v", created)
	}
	id := created["taskId"].(string)
	again := managedCLI(t, db, 0, append(submit, "--owner-token", owner)...)
	if again["idempotent"] != true || again["ownerToken"] != nil || again["taskId"] != id {
		t.Fatalf("resubmit %v", again)
	}
	if e := managedCLI(t, db, 3, append(submit, "--owner-token", owner, "--agent-decisions", decisions)...); e["errorCode"] != "idempotency_conflict" || e["taskId"] != id {
		t.Fatalf("conflict %v", e)
	}
	if e := managedCLI(t, db, 3, append(submit, "--owner-token", "another-owner-1234567890")...); e["errorCode"] != "owner_mismatch" {
		t.Fatalf("foreign owner %v", e)
	}
	// The full verify-validate runs first: a plan whose fingerprint does
	// not match its content passes the store's own structural check but
	// is refused.
	bad := filepath.Join(t.TempDir(), "bad-plan.json")
	tree, _ := canonjson.Decode(mustRead(t, plan))
	tree.(map[string]any)["planFingerprint"] = strings.Repeat("0", 64)
	tampered, _ := canonjson.Marshal(tree)
	os.WriteFile(bad, tampered, 0o600)
	if e := managedCLI(t, db, 3, "managed-submit", "--plan", bad, "--matrix", matrix, "--idempotency-key", "ci-2"); e["errorCode"] != "fingerprint_mismatch" {
		t.Fatalf("tampered plan %v", e)
	}
	managedCLI(t, db, 3, "managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", "ci-3", "--max-retries", "11")
	// Vision oracles need a model; managed work has none.
	if e := managedCLI(t, db, 3, "managed-submit", "--plan", visionOraclePlan(t), "--matrix", matrix, "--idempotency-key", "ci-4"); e["errorCode"] != devicehost.CodeVisionNotSupported {
		t.Fatalf("vision plan %v", e)
	}

	if st := managedCLI(t, db, 0, "managed-status", "--task-id", id); st["status"] != "queued" {
		t.Fatalf("status %v", st)
	}
	if ev := managedCLI(t, db, 0, "managed-events", "--task-id", id); len(ev["events"].([]any)) != 1 {
		t.Fatalf("events %v", ev)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	r := managedCLI(t, db, 4, "managed-report", "--task-id", id, "--output", out)
	if r["success"] != false || r["terminal"] != false || r["output"] != out {
		t.Fatalf("report of a queued task %v", r)
	}
	written, _ := os.ReadFile(out)
	if err := schemas.NewSet().ValidateBytes("managed-report-file", written); err != nil {
		t.Fatal(err)
	}
	managedCLI(t, db, 3, "managed-report", "--task-id", id, "--output", out)

	managedCLI(t, db, 3, "managed-cancel", "--task-id", id, "--owner-token", "another-owner-1234567890")
	if c := managedCLI(t, db, 0, "managed-cancel", "--task-id", id, "--owner-token", owner); c["status"] != "cancelled" {
		t.Fatalf("cancel %v", c)
	}
	if c := managedCLI(t, db, 0, "managed-cancel", "--task-id", id, "--owner-token", owner); c["idempotent"] != true {
		t.Fatalf("second cancel %v", c)
	}
	if r := managedCLI(t, db, 130, "managed-report", "--task-id", id); r["status"] != "cancelled" {
		t.Fatalf("report after cancel %v", r)
	}
	managedCLI(t, db, 3, "managed-report", "--task-id", "task-unknown")
	managedCLI(t, db, 0, "managed-recover")
	if p := managedCLI(t, db, 0, "managed-purge", "--artifacts-root", t.TempDir()); len(p["purged"].([]any)) != 0 {
		t.Fatalf("purge %v", p)
	}
	managedCLI(t, db, 3, "managed-purge")

	// Owner tokens are in no output but the creating one.
	for _, args := range [][]string{{"managed-events", "--task-id", id}, {"managed-report", "--task-id", id}, {"managed-status", "--task-id", id}} {
		r := runBinary(t, nil, append([]string{args[0], "--database", db}, args[1:]...)...)
		if bytes.Contains(r.stdout, []byte(owner)) {
			t.Fatalf("%s prints the owner token", args[0])
		}
	}
}

func TestManagedRefusesUpstreamDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "upstream.sqlite")
	writeUpstreamDB(t, db)
	before, _ := os.ReadFile(db)
	r := runBinary(t, []string{managedcmd.DBEnv + "=" + db}, "managed-health")
	if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"unsupported_schema"`) {
		t.Fatalf("upstream database: exit %d %s", r.code, r.stdout)
	}
	schemas.Validate(t, "managed-health", r.stdout)
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Fatal("the upstream database was modified")
	}
}

func TestManagedServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "managed.sqlite")
	plan, matrix, _ := managedFiles(t)
	const token = "serve-token-1234567890abcd"
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"--bind", "0.0.0.0"}, "unsafe_bind"},
		{[]string{"--bind", "::"}, "unsafe_bind"},
		{[]string{"--bearer-token", "short"}, "invalid_bearer_token"},
	} {
		args := append([]string{"managed-serve", "--database", db, "--bearer-token", token, "--port", "0"}, c.args...)
		r := runBinary(t, nil, args...)
		if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"`+c.code+`"`) {
			t.Fatalf("%v: exit %d %s", c.args, r.code, r.stdout)
		}
	}
	for _, bind := range []string{"127.0.0.1", "::1"} {
		t.Run(bind, func(t *testing.T) {
			cmd := exec.Command(binPath, "managed-serve", "--database", db, "--bind", bind, "--port", "0")
			cmd.Env = append(os.Environ(), "SOLOPI_MANAGED_BEARER_TOKEN="+token)
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewReader(stdout)
			first, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("no listening line: %v; stderr %s", err, stderr.String())
			}
			schemas.Validate(t, "managed-serve", bytes.TrimSpace(first))
			var l struct{ Listening struct{ URL string } }
			json.Unmarshal(first, &l)

			body, _ := json.Marshal(map[string]any{"plan": json.RawMessage(mustRead(t, plan)), "matrix": json.RawMessage(mustRead(t, matrix)),
				"idempotencyKey": "serve-" + strings.ReplaceAll(bind, ":", "x")})
			req, _ := http.NewRequest("POST", l.Listening.URL+"/v1/tasks", bytes.NewReader(body))
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

			cmd.Process.Signal(syscall.SIGINT)
			rest, _ := io.ReadAll(lines)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit after SIGINT: %v; stderr %s", err, stderr.String())
			}
			schemas.Validate(t, "managed-serve", bytes.TrimSpace(rest))
			if bytes.Contains(rest, []byte(token)) || bytes.Contains(first, []byte(token)) || strings.Contains(stderr.String(), token) {
				t.Fatal("the bearer token was printed")
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
