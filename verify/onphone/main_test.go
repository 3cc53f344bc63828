package onphone

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// These tests verify on simulated phones: they wait on the phone's clock
// (settle, root and receipt delays) far more than they compute (14.7 s at
// the default -parallel of 2, 6.0 s at 8, the same CPU time).
func TestMain(m *testing.M) { testwait.Main(m) }
