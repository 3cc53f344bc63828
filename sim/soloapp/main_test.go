package soloapp

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// These tests wait on the app's scaled clock (settle and watchdog delays)
// far more than they compute (8.5 s at the default -parallel of 2, 3.0 s at
// 8).
func TestMain(m *testing.M) { testwait.Main(m) }
