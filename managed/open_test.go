package managed_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/internal/tooltest"
	"github.com/solopi-dev/solopi/managed"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

func wantOpenCode(t *testing.T, database string, opts managed.Options, code string) *fault.Error {
	t.Helper()
	s, err := managed.Open(context.Background(), database, opts)
	if err == nil {
		s.Close()
		t.Fatalf("open %s: no error, want %s", database, code)
	}
	f := fault.From(err)
	if f.Code != code {
		t.Fatalf("open %s: %v (code %s), want %s", database, err, f.Code, code)
	}
	if strings.Contains(f.Message, "unsupported_schema") || f.Message == "" {
		t.Fatalf("message %q", f.Message)
	}
	return f
}

// A store opened for an existing farm only (the read-only commands) never
// creates or changes anything: a mistyped path, a directory, an empty
// file, a file of no database.
func TestOpenExistingCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := managed.Options{Existing: true}

	typo := filepath.Join(dir, "sub", "typo.sqlite")
	wantOpenCode(t, typo, existing, fault.CodeDatabaseNotFound)
	if _, err := os.Stat(filepath.Dir(typo)); !os.IsNotExist(err) {
		t.Fatalf("the directory of a mistyped path was created: %v", err)
	}

	for _, opts := range []managed.Options{existing, {}} {
		wantOpenCode(t, dir, opts, fault.CodeDatabaseIsDirectory)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("opening a directory wrote into it: %v", entries)
	}

	empty := filepath.Join(dir, "empty.sqlite")
	os.WriteFile(empty, nil, 0o600)
	wantOpenCode(t, empty, existing, fault.CodeDatabaseNotInitialized)
	if info, _ := os.Stat(empty); info.Size() != 0 {
		t.Fatalf("an empty file was initialised: %d bytes", info.Size())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files appeared beside the empty database: %v", entries)
	}

	// The store managed-init created opens, and reads.
	db := filepath.Join(dir, "farm.sqlite")
	s, err := managed.Open(context.Background(), db, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = managed.Open(context.Background(), db, existing)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h, err := s.Health(context.Background()); err != nil || !h.Ready {
		t.Fatalf("health %+v %v", h, err)
	}
}

// A file that is not a SQLite database, or is damaged, is database_corrupt
// and left untouched; another application's database is unsupported_schema.
func TestOpenCorruptAndForeign(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.sqlite")
	junk := bytes.Repeat([]byte("not a database, "), 512)
	os.WriteFile(garbage, junk, 0o600)
	for _, opts := range []managed.Options{{}, {Existing: true}} {
		wantOpenCode(t, garbage, opts, fault.CodeDatabaseCorrupt)
	}
	if b, _ := os.ReadFile(garbage); !bytes.Equal(b, junk) {
		t.Fatal("the corrupt file was changed")
	}

	// A real store whose pages were overwritten past the header.
	damaged := filepath.Join(dir, "damaged.sqlite")
	s, err := managed.Open(context.Background(), damaged, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, _ := os.ReadFile(damaged)
	for i := 100; i < len(b); i++ {
		b[i] = 0xA5
	}
	os.WriteFile(damaged, b, 0o600)
	os.Remove(damaged + "-wal")
	os.Remove(damaged + "-shm")
	wantOpenCode(t, damaged, managed.Options{Existing: true}, fault.CodeDatabaseCorrupt)

	foreign := filepath.Join(dir, "foreign.sqlite")
	raw, _ := sql.Open("sqlite", "file:"+foreign)
	if _, err := raw.Exec(`CREATE TABLE invoices (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	wantOpenCode(t, foreign, managed.Options{}, fault.CodeUnsupportedSchema)
}

// A store another process holds the write lock of, past the busy timeout
// (10 s by default, 200 ms here), is database_locked; a read-only command
// still reads it (WAL).
func TestOpenLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "farm.sqlite")
	s, err := managed.Open(context.Background(), path, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	wantOpenCode(t, path, managed.Options{BusyTimeout: 200 * time.Millisecond}, fault.CodeDatabaseLocked)
	r, err := managed.Open(context.Background(), path, managed.Options{Existing: true, BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("read-only open of a locked store: %v", err)
	}
	defer r.Close()
	if _, err := r.Devices(context.Background()); err != nil {
		t.Fatalf("read a locked store: %v", err)
	}
}

// makeReadOnly makes path unwritable even for root: an immutable file
// (chattr +i) as root, mode 0444 otherwise; undone when the test ends.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o444); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		tooltest.Missing(t, "cannot make %s immutable as root (chattr: %v %s)", path, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// A store whose file, or whose directory, cannot be written is
// database_read_only for a command that writes; a read-only file still
// serves the read-only commands.
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "farm.sqlite")
		s, err := managed.Open(context.Background(), path, managed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		makeReadOnly(t, path)
		wantOpenCode(t, path, managed.Options{}, fault.CodeDatabaseReadOnly)
		r, err := managed.Open(context.Background(), path, managed.Options{Existing: true})
		if err != nil {
			t.Fatalf("read-only command on a read-only file: %v", err)
		}
		defer r.Close()
		if _, err := r.Health(context.Background()); err != nil {
			t.Fatalf("health of a read-only file: %v", err)
		}
		// A write through it says why it cannot be done.
		_, err = r.RegisterDevice(context.Background(), managed.DeviceSpec{DeviceID: "d", Serial: "S", APILevel: 30})
		if fault.CodeOf(err) != fault.CodeDatabaseReadOnly {
			t.Fatalf("a write to a read-only store: %v (%s)", err, fault.CodeOf(err))
		}
	})
	t.Run("new file in a read-only directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		makeReadOnly(t, dir)
		wantOpenCode(t, filepath.Join(dir, "farm.sqlite"), managed.Options{}, fault.CodeDatabaseReadOnly)
	})
	t.Run("store in a directory made read-only", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "farm.sqlite")
		s, err := managed.Open(context.Background(), path, managed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		makeReadOnly(t, dir)
		wantOpenCode(t, path, managed.Options{}, fault.CodeDatabaseReadOnly)
		// SQLite cannot create the WAL's -shm file there; a read-only
		// command still reads the store (as immutable), a write says why
		// it cannot.
		r, err := managed.Open(context.Background(), path, managed.Options{Existing: true})
		if err != nil {
			t.Fatalf("read-only command on a store in a read-only directory: %v", err)
		}
		defer r.Close()
		if h, err := r.Health(context.Background()); err != nil || !h.Ready {
			t.Fatalf("health %+v %v", h, err)
		}
		_, err = r.RegisterDevice(context.Background(), managed.DeviceSpec{DeviceID: "d", Serial: "S", APILevel: 30})
		if fault.CodeOf(err) != fault.CodeDatabaseReadOnly {
			t.Fatalf("a write to a read-only store: %v (%s)", err, fault.CodeOf(err))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("files appeared beside the store: %v", entries)
		}
	})
}

// PostgreSQL's refusals name their cause: a search_path schema that does
// not exist, an unknown role, an unknown database, nobody listening on the
// port, a schema never initialised for a read-only command.
func TestOpenPostgresErrors(t *testing.T) {
	t.Parallel()
	base := pgtest.Server(t)
	with := func(mutate func(u *url.URL)) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		mutate(u)
		return u.String()
	}
	missingSchema := with(func(u *url.URL) {
		q := u.Query()
		q.Set("search_path", "solopi_no_such_schema")
		u.RawQuery = q.Encode()
	})
	for _, opts := range []managed.Options{{}, {Existing: true}} {
		f := wantOpenCode(t, missingSchema, opts, fault.CodeDatabaseSchemaNotFound)
		if !strings.Contains(f.Message, "solopi_no_such_schema") {
			t.Fatalf("the message does not name the search_path: %q", f.Message)
		}
	}
	wantOpenCode(t, with(func(u *url.URL) { u.User = url.UserPassword("solopi_no_such_role", "pw-secret-123") }), managed.Options{}, fault.CodeDatabaseAuthFailed)
	wantOpenCode(t, with(func(u *url.URL) { u.Path = "/solopi_no_such_database" }), managed.Options{}, fault.CodeDatabaseNotFound)
	f := wantOpenCode(t, with(func(u *url.URL) { u.Host = "127.0.0.1:1" }), managed.Options{}, fault.CodeDatabaseUnreachable)
	if !strings.Contains(f.Message, "127.0.0.1:1") {
		t.Fatalf("the message does not name the address: %q", f.Message)
	}
	wantOpenCode(t, pgtest.Schema(t), managed.Options{Existing: true}, fault.CodeDatabaseNotInitialized)

	// A role that may not use the schema, then one that may use it but not
	// create in it.
	schemaURL := pgtest.Schema(t)
	su, _ := url.Parse(schemaURL)
	schema := su.Query().Get("search_path")
	role := "solopi_noperm_" + schema[len("solopi_test_"):]
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE ROLE ` + role + ` LOGIN PASSWORD 'pw-secret-123'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		admin.Exec(`DROP OWNED BY ` + role)
		admin.Exec(`DROP ROLE ` + role)
	})
	su.User = url.UserPassword(role, "pw-secret-123")
	f = wantOpenCode(t, su.String(), managed.Options{}, fault.CodeDatabasePermissionDenied)
	if !strings.Contains(f.Message, schema) || strings.Contains(fmt.Sprint(f.Fields()), "pw-secret-123") {
		t.Fatalf("the refusal names no schema, or shows the password: %v", f.Fields())
	}
	if _, err := admin.Exec(`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role); err != nil {
		t.Fatal(err)
	}
	f = wantOpenCode(t, su.String(), managed.Options{}, fault.CodeDatabasePermissionDenied)
	t.Logf("without CREATE: %s", f.Message)
	if strings.Contains(fmt.Sprint(f.Fields()), "pw-secret-123") {
		t.Fatalf("the refusal shows the password: %v", f.Fields())
	}
}
