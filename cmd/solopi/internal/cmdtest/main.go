package cmdtest

import (
	"os"
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// Main runs a command package's tests eight at once unless -test.parallel
// says otherwise: they mostly wait on simulated device time and on the
// processes they start, not on the two cores (plannercmd: 35 s at the
// default of 2, 17 s at 8, with the same CPU time).
func Main(m *testing.M) {
	testwait.Parallel(8)
	os.Exit(m.Run())
}
