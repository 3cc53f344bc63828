package sessions

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// These tests wait on simulated phones (their fast clock still counts
// settle, root and permission delays) far more than they compute.
func TestMain(m *testing.M) { testwait.Main(m) }
