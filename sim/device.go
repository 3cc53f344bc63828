// Package sim assembles a simulated Android device running SoloPi v1.0.2:
// the virtual phone (sim/android), SoloPi's device side (sim/soloapp) and
// the two network fronts (sim/adbd). A Device is reachable in-process (it
// implements solopi.Transport) or through a fake adbd and a fake adb
// server; a Farm hosts many devices with distinct serials in one process.
package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/soloapp"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// Options configure one simulated device.
type Options struct {
	Serial string
	// TimeScale runs device time this many times faster than real time
	// (default 1): settle 3 s, root readiness 5 s and the HTTP start delay
	// keep their rules and take 1/TimeScale of the wall time.
	TimeScale float64
	// Clock overrides the clock (TimeScale is then ignored).
	Clock clock.Clock
	// Phone and App tune the two halves.
	Phone android.Config
	App   core.Config
}

// Device is one simulated Android device with SoloPi installed.
type Device struct {
	Phone *android.Phone
	App   *soloapp.App
	clk   clock.Clock

	http     *http.Server
	conns    *pipeListener
	mu       sync.Mutex
	closed   bool
	cancelCB func()

	// Fault knobs beside SoloPi's own (answers.go, intents.go) and what
	// the device received (observe.go).
	answers     answerFaults
	intents     intentFaults
	refuseDials int
	mutationLog eventLog[string]
	commandLog  eventLog[string]
}

// New builds a device and starts SoloPi's control service on it.
func New(opts Options) *Device {
	clk := opts.Clock
	if clk == nil {
		clk = clock.NewScaled(opts.TimeScale)
	}
	pc := opts.Phone
	if opts.Serial != "" {
		pc.Serial = opts.Serial
	}
	phone := android.New(pc, clk)
	ac := opts.App
	ac.Device = deviceInfo(phone, ac.Device)
	app := soloapp.New(ac, phoneAdapter{phone}, clk)
	d := &Device{Phone: phone, App: app, clk: clk, conns: newPipeListener()}
	d.mutationLog.keep, d.commandLog.keep = true, true
	d.answers.clk = clk
	handler := d.deliverIntent
	phone.RegisterActivityHandler(app.Package()+"/"+protocol.AdbSchemeActivity, handler)
	phone.RegisterActivityHandler(app.Package()+"/"+protocol.SchemeActivity, handler)
	// SoloPi's in-memory identities die with its process
	// (docs/device-protocol.md#app-restart): a force-stop restarts the
	// simulated app process.
	d.cancelCB = phone.OnProcess(func(pkg string, alive bool) {
		if pkg == app.Package() && !alive {
			app.Restart()
		}
	})
	d.http = &http.Server{Handler: d.answers.wrap(app), ReadHeaderTimeout: 10 * time.Second}
	go d.http.Serve(d.conns)
	return d
}

func deviceInfo(p *android.Phone, in core.DeviceInfo) core.DeviceInfo {
	cfg := p.Config()
	if in.Model == "" {
		in.Model = cfg.Model
	}
	if in.Brand == "" {
		in.Brand = cfg.Brand
	}
	if in.Manufacturer == "" {
		in.Manufacturer = cfg.Manufacturer
	}
	if in.Product == "" {
		in.Product = cfg.Product
	}
	if in.AndroidVersion == "" {
		in.AndroidVersion = cfg.AndroidVersion
	}
	if in.SDK == 0 {
		in.SDK = cfg.SDK
	}
	return in
}

// Clock is the device's clock.
func (d *Device) Clock() clock.Clock { return d.clk }

// Serial names the device.
func (d *Device) Serial() string { return d.Phone.Serial() }

// Props are the banner properties shown by `adb devices -l`.
func (d *Device) Props() (product, model, device string) { return d.Phone.Props() }

// errConnRefused is what dialling a closed device port looks like.
var errConnRefused = errors.New("connection refused")

// DialTCP connects to a TCP port on the device's loopback. Only SoloPi's
// control port listens, and only once its HTTP server has started.
func (d *Device) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	refused := d.closed || d.refusedDialLocked()
	d.mu.Unlock()
	if refused || port != d.App.DevicePort() || !d.App.HTTPReady() {
		return nil, fmt.Errorf("dial tcp:%d on %s: %w", port, d.Serial(), errConnRefused)
	}
	client, server := net.Pipe()
	if err := d.conns.push(ctx, server); err != nil {
		client.Close()
		server.Close()
		return nil, fmt.Errorf("dial tcp:%d on %s: %w", port, d.Serial(), err)
	}
	return client, nil
}

// Close stops the device's services.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	d.cancelCB()
	return d.http.Close()
}

// pipeListener hands in-memory connections to an http.Server.
type pipeListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) push(ctx context.Context, c net.Conn) error {
	select {
	case l.ch <- c:
		return nil
	case <-l.done:
		return net.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "device-loopback" }

// WaitReady blocks until SoloPi's control service accepts connections.
func (d *Device) WaitReady(ctx context.Context) error {
	for !d.App.HTTPReady() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for SoloPi on %s: %w", d.Serial(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
