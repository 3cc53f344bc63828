package cmdutil

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicelock"
)

// DeviceDeps is how a device command reaches its device (replay, agent,
// session and device commands all start here): the one the globals select
// (--serial / ANDROID_SERIAL, else the only online one) through the adb
// server, or the one Env.Transport hands in. A phone reached through the
// adb server belongs to this command while it runs: the first selection
// takes the phone's lock (solopi/devicelock), shared by every solopi
// process of the user on the host, and the command's end releases it. A
// busy phone is waited for up to --device-wait, then device_busy names its
// holder.
type DeviceDeps struct {
	G     *Globals
	locks *heldLocks
}

// heldLocks are the phone locks one device command holds, by serial: a
// command that opens several sessions on its phone (verify-run) takes the
// lock once.
type heldLocks struct {
	mu    sync.Mutex
	locks map[string]*devicelock.Lock
}

// onDevice runs a device command with its locks released at its end.
func onDevice(ctx context.Context, g *Globals, run func(ctx context.Context, d DeviceDeps) (Result, error)) (Result, error) {
	d := DeviceDeps{G: g, locks: &heldLocks{locks: map[string]*devicelock.Lock{}}}
	defer d.locks.release()
	return run(ctx, d)
}

func (h *heldLocks) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s, l := range h.locks {
		l.Release()
		delete(h.locks, s)
	}
}

// Transport selects the device and takes its lock.
func (d DeviceDeps) Transport(ctx context.Context) (device.Transport, error) {
	t, err := d.G.Selector().Select(ctx, d.G.Serial)
	if err != nil {
		return nil, err
	}
	if err := d.lock(ctx, t.Serial()); err != nil {
		return nil, err
	}
	return t, nil
}

// lock takes serial's lock once per command; a device handed in by
// Env.Transport is this process's own and has none.
func (d DeviceDeps) lock(ctx context.Context, serial string) error {
	if d.locks == nil || d.G.Env.Transport != nil {
		return nil
	}
	d.locks.mu.Lock()
	defer d.locks.mu.Unlock()
	if d.locks.locks[serial] != nil {
		return nil
	}
	lk, err := d.G.Locker()
	if err != nil {
		return err
	}
	wait, err := d.G.DeviceWait()
	if err != nil {
		return err
	}
	l, err := lk.Acquire(ctx, serial, wait)
	if err != nil {
		return err
	}
	d.locks.locks[serial] = l
	return nil
}

// Locker is the device locks of this invocation's user
// ($XDG_RUNTIME_DIR/solopi/devices, else the cache directory), nil when
// the process reaches only a device handed in by Env.Transport.
func (g *Globals) Locker() (*devicelock.Locker, error) {
	if g.Env.Transport != nil {
		return nil, nil
	}
	l, err := devicelock.DefaultEnv(g.Env.Getenv)
	if err != nil {
		return nil, err
	}
	if g.AdbServerPort != defaultAdbServerPort {
		l.Server = "adb-server-" + strconv.Itoa(g.AdbServerPort)
	}
	return &l, nil
}

// defaultAdbServerPort is adb's own default port: phones reached through
// it are locked by serial alone.
const defaultAdbServerPort = 5037

// Progress is the observer of the device's events (nil for none).
func (d DeviceDeps) Progress() device.Progress { return d.G.DeviceProgress() }

// SessionOptions are the session options of the globals.
func (d DeviceDeps) SessionOptions(preserveForeground bool) device.SessionOptions {
	return d.G.SessionOptions(preserveForeground)
}

// Session selects the device and opens the SoloPi session on it
// (installed, control service ready).
func (d DeviceDeps) Session(ctx context.Context, preserveForeground bool) (*device.Session, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return nil, err
	}
	return device.OpenSession(ctx, t, d.SessionOptions(preserveForeground))
}

// OpenPhone opens the SoloPi session on exactly serial without taking its
// lock: for a suite across phones, which takes the locks itself.
func (d DeviceDeps) OpenPhone(ctx context.Context, serial string) (*device.Device, error) {
	t, err := d.G.Selector().Bind(ctx, serial)
	if err != nil {
		return nil, err
	}
	s, err := device.OpenSession(ctx, t, d.SessionOptions(false))
	if err != nil {
		return nil, err
	}
	return s.Device, nil
}

// WithSession opens the SoloPi session without preserving the foreground,
// runs fn on it and releases it.
func WithSession(ctx context.Context, d DeviceDeps, fn func(s *device.Session) (Result, error)) (Result, error) {
	s, err := d.Session(ctx, false)
	if err != nil {
		return Result{}, err
	}
	defer s.Close()
	return fn(s)
}

// WithDevice is WithSession for commands that need only the channel.
func WithDevice(ctx context.Context, d DeviceDeps, fn func(dev *device.Device) (Result, error)) (Result, error) {
	return WithSession(ctx, d, func(s *device.Session) (Result, error) { return fn(s.Device) })
}

// SessionQuery runs q on the selected device's session and prints what it
// returns: a command that is one query.
func SessionQuery[R any](ctx context.Context, d DeviceDeps, q func(ctx context.Context, s *device.Session) (R, error)) (Result, error) {
	return WithSession(ctx, d, func(s *device.Session) (Result, error) {
		r, err := q(ctx, s)
		if err != nil {
			return Result{}, err
		}
		return OK(r), nil
	})
}

// DeviceQuery is SessionQuery for a query on the session's channel.
func DeviceQuery[R any](ctx context.Context, d DeviceDeps, q func(ctx context.Context, dev *device.Device) (R, error)) (Result, error) {
	return SessionQuery(ctx, d, func(ctx context.Context, s *device.Session) (R, error) { return q(ctx, s.Device) })
}

// deviceWaitFlag is --device-wait, a global option: how long a device
// command waits for a phone another solopi process holds.
const deviceWaitFlag = "device-wait"

// DeviceWait is --device-wait (0: do not wait).
func (g *Globals) DeviceWait() (time.Duration, error) {
	return ParseSeconds(deviceWaitFlag, globalContext(g.cli, deviceWaitFlag).Float64(deviceWaitFlag), NonNegative)
}
