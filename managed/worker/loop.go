package worker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/protocol"
)

// DefaultProbeInterval is how often a worker loop re-probes its devices.
const DefaultProbeInterval = time.Minute

// LoopConfig configures Run.
type LoopConfig struct {
	Config
	// Prober re-probes this host's devices; nil leaves health alone.
	Prober        DeviceProber
	ProbeInterval time.Duration // 0 means DefaultProbeInterval
	// Concurrency is how many shards run at once (at least 1).
	Concurrency int
	// IdleInterval is the loop's poll period: a period in which this
	// worker claimed nothing and ran nothing is one idle poll.
	IdleInterval time.Duration
	// MaxIdlePolls stops the loop after that many idle polls in a row;
	// MaxAssignments after that many claimed shards ended (0: no limit).
	MaxIdlePolls   int
	MaxAssignments int
	Logger         *slog.Logger
}

// LoopResult is what a worker loop did.
type LoopResult struct {
	// Processed counts the claimed shards that ended here (hand-backs
	// excluded), Failures those of them without a passed verdict.
	Processed   int
	Failures    int
	IdlePolls   int
	Interrupted bool
	// Last is how the last claimed shard ended (nil when none was).
	Last *ShardReport
}

// loop counts claims and ends for Run.
type loop struct {
	mu        sync.Mutex
	max       int
	admitted  int // claims under way or done
	inflight  int // claims under way
	claims    int // assignments since the last poll
	res       LoopResult
	announced func(ShardReport)
}

func (l *loop) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.admitted >= l.max {
		return false
	}
	l.admitted++
	l.inflight++
	return true
}

func (l *loop) unadmit() {
	l.mu.Lock()
	l.admitted--
	l.inflight--
	l.mu.Unlock()
}

func (l *loop) observe(rep ShardReport) {
	l.mu.Lock()
	l.inflight--
	l.claims++
	if !rep.HandedBack {
		l.res.Processed++
		if rep.Err != nil || rep.Status != "passed" {
			l.res.Failures++
		}
	}
	l.res.Last = &rep
	l.mu.Unlock()
	if l.announced != nil && !rep.HandedBack {
		l.announced(rep)
	}
}

// poll records one poll period and reports whether the loop is done.
func (l *loop) poll(maxIdle int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.claims == 0 && l.inflight == 0 {
		l.res.IdlePolls++
	} else {
		l.res.IdlePolls = 0
	}
	l.claims = 0
	if l.max > 0 && l.res.Processed >= l.max {
		return true
	}
	return maxIdle > 0 && l.res.IdlePolls >= maxIdle
}

// Run runs a River client on this host that works the shards it can
// place on the devices its adb server sees, and River's periodic expiry
// recovery (enqueued by the elected leader only). It re-probes the host's
// devices periodically. It returns when a limit is reached, or when ctx is
// cancelled (SIGINT/SIGTERM): then running shards stop their device work and
// are handed back, and Interrupted is set.
func Run(ctx context.Context, cfg LoopConfig) (LoopResult, error) {
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.IdleInterval <= 0 {
		cfg.IdleInterval = time.Second
	}
	if cfg.IdleWait <= 0 {
		cfg.IdleWait = cfg.IdleInterval
	}
	l := &loop{max: cfg.MaxAssignments, announced: cfg.Observe}
	wc := cfg.Config
	wc.Admit, wc.Unadmit, wc.Observe = l.admit, l.unadmit, l.observe
	if cfg.Locks != nil {
		// The shards and the re-probe of this process share each phone's
		// lock: a claim waits for a probe of its phone to end, a probe
		// skips a phone in use.
		phones := &phoneLocks{locks: cfg.Locks, held: map[string]*holder{}}
		wc.Locks, cfg.Locks = phones, probeLocks{phones}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, NewShardWorker(wc))
	river.AddWorker(workers, &recoverWorker{Store: cfg.Store})
	client, err := cfg.Store.NewRiverClient(&river.Config{
		Queues: map[string]river.QueueConfig{
			managed.QueueShards:      {MaxWorkers: max(1, cfg.Concurrency)},
			managed.QueueMaintenance: {MaxWorkers: 1},
		},
		Workers:      workers,
		PeriodicJobs: []*river.PeriodicJob{managed.PeriodicRecovery()},
		RetryPolicy:  managed.RetryPolicy{Clock: cfg.Clock},
		JobTimeout:   -1,
		Logger:       cfg.Logger,
	})
	if err != nil {
		return LoopResult{}, err
	}
	// The client outlives ctx: an interrupt stops it explicitly, so that
	// running shards are handed back first.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return LoopResult{}, storeFault(err)
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	var probing sync.WaitGroup
	if cfg.Prober != nil {
		probing.Go(func() { probeLoop(probeCtx, cfg) })
	}
	defer func() { stopProbe(); probing.Wait() }()

	for {
		if cfg.Clock.Sleep(ctx, cfg.IdleInterval) != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			err := client.StopAndCancel(stopCtx)
			cancel()
			l.mu.Lock()
			defer l.mu.Unlock()
			l.res.Interrupted = true
			return l.res, storeFault(err)
		}
		if l.poll(cfg.MaxIdlePolls) {
			break
		}
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	err = client.Stop(stopCtx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.res, storeFault(err)
}

func probeLoop(ctx context.Context, cfg LoopConfig) {
	interval := cfg.ProbeInterval
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	seen := map[string]bool{}
	for {
		if err := RefreshDevices(ctx, cfg.Store, cfg.Devices, cfg.Prober, cfg.Locks, seen); err != nil && cfg.Logger != nil && ctx.Err() == nil {
			cfg.Logger.Warn("device health refresh failed", "error", err)
		}
		if cfg.Clock.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// phoneLocks are the host-wide phone locks of one worker process, with
// this process's own holders known. A shard's LockDevice waits while this
// process's re-probe holds the phone (it ends soon) and fails at once
// while one of its shards does (the phone is leased) or another process
// does; the re-probe never waits.
type phoneLocks struct {
	locks DeviceLocker
	mu    sync.Mutex
	held  map[string]*holder
}

// holder is this process's use of a phone.
type holder struct {
	probe bool
	done  chan struct{} // closed when it lets go
}

func (p *phoneLocks) LockDevice(ctx context.Context, serial string) (func(), error) {
	return p.lock(ctx, serial, false)
}

func (p *phoneLocks) lock(ctx context.Context, serial string, probe bool) (func(), error) {
	for {
		p.mu.Lock()
		h, mine := p.held[serial]
		if !mine {
			unlock, err := p.locks.LockDevice(ctx, serial)
			if err != nil {
				p.mu.Unlock()
				return nil, err
			}
			h = &holder{probe: probe, done: make(chan struct{})}
			p.held[serial] = h
			p.mu.Unlock()
			return func() {
				unlock()
				p.mu.Lock()
				delete(p.held, serial)
				p.mu.Unlock()
				close(h.done)
			}, nil
		}
		p.mu.Unlock()
		if probe || !h.probe {
			return nil, errPhoneInUse
		}
		select {
		case <-h.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// errPhoneInUse: this process drives the phone already.
var errPhoneInUse = errors.New("this worker is using the phone")

// probeLocks are the re-probe's view of phoneLocks.
type probeLocks struct{ *phoneLocks }

func (p probeLocks) LockDevice(ctx context.Context, serial string) (func(), error) {
	return p.lock(ctx, serial, true)
}

// RefreshDevices re-probes the registered devices this host sees and are
// not leased: a passed probe makes one healthy, a failed or errored probe
// degraded. A device this host saw before (in seen) and no longer sees is
// offline. Quarantined devices are an operator's decision and stay so. With
// locks, a probe holds the phone's host-wide lock, and a phone another
// process holds (a local run) is left alone: probing would disturb it.
func RefreshDevices(ctx context.Context, s managed.Store, lister DeviceLister, prober DeviceProber, locks DeviceLocker, seen map[string]bool) error {
	online, err := lister.OnlineSerials(ctx)
	if err != nil {
		return err
	}
	devices, err := s.Devices(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range devices {
		health := d.Health
		switch {
		case d.Health == managed.HealthQuarantined || d.Leased:
			continue
		case slices.Contains(online, d.Serial):
			seen[d.Serial] = true
			unlock := func() {}
			if locks != nil {
				if unlock, err = locks.LockDevice(ctx, d.Serial); err != nil {
					continue
				}
			}
			rep, err := prober.ProbeDevice(ctx, d.Serial)
			unlock()
			health = managed.HealthDegraded
			if err == nil && rep.Ready {
				health = managed.HealthHealthy
			}
		case seen[d.Serial]:
			health = managed.HealthOffline
		}
		if health != d.Health {
			if _, err := s.SetDeviceHealth(ctx, d.DeviceID, health); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ProbeRequest is one managed-device-probe.
type ProbeRequest struct {
	Serial       string
	DeviceID     string // "" means derived from the serial
	Capabilities []string
	Labels       map[string]string
}

// DefaultDeviceID is the device id a probe registers a serial under: the
// serial with every character outside [A-Za-z0-9._:-] turned into '-'.
func DefaultDeviceID(serial string) string {
	b := []byte(serial)
	for i, c := range b {
		if !protocol.IsIDChar(c) && c != ':' {
			b[i] = '-'
		}
	}
	return string(b)
}

// ProbeAndRegister probes a device and registers what it found: the
// capabilities adb, verification when SoloPi is installed, agent and
// managed-worker when the doctor passed, plus the caller's; healthy only
// when the doctor passed, degraded otherwise. A probe that errors degrades
// the device if it is registered already, and returns the error.
func ProbeAndRegister(ctx context.Context, s managed.Store, prober DeviceProber, req ProbeRequest) (managed.Device, ProbeReport, error) {
	rep, err := prober.ProbeDevice(ctx, req.Serial)
	if err != nil {
		if d, lookupErr := s.DeviceBySerial(ctx, req.Serial); lookupErr == nil && d.Health != managed.HealthQuarantined {
			if degraded, setErr := s.SetDeviceHealth(ctx, d.DeviceID, managed.HealthDegraded); setErr == nil {
				return degraded, rep, err
			}
		}
		return managed.Device{}, rep, err
	}
	caps := append([]string{"adb"}, req.Capabilities...)
	if rep.Installed {
		caps = append(caps, "verification")
	}
	health := managed.HealthDegraded
	if rep.Ready {
		caps = append(caps, "agent", "managed-worker")
		health = managed.HealthHealthy
	}
	id := req.DeviceID
	if id == "" {
		id = DefaultDeviceID(req.Serial)
	}
	d, err := s.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: id, Serial: req.Serial, APILevel: rep.APILevel,
		Capabilities: caps, Labels: req.Labels, Health: health})
	return d, rep, err
}
