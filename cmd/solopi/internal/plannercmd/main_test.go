package plannercmd

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// The command's tests wait on simulated phones and on the processes they
// start far more than they compute.
func TestMain(m *testing.M) { testwait.Main(m) }
