// Package pgtest gives a test its own PostgreSQL schema. The server comes
// from SOLOPI_TEST_POSTGRES (a connection URL such as
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); without it the
// test is skipped locally and fails when CI=true, because CI must never go
// green without running the PostgreSQL tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

// envVar names the variable that holds the test server's URL.
const envVar = "SOLOPI_TEST_POSTGRES"

// Server returns the test server's URL, or skips (fails in CI) without one.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(envVar)
	if u == "" {
		tooltest.Missing(t, "%s is not set: no PostgreSQL to test against", envVar)
	}
	return u
}

// Schema creates a fresh schema on the test server and returns a URL whose
// search_path selects it, so that parallel tests never share a table. The
// schema is dropped when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := Server(t)
	var b [6]byte
	rand.Read(b[:])
	name := "solopi_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", envVar, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", envVar, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
