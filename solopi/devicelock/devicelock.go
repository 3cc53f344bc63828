// Package devicelock makes a phone belong to one process: an advisory
// flock(2) on one file per serial in the user's runtime directory (the
// cache directory when there is none), shared by every solopi process of
// the user on the host. The kernel releases the lock when its holder
// exits, however it exits, so a lock file left by a dead process never
// blocks; a live holder does, and its pid, command line and start time,
// written inside the file, name it in the device_busy error.
package devicelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// errBusy is a lock attempt that found the file locked.
var errBusy = errors.New("the lock is held")

// errWaitOver ends the wait for a busy phone.
var errWaitOver = errors.New("the wait for the phone ran out")

// Locker takes the locks of one directory.
type Locker struct {
	// Dir holds the lock files (created 0700 on first use).
	Dir string
	// Clock paces the wait for a busy phone (nil: the real clock).
	Clock clock.Clock
	// Args is the holder's command line written into the lock file (nil:
	// os.Args); values of secret-looking flags are never written.
	Args []string
	// Server names the adb server the phones are reached through when it
	// is not the default one (its port): a serial is a phone only within
	// one adb server, and two servers on one host (two simulated farms)
	// may both list sim-0001. "" for the default server, whose locks are
	// the serial's alone.
	Server string
}

// DefaultEnv is the locker of the user's runtime directory
// ($XDG_RUNTIME_DIR/solopi/devices, as getenv reads it), or of the cache
// directory (os.UserCacheDir()/solopi/devices) when there is no runtime
// directory.
func DefaultEnv(getenv func(string) string) (Locker, error) {
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		return Locker{Dir: filepath.Join(rt, "solopi", "devices")}, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return Locker{}, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "there is no runtime or cache directory for the device locks", err).
			WithUserAction("Set XDG_RUNTIME_DIR or HOME.")
	}
	return Locker{Dir: filepath.Join(cache, "solopi", "devices")}, nil
}

// Lock is a held phone; Release gives it back (the process's exit does
// too).
type Lock struct {
	serial, path string
	mu           sync.Mutex
	f            *os.File
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Release empties the holder record and unlocks. The file itself stays:
// removing it would let a waiter that opened it lock a file nobody else
// sees. Releasing twice is a no-op.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	terr := f.Truncate(0)
	uerr := unlock(f)
	cerr := f.Close()
	if err := errors.Join(terr, uerr, cerr); err != nil {
		return fault.Wrap(fault.Internal, fault.CodeDeviceLockFailed, "the device lock could not be released cleanly", err).With("serial", l.serial)
	}
	return nil
}

// Acquire locks serial's file, waiting up to wait (0: one attempt) for a
// holder to let go. A phone still busy after the wait is a device_busy
// error naming the holder; an interrupt of ctx is an interrupt.
func (lk Locker) Acquire(ctx context.Context, serial string, wait time.Duration) (*Lock, error) {
	if serial == "" {
		return nil, fault.Usage(fault.CodeDeviceLockFailed, "a device lock needs a serial")
	}
	if lk.Dir == "" {
		return nil, fault.Usage(fault.CodeDeviceLockFailed, "the device lock directory is not set")
	}
	key := serial
	if lk.Server != "" {
		key = serial + "@" + lk.Server
	}
	path := filepath.Join(lk.Dir, fileName(key))
	f, err := openLockFile(lk.Dir, path)
	if err != nil {
		return nil, err
	}
	clk := clock.Or(lk.Clock)
	wctx, stop := clock.WithTimeout(ctx, clk, wait, errWaitOver)
	defer stop()
	r := clock.Retry{Attempts: 1, Clock: clk, Backoff: clock.Backoff{Base: 25 * time.Millisecond, Max: 250 * time.Millisecond, Jitter: 0.3},
		Retryable: func(err error) bool { return errors.Is(err, errBusy) }}
	if wait > 0 {
		r.Attempts = math.MaxInt // bounded by wctx
	}
	err = r.Do(wctx, func(context.Context) error { return tryLock(f) })
	switch {
	case err == nil:
	case ctx.Err() != nil:
		f.Close()
		return nil, fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while waiting for the phone "+serial, ctx.Err())
	case errors.Is(err, errBusy) || errors.Is(context.Cause(wctx), errWaitOver):
		h := awaitHolder(ctx, clk, f)
		f.Close()
		return nil, busyError(serial, path, wait, h)
	default:
		f.Close()
		return nil, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "the device lock file cannot be locked", err).With("serial", serial).With("lockFile", path)
	}
	l := &Lock{serial: serial, path: path, f: f}
	args := lk.Args
	if args == nil {
		args = os.Args
	}
	if err := writeHolder(f, Holder{Serial: serial, PID: os.Getpid(), Command: commandLine(args), Since: clk.Now().UTC()}); err != nil {
		l.Release()
		return nil, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "the device lock file cannot be written", err).With("serial", serial).With("lockFile", path)
	}
	return l, nil
}

// awaitHolder reads the busy lock's holder record. A holder writes it
// just after it takes the lock, so a process that finds the lock taken in
// that moment reads an empty or half-written file: it reads again, for a
// bounded moment, so that device_busy names the holder whenever there is
// one. nil when no record appears (a holder that is not solopi, or a
// record it could not write).
func awaitHolder(ctx context.Context, clk clock.Clock, f *os.File) *Holder {
	for range holderReads {
		if h, err := readHolder(f); err == nil {
			return h
		}
		if clk.Sleep(ctx, holderReadPause) != nil {
			break
		}
	}
	h, _ := readHolder(f)
	return h
}

// holderReads × holderReadPause bounds the wait for a holder's record.
const (
	holderReads     = 20
	holderReadPause = 10 * time.Millisecond
)

// openLockFile creates the directory (0700) and opens the lock file
// without following a symbolic link.
func openLockFile(dir, path string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "the device lock directory cannot be created", err).With("lockDir", dir)
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fault.Usage(fault.CodeDeviceLockFailed, "the device lock file is not a regular file").With("lockFile", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "the device lock file cannot be inspected", err).With("lockFile", path)
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeDeviceLockFailed, "the device lock file cannot be opened", err).With("lockFile", path)
	}
	return f, nil
}

func busyError(serial, path string, wait time.Duration, h *Holder) *fault.Error {
	who := "another process"
	if h != nil {
		who = fmt.Sprintf("pid %d (%s)", h.PID, h.Command)
	}
	msg := fmt.Sprintf("the phone %s is in use by %s", serial, who)
	if wait > 0 {
		msg += fmt.Sprintf(" and was not released within %s", wait)
	}
	e := fault.New(fault.Failed, fault.CodeDeviceBusy, msg).With("serial", serial).With("lockFile", path).
		WithUserAction("Wait for the other solopi command to finish (or stop it), or wait longer for the phone (--device-wait).")
	if h != nil {
		e.With("holder", h)
	}
	return e
}
