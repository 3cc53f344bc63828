package replaycmd

import (
	"context"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/sim"
)

// rig runs the replay commands against one in-process simulated device.
type rig struct{ *cmdtest.Rig }

func newRig(t *testing.T, o sim.Options) *rig { return &rig{cmdtest.NewRig(t, Commands, o)} }

// importCase imports a case file (replacing a case of the same name).
func (r *rig) importCase(file string) {
	r.T.Helper()
	r.Cmd(0, "case-import", "--file", file, "--replace", "--poll-interval", "0.05")
}

// replaying reports whether the device runs a replay (its control lease).
func (r *rig) replaying() bool { return strings.HasPrefix(r.Dev.App.LeaseHolder(), "harness:") }

// fast are the run flags of a quick replay.
var fast = []string{"--ack-timeout", "5", "--poll-interval", "0.05"}

// hookedTransport is the simulated device with a test hook run once, just
// before the first replay mutation reaches it: when races happen in
// practice.
type hookedTransport struct {
	*sim.Device
	once     sync.Once
	onReplay func()
}

func (h *hookedTransport) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if strings.Contains(cmd, "solopi://startaction/replay?") && h.onReplay != nil {
		h.once.Do(h.onReplay)
	}
	return h.Device.Shell(ctx, cmd)
}

func (h *hookedTransport) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	return h.Device.DialTCP(ctx, port)
}

func (h *hookedTransport) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	return h.Device.Stat(ctx, p)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }
