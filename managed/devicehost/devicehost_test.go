package devicehost

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify"
)

// fixturePlan is solopi-ai's named requirement fixture compiled into a
// plan.
func fixturePlan(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "verify", "testdata", "solopi-ai", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := verify.ParseRequirement(b)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := verify.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := verify.MarshalPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// phone is a ready simulated phone with auto start on.
func phone(t testing.TB, o sim.Options) *sim.Device {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = 50
	}
	o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
	d := sim.New(o)
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// hostOn is the host whose one device is d.
func hostOn(d device.Transport) Host {
	return Host{
		Devices: device.Selector{Connect: func(context.Context) (device.Transport, error) { return d, nil }},
		Session: device.SessionOptions{Device: device.DeviceOptions{Package: protocol.DefaultPackage, Port: protocol.DefaultDevicePort,
			RequestTimeout: 5 * time.Second}, StartupTimeout: 15 * time.Second},
	}
}

// The host lists, probes and runs a shard on exactly the device it has.
func TestHostOnASimulatedPhone(t *testing.T) {
	t.Parallel()
	d := phone(t, sim.Options{})
	h := hostOn(d)
	ctx := context.Background()
	if serials, err := h.OnlineSerials(ctx); err != nil || len(serials) != 1 || serials[0] != d.Serial() {
		t.Fatalf("online %v %v", serials, err)
	}
	rep, err := h.ProbeDevice(ctx, d.Serial())
	if err != nil || rep.APILevel != 34 || !rep.Installed || !rep.Ready || rep.Doctor == nil {
		t.Fatalf("probe %+v %v", rep, err)
	}
	if _, err := h.ProbeDevice(ctx, "sim-other"); fault.CodeOf(err) != fault.CodeDeviceNotFound {
		t.Fatalf("a probe of another serial: %v", err)
	}
	a := &managed.Assignment{Serial: d.Serial(), Plan: fixturePlan(t, "counter-success"), Decisions: []byte(`{}`)}
	dir := filepath.Join(t.TempDir(), "attempt")
	v, err := h.ExecuteShard(ctx, worker.ShardRun{Assignment: a, ArtifactsDir: dir})
	if err != nil || v.Status != verify.Passed || v.ReportPath != filepath.Join(dir, "report.json") || len(v.Report) == 0 {
		t.Fatalf("shard %+v %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("the attempt's report.html: %v", err)
	}
}

// A device that prints no integer API level is a transport failure.
func TestProbeUnreadableAPILevel(t *testing.T) {
	t.Parallel()
	d := phone(t, sim.Options{Phone: android.Config{Props: map[string]string{"ro.build.version.sdk": "unknown"}}})
	if _, err := hostOn(d).ProbeDevice(context.Background(), d.Serial()); fault.KindOf(err) != fault.Transport || fault.CodeOf(err) != fault.CodeAPILevelUnreadable {
		t.Fatalf("probe: %v", err)
	}
}

// A leased device that is gone when the shard starts is a transport
// failure (retried within the task's budget), not the usage error device
// selection reports to a person; a plan with vision oracles is refused
// before the phone is touched.
func TestShardRefusals(t *testing.T) {
	t.Parallel()
	gone := fault.New(fault.Invalid, fault.CodeDeviceOffline, "the device is offline")
	h := Host{Devices: device.Selector{Connect: func(context.Context) (device.Transport, error) { return nil, gone }}}
	a := &managed.Assignment{Serial: "sim-0001", Plan: fixturePlan(t, "counter-success"), Decisions: []byte(`{}`)}
	_, err := h.ExecuteShard(context.Background(), worker.ShardRun{Assignment: a, ArtifactsDir: filepath.Join(t.TempDir(), "a")})
	if fault.KindOf(err) != fault.Transport || fault.CodeOf(err) != fault.CodeDeviceOffline {
		t.Fatalf("got %v (%s)", err, fault.KindOf(err))
	}
	vision, err := os.ReadFile(filepath.Join("..", "..", "verify", "testdata", "vision-requirement.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := verify.ParseRequirement(vision)
	plan, _ := verify.Compile(doc)
	data, _ := verify.MarshalPlan(plan)
	a.Plan = data
	if _, err = h.ExecuteShard(context.Background(), worker.ShardRun{Assignment: a, ArtifactsDir: filepath.Join(t.TempDir(), "v")}); fault.CodeOf(err) != fault.CodeVisionNotSupported {
		t.Fatalf("vision plan: %v", err)
	}
	var tree any = map[string]any{"schemaVersion": "x"}
	if err := ValidatePlan(tree); err == nil {
		t.Fatal("a broken plan passed")
	}
	if err := ValidatePlan(map[string]any{"f": func() {}}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("an unencodable plan: %v", err)
	}
}
