package onphone

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// Verify checks every input before the phone is touched, then opens the
// session and runs the plan there, following the segments when asked.
func TestVerify(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := sim.New(sim.Options{Serial: "sim-verify", TimeScale: 20})
	t.Cleanup(func() { d.Close() })
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	opened := 0
	open := func(ctx context.Context) (*device.Session, error) {
		opened++
		return device.OpenSession(ctx, d, device.SessionOptions{StartupTimeout: 30 * time.Second, PreserveForeground: true})
	}
	plan, err := verify.MarshalPlan(compile(t, readFixture(t, "counter-success")))
	if err != nil {
		t.Fatal(err)
	}
	o := execution.RunOptions{Plan: plan, Artifacts: filepath.Join(t.TempDir(), "run")}

	bad := o
	bad.Plan = []byte(`{}`)
	if _, err := Verify(ctx, open, bad, Budgets{}, nil); err == nil || opened != 0 {
		t.Fatalf("an invalid plan: %v, %d sessions opened", err, opened)
	}
	refused := fault.Usage("no_device", "no device")
	if _, err := Verify(ctx, func(context.Context) (*device.Session, error) { return nil, refused }, o, Budgets{}, nil); !errors.Is(err, refused) {
		t.Fatalf("a session that cannot open: %v", err)
	}

	segments := 0
	s, err := Verify(ctx, open, o, Budgets{Phone: Options{PollInterval: 20 * time.Millisecond}}, func(execution.SegmentProgress) { segments++ })
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != verify.Passed || opened != 1 || segments == 0 {
		t.Fatalf("summary %+v, %d sessions, %d segment events", s, opened, segments)
	}
}
