package managed_test

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// The store tests wait on SQLite's and PostgreSQL's locks and on River's
// schedulers far more than they compute (3.3 s at the default -parallel of
// 2, 2.5 s at 8).
func TestMain(m *testing.M) { testwait.Main(m) }
