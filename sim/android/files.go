package android

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/solopi-dev/solopi/sim/android/vfs"
)

// These Phone methods give the adb fronts the device file system
// directly, with adbd's semantics.

// Props returns the names adb shows for the device: product, model, device.
func (p *Phone) Props() (product, model, device string) {
	return p.cfg.Product, p.cfg.Model, p.cfg.Device
}

// Stat is FS().Stat.
func (p *Phone) Stat(path string) (fs.FileInfo, error) { return p.fs.Stat(path) }

// ReadDir is FS().ReadDir.
func (p *Phone) ReadDir(path string) ([]fs.FileInfo, error) { return p.fs.ReadDir(path) }

// Open is FS().Open as a plain io.ReadCloser.
func (p *Phone) Open(path string) (io.ReadCloser, error) { return p.fs.Open(path) }

// WriteFile stores a pushed file. Unlike FS().WriteFile it creates missing
// parent directories first, because adbd's sync service does so for hosts
// that see the fixed_push_mkdir feature.
func (p *Phone) WriteFile(name string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	if err := p.fs.MkdirAll(path.Dir(vfs.Canonical(name)), 0o771); err != nil {
		return fmt.Errorf("push %s: %w", name, err)
	}
	return p.fs.WriteFile(name, mode, mtime, r)
}
