package report

import (
	"testing"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// The Chromium tests wait on the browser's pages far more than they
// compute here.
func TestMain(m *testing.M) { testwait.Main(m) }
