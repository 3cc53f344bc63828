package agentloop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/solopi-dev/solopi/artifacts"
)

// Keeping what the model saw. The trajectory records each observation by
// its SHA-256 only; a report or a live console needs the pixels. Both hooks
// below sit outside the runtime: ObserveScreens wraps the device, so every
// screenshot the runtime plans, checks freshness or verifies on passes
// through onScreen before the runtime emits its observation event, and
// ScreenDir keeps those screenshots beside the trajectory.

// ObserveScreens returns dev with every successful Observe handed to
// onScreen first. onScreen must not keep the Screen's mutable parts; it
// runs on the runtime's goroutine and should return quickly.
func ObserveScreens(dev Device, onScreen func(*Screen)) Device {
	return &observedDevice{Device: dev, onScreen: onScreen}
}

type observedDevice struct {
	Device
	onScreen func(*Screen)
}

func (d *observedDevice) Observe(ctx context.Context) (*Screen, error) {
	s, err := d.Device.Observe(ctx)
	if err == nil && s != nil && d.onScreen != nil {
		d.onScreen(s)
	}
	return s, err
}

// ScreenDir keeps every distinct screenshot of a run as <dir>/<sha256>.png
// (the digest the trajectory's observation events name), each written once
// and atomically, readable by the owner only like the trajectory.
type ScreenDir struct {
	dir   string
	mu    sync.Mutex
	saved map[string]bool
	err   error
}

// NewScreenDir creates dir (and its parents).
func NewScreenDir(dir string) (*ScreenDir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the screenshot directory: %w", err)
	}
	return &ScreenDir{dir: dir, saved: map[string]bool{}}, nil
}

// Save writes s unless a screenshot with the same digest was saved. The
// first failure is kept for Err; a run goes on without its pictures
// rather than fail because a disk filled up.
func (d *ScreenDir) Save(s *Screen) {
	if s == nil || len(s.SHA256) != 64 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.saved[s.SHA256] || d.err != nil {
		return
	}
	if _, err := artifacts.PrivateState.WriteFile(filepath.Join(d.dir, s.SHA256+".png"), s.PNG); err != nil {
		d.err = fmt.Errorf("keep screenshot %s: %w", s.SHA256[:12], err)
		return
	}
	d.saved[s.SHA256] = true
}

// Err is the first failure of Save, or nil.
func (d *ScreenDir) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Count is how many distinct screenshots were saved.
func (d *ScreenDir) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.saved)
}
