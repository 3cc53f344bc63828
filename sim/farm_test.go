package sim

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

// Our adb client against the simulator's adb-server front passes the same
// conformance suite as the in-process front.
func TestAdbClientThroughServerFrontConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		f, err := StartFarm(ctx, FarmOptions{TimeScale: 50, NoAdbd: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := f.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.Devices()[0].Phone.FS().MkdirAll("/sdcard/conformance", 0o755); err != nil {
			t.Fatal(err)
		}
		c, err := adb.NewClient(adb.WithPort(f.Server().Port()), adb.WithoutServerStart())
		if err != nil {
			t.Fatal(err)
		}
		dev, err := c.Device(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if dev.Serial() != "sim-0001" {
			t.Fatalf("serial %q", dev.Serial())
		}
		return transporttest.Fixture{Transport: dev, HTTPPort: 23342, Scratch: "/sdcard/conformance"}
	})
}

func TestFarmHostsDistinctDevices(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := StartFarm(ctx, FarmOptions{Devices: 3, TimeScale: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := adb.NewClient(adb.WithPort(f.Server().Port()), adb.WithoutServerStart())
	if err != nil {
		t.Fatal(err)
	}
	infos, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 {
		t.Fatalf("%d devices listed", len(infos))
	}
	seen := map[string]bool{}
	for _, in := range infos {
		seen[in.Serial] = true
		if f.Adbd(in.Serial) == nil {
			t.Errorf("%s has no adbd front", in.Serial)
		}
	}
	if len(seen) != 3 {
		t.Errorf("serials not distinct: %v", infos)
	}
	if _, err := c.Device(ctx, ""); err == nil {
		t.Error("selecting without a serial among 3 devices succeeded")
	}
}
