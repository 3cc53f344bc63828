package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/solopi-dev/solopi/sim/adbd"
)

// FarmOptions configure a process hosting several simulated devices.
type FarmOptions struct {
	Devices   int     // number of devices (default 1)
	TimeScale float64 // device time speed-up (default 1)
	// SerialPrefix names devices <prefix>-0001, <prefix>-0002… (default "sim").
	SerialPrefix string
	// Host is the loopback address every front binds (default 127.0.0.1).
	Host string
	// ServerPort is the adb-server front's port (0 picks a free one).
	ServerPort int
	// NoAdbd skips the per-device fake adbd listeners (for tests that only
	// need the adb-server front).
	NoAdbd bool
	// Configure adjusts each device's options before it starts.
	Configure func(i int, o *Options)
}

// Farm is many simulated devices behind two fronts: one fake adb server
// (our adb client talks to it directly, ANDROID_ADB_SERVER_PORT) and one
// fake adbd per device (Debian's real adb server connects to it).
type Farm struct {
	mu      sync.Mutex
	devices []*Device
	server  *adbd.Server
	adbds   map[string]*adbd.Adbd
	// stop ends the fronts; they live until Close, not until the start
	// context ends.
	stop context.CancelFunc
}

// StartFarm starts the devices and their fronts on loopback. ctx bounds the
// start only; the farm runs until Close.
func StartFarm(ctx context.Context, o FarmOptions) (*Farm, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Devices <= 0 {
		o.Devices = 1
	}
	if o.SerialPrefix == "" {
		o.SerialPrefix = "sim"
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	life, stop := context.WithCancel(context.Background())
	f := &Farm{adbds: map[string]*adbd.Adbd{}, stop: stop}
	for i := 0; i < o.Devices; i++ {
		opts := Options{Serial: fmt.Sprintf("%s-%04d", o.SerialPrefix, i+1), TimeScale: o.TimeScale}
		if o.Configure != nil {
			o.Configure(i, &opts)
		}
		f.devices = append(f.devices, New(opts))
	}
	views := make([]adbd.Device, len(f.devices))
	for i, d := range f.devices {
		views[i] = adbdView{d}
	}
	srv, err := adbd.ListenServer(life, fmt.Sprintf("%s:%d", o.Host, o.ServerPort), views...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("start the adb server front: %w", err)
	}
	f.server = srv
	if !o.NoAdbd {
		for _, d := range f.devices {
			a, err := adbd.ListenAdbd(life, o.Host+":0", adbdView{d})
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("start the fake adbd of %s: %w", d.Serial(), err)
			}
			f.adbds[d.Serial()] = a
		}
	}
	return f, nil
}

// Devices lists the farm's devices.
func (f *Farm) Devices() []*Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Device(nil), f.devices...)
}

// Device finds a device by serial.
func (f *Farm) Device(serial string) (*Device, bool) {
	for _, d := range f.Devices() {
		if d.Serial() == serial {
			return d, true
		}
	}
	return nil, false
}

// Server is the fake adb server front.
func (f *Farm) Server() *adbd.Server { return f.server }

// Adbd returns the fake adbd of a device (nil with NoAdbd).
func (f *Farm) Adbd(serial string) *adbd.Adbd {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.adbds[serial]
}

// WaitReady waits until every device's SoloPi control service is up.
func (f *Farm) WaitReady(ctx context.Context) error {
	for _, d := range f.Devices() {
		if err := d.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops every front and device.
func (f *Farm) Close() error {
	var errs []error
	f.stop()
	if f.server != nil {
		errs = append(errs, f.server.Close())
	}
	f.mu.Lock()
	for _, a := range f.adbds {
		errs = append(errs, a.Close())
	}
	devs := f.devices
	f.mu.Unlock()
	for _, d := range devs {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}
