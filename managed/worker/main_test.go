package worker_test

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// The River tests wait on River's own schedulers (the 5 s job scheduler,
// leader election, the periodic recovery) far more than they compute.
func TestMain(m *testing.M) { testwait.Main(m) }
