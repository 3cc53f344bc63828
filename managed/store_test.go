package managed_test

import (
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed/storetest"
)

func TestSQLiteStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "managed.sqlite") })
}

func TestPostgresStore(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) string { return pgtest.Schema(t) })
}
