package devicehost

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// These tests run shards on simulated phones and wait on their clocks and on
// the store far more than they compute (8.1 s at the default -parallel of 2,
// 4.5 s at 8).
func TestMain(m *testing.M) { testwait.Main(m) }
