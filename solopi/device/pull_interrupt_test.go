package device

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

// interruptAtDigest is the simulator's transport with one fault: the
// user's interrupt arrives while the device computes a transfer's digest.
type interruptAtDigest struct {
	Transport
	cancel context.CancelFunc
}

func (t interruptAtDigest) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if strings.HasPrefix(cmd, "sha256sum ") {
		t.cancel()
		return nil, nil, 0, ctx.Err()
	}
	return t.Transport.Shell(ctx, cmd)
}

// An interrupt while a pull's digest is read is an interrupt, not an adb
// failure: a cancelled command never reports a transport fault.
func TestPullInterruptedAtTheDigestIsAnInterrupt(t *testing.T) {
	t.Parallel()
	dev := sim.New(sim.Options{Serial: "sim-pull-interrupt", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	plain := NewDevice(dev, DeviceOptions{})
	t.Cleanup(plain.Close)
	if _, err := plain.Push(ctx, bytes.NewReader([]byte("evidence")), "/data/local/tmp/pulled.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	d := NewDevice(interruptAtDigest{Transport: dev, cancel: cancel}, DeviceOptions{})
	t.Cleanup(d.Close)
	var out bytes.Buffer
	_, err := d.Pull(ctx, "/data/local/tmp/pulled.txt", &out)
	if !fault.IsInterrupt(err) {
		t.Fatalf("an interrupt during the digest: %v (%s)", err, fault.CodeOf(err))
	}
}
