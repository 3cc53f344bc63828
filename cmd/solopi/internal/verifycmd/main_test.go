package verifycmd

import (
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }
