package suite

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/history"
	out "github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// scale is the simulator's time scale in these tests: a replay's 2 s
// auto-start delay takes 40 ms.
const scale = 50

// rig is a set of simulated phones for a suite.
type rig struct {
	t      testing.TB
	farm   *sim.Farm
	devs   []*sim.Device
	phones []Phone
	// local are in-process channels to the same phones, for the tests'
	// own looks at them (unaffected by an adb fault).
	local []*device.Device
}

func openOptions(dev *sim.Device) device.SessionOptions {
	return device.SessionOptions{StartupTimeout: 20 * time.Second, Device: device.DeviceOptions{Clock: dev.Clock()}}
}

// newRig starts n phones reached in-process; overAdb reaches them through
// the farm's fake adb server with our adb client instead, so that adb
// faults (adb-state offline, drop-adb) break their channel.
func newRig(t testing.TB, n int, overAdb bool) *rig {
	t.Helper()
	return newRigScale(t, n, overAdb, scale)
}

// newRigScale is newRig on another time scale.
func newRigScale(t testing.TB, n int, overAdb bool, timeScale float64) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: n, TimeScale: timeScale, NoAdbd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, farm: f, devs: f.Devices()}
	var client *adb.Client
	if overAdb {
		if client, err = adb.NewClient(adb.WithPort(f.Server().Port()), adb.WithoutServerStart()); err != nil {
			t.Fatal(err)
		}
	}
	for _, dev := range r.devs {
		s, err := device.OpenSession(ctx, dev, openOptions(dev))
		if err != nil {
			t.Fatal(err)
		}
		r.local = append(r.local, s.Device)
		r.phones = append(r.phones, Phone{Serial: dev.Serial(), Open: func(ctx context.Context) (*device.Device, error) {
			var tr device.Transport = dev
			if client != nil {
				ad, err := client.Device(ctx, dev.Serial())
				if err != nil {
					return nil, err
				}
				tr = ad
			}
			s, err := device.OpenSession(ctx, tr, openOptions(dev))
			if err != nil {
				return nil, err
			}
			return s.Device, nil
		}})
	}
	return r
}

// local is the in-process channel of the phone with serial.
func (r *rig) localOf(serial string) *device.Device {
	for i, d := range r.devs {
		if d.Serial() == serial {
			return r.local[i]
		}
	}
	r.t.Fatalf("no phone %s", serial)
	return nil
}

// caseOf is a normalised Counter case that sleeps ms of device time.
func caseOf(t testing.TB, name string, ms int) *casefile.Case {
	t.Helper()
	c, err := casefile.Parse([]byte(fmt.Sprintf(`{"caseName":%q,"targetAppPackage":"com.example.counter","operationLog":{"steps":[
		{"stepId":"wait","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"%d"}}},
		{"stepId":"tap","operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/increment_button"}}]}}`, name, ms)))
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// items are case files named prefix-01… sleeping the given durations.
func items(t *testing.T, prefix string, ms ...int) []Item {
	t.Helper()
	var out []Item
	for i, d := range ms {
		name := fmt.Sprintf("%s-%02d", prefix, i+1)
		out = append(out, Item{Name: name, Case: caseOf(t, name, d), File: "cases/" + name + ".json"})
	}
	return out
}

// runOptions are replay timeouts in device time (the phones' clocks),
// generous so that a loaded host does not turn a slow answer into an
// infrastructure failure.
func runOptions() replay.RunOptions {
	return replay.RunOptions{AckTimeout: time.Minute, RunTimeout: 20 * time.Minute, PollInterval: 200 * time.Millisecond,
		EvidenceTimeout: 30 * time.Second, UnreachableTimeout: 10 * time.Second}
}

func (r *rig) options(its []Item) Options {
	return Options{Items: its, Phones: r.phones, InfraRetries: DefaultInfraRetries, Run: runOptions(),
		Import: replay.ImportOptions{Timeout: time.Minute, PollInterval: 50 * time.Millisecond}}
}

func newHistory(t *testing.T) *history.Store {
	t.Helper()
	h, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "history.sqlite"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func splitPath(p string) []string {
	var out []string
	for p != "" && p != "/" && p != "." {
		out = append([]string{filepath.Base(p)}, out...)
		p = filepath.Dir(p)
	}
	return out
}

// exitOf is the report's exit code.
func exitOf(rep *suitereport.Report) int { return out.ExitOf(rep.Failure()) }

// readJUnit writes the report's JUnit to a file and parses it back.
func readJUnit(t *testing.T, rep *suitereport.Report) artifacts.XMLTestsuites {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := rep.WriteJUnit(path, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return doc
}
