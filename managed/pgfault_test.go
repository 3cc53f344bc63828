package managed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/solopi-dev/solopi/fault"
)

// A PostgreSQL server nobody answers for is database_unreachable naming
// the address, without the URL's password anywhere (no server needed).
func TestOpenPostgresUnreachableHidesThePassword(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), "postgres://solopi:pw-secret-42@127.0.0.1:1/farm?connect_timeout=5", Options{})
	f := fault.From(err)
	if f.Code != fault.CodeDatabaseUnreachable || !strings.Contains(f.Message, "127.0.0.1:1") {
		t.Fatalf("open: %v", err)
	}
	if strings.Contains(f.Message+fmt.Sprint(f.Fields()), "pw-secret-42") {
		t.Fatalf("the password shows: %s %v", f.Message, f.Fields())
	}
	if _, err := Open(context.Background(), "postgres://solopi@127.0.0.1:1/farm?pool_max_conns=nope", Options{}); fault.CodeOf(err) != fault.CodeDatabaseError {
		t.Fatalf("an invalid URL: %v", err)
	}
}

// The server's SQLSTATE names the cause; the password never reaches the
// message, even when the server repeats it.
func TestPgFaultNamesTheCause(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig("postgres://farm:pw-secret-42@db.example:5432/farm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sqlstate, code string
	}{
		{"28P01", fault.CodeDatabaseAuthFailed},
		{"28000", fault.CodeDatabaseAuthFailed},
		{"3D000", fault.CodeDatabaseNotFound},
		{"3F000", fault.CodeDatabaseSchemaNotFound},
		{"42501", fault.CodeDatabasePermissionDenied},
		{"25006", fault.CodeDatabaseReadOnly},
		{"57P03", fault.CodeDatabaseUnreachable},
		{"53300", fault.CodeDatabaseUnreachable},
		{"22P02", fault.CodeDatabaseError},
	} {
		pe := &pgconn.PgError{Code: c.sqlstate, Message: "password pw-secret-42 refused"}
		f := fault.From(pgFault(fmt.Errorf("ping: %w", pe), cfg, "postgres://farm@db.example:5432/farm", "cannot connect"))
		if f.Code != c.code || f.Fields()["sqlstate"] != c.sqlstate {
			t.Errorf("SQLSTATE %s: %s %v, want %s", c.sqlstate, f.Code, f.Fields(), c.code)
		}
		if strings.Contains(f.Message, "pw-secret-42") {
			t.Errorf("SQLSTATE %s shows the password: %s", c.sqlstate, f.Message)
		}
	}
	// A database error of ours over a SQLSTATE keeps its text and gains
	// the SQLSTATE.
	generic := fault.New(fault.Transport, fault.CodeDatabaseError, "cannot claim")
	f := fault.From(pgFault(errors.Join(generic, &pgconn.PgError{Code: "22P02"}), cfg, "w", "d"))
	if f.Code != fault.CodeDatabaseError || f.Message != "cannot claim" || f.Fields()["sqlstate"] != "22P02" {
		t.Errorf("our error under a SQLSTATE: %s %v", f.Code, f.Fields())
	}
	// A typed refusal passes unchanged; a cancellation is not a database
	// error.
	ours := storeError(fault.CodeDatabaseNotInitialized, "not initialised")
	if err := pgFault(ours, cfg, "w", "d"); fault.CodeOf(err) != fault.CodeDatabaseNotInitialized {
		t.Errorf("a typed refusal became %v", err)
	}
	if err := pgFault(context.Canceled, cfg, "w", "d"); err != context.Canceled {
		t.Errorf("a cancellation became %v", err)
	}
	if f := fault.From(pgFault(errors.New("tls: pw-secret-42 bad"), cfg, "w", "cannot connect")); f.Code != fault.CodeDatabaseError ||
		strings.Contains(f.Message, "pw-secret-42") || !strings.HasPrefix(f.Message, "cannot connect: ") {
		t.Errorf("another error: %s %s", f.Code, f.Message)
	}
	if got := innermost(fmt.Errorf("a: %w", fmt.Errorf("b: %w", os.ErrNotExist))); got != os.ErrNotExist {
		t.Errorf("innermost = %v", got)
	}
}

func TestSearchPathNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		`"$user", public`:             {"$user", "public"},
		`farm_a,"Odd ""Name""" , , x`: {"farm_a", `Odd "Name"`, "x"},
		``:                            nil,
		`"`:                           {`"`},
	} {
		if got := searchPathNames(in); !reflect.DeepEqual(got, want) {
			t.Errorf("searchPathNames(%q) = %q, want %q", in, got, want)
		}
	}
}

// A purge deletes only an attempt directory named for its attempt under a
// root: a path named otherwise is not ours, and a symbolic link that leads
// out of the root is refused, its target untouched.
func TestRetentionRemovesOnlyOwnedEvidence(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	e := evidence{TaskID: "task-1", ShardID: "shard-1", AttemptID: "attempt-1", Path: filepath.Join(root, "task-1", "shard-1", "attempt-1")}
	if _, _, ok := ownedEvidence(e, []string{root}); !ok {
		t.Fatal("the attempt's own directory is not owned")
	}
	for _, other := range []evidence{
		{TaskID: "task-1", ShardID: "shard-1", AttemptID: "attempt-1", Path: "task-1/shard-1/attempt-1"},
		{TaskID: "task-1", ShardID: "shard-1", AttemptID: "attempt-1", Path: filepath.Join(root, "task-1", "shard-1")},
		{TaskID: "task-1", ShardID: "shard-1", AttemptID: "attempt-2", Path: e.Path},
	} {
		if _, _, ok := ownedEvidence(other, []string{t.TempDir(), root}); ok {
			t.Errorf("%+v counted as owned", other)
		}
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	os.MkdirAll(filepath.Join(root, "task-1"), 0o755)
	if err := os.Symlink(outside, filepath.Join(root, "task-1", "shard-1")); err != nil {
		t.Fatal(err)
	}
	if err := removeUnder(root, filepath.Join("task-1", "shard-1", "attempt-1")); !errors.Is(err, errOutsideRoot) {
		t.Fatalf("removal through a symlink out of the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Fatalf("the symlink's target was touched: %v", err)
	}
	// Gone already, or a root that no longer exists: deleted.
	if err := removeUnder(root, filepath.Join("task-2", "shard-1", "attempt-1")); err != nil {
		t.Fatalf("an absent attempt: %v", err)
	}
	if err := removeUnder(filepath.Join(root, "nope"), "x"); err != nil {
		t.Fatalf("an absent root: %v", err)
	}
	os.MkdirAll(filepath.Join(root, "task-3", "shard-1", "attempt-1", "segments"), 0o755)
	os.WriteFile(filepath.Join(root, "task-3", "shard-1", "attempt-1", "segments", "r.json"), []byte("{}"), 0o644)
	if err := removeUnder(root, filepath.Join("task-3", "shard-1", "attempt-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "task-3", "shard-1", "attempt-1")); !os.IsNotExist(err) {
		t.Fatalf("the attempt directory survived: %v", err)
	}
}
