package inspector

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// These tests wait on simulated phones far more than they compute.
func TestMain(m *testing.M) { testwait.Main(m) }
