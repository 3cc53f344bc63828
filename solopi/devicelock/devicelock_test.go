package devicelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// The test binary doubles as the other process: TestMain runs a child role
// when the environment names one.
const (
	envRole   = "SOLOPI_DEVICELOCK_CHILD"
	envDir    = "SOLOPI_DEVICELOCK_DIR"
	envSerial = "SOLOPI_DEVICELOCK_SERIAL"
	envWork   = "SOLOPI_DEVICELOCK_WORK"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "":
		os.Exit(m.Run())
	case "hold":
		os.Exit(childHold())
	case "loop":
		os.Exit(childLoop())
	}
	os.Exit(3)
}

func childLocker() Locker {
	return Locker{Dir: os.Getenv(envDir), Args: []string{"/usr/bin/solopi", "run", "--owner-token", "s3cret", "--case", "x"}}
}

// childHold takes the lock, says so on stdout and holds it until killed.
func childHold() int {
	l, err := childLocker().Acquire(context.Background(), os.Getenv(envSerial), 0)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("locked", l.Path())
	select {}
}

// childLoop takes and releases the lock 40 times; inside, it claims a
// marker file exclusively. Finding the marker already there means two
// processes were inside at once.
func childLoop() int {
	marker := filepath.Join(os.Getenv(envWork), "inside")
	for range 40 {
		l, err := childLocker().Acquire(context.Background(), os.Getenv(envSerial), time.Minute)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Println("overlap", err)
			return 2
		}
		f.Close()
		for range 200 {
			if _, err := os.Stat(marker); err != nil {
				fmt.Println("marker vanished", err)
				return 2
			}
		}
		if err := os.Remove(marker); err != nil {
			fmt.Println("remove", err)
			return 2
		}
		if err := l.Release(); err != nil {
			fmt.Println("release", err)
			return 1
		}
	}
	fmt.Println("done")
	return 0
}

func child(t *testing.T, role, dir, serial, work string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role, envDir+"="+dir, envSerial+"="+serial, envWork+"="+work)
	return cmd
}

// Two processes asking for one phone take turns: never both inside.
func TestTwoProcessesNeverOverlap(t *testing.T) {
	t.Parallel()
	dir, work := t.TempDir(), t.TempDir()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		c := child(t, "loop", dir, "sim-0001", work)
		var out strings.Builder
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, c), append(outs, &out)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil || !strings.Contains(outs[i].String(), "done") {
			t.Errorf("child %d: %v: %s", i, err, outs[i])
		}
	}
}

// A holder killed with SIGKILL leaves its file behind; the kernel dropped
// its lock, so the next process takes the phone at once.
func TestKilledHolderDoesNotBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := child(t, "hold", dir, "emulator-5554", "")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked ") {
		t.Fatalf("holder: %q %v", line, err)
	}
	lk := Locker{Dir: dir}
	_, err = lk.Acquire(context.Background(), "emulator-5554", 0)
	e := fault.From(err)
	if e.Code != fault.CodeDeviceBusy || e.Kind != fault.Failed {
		t.Fatalf("busy phone: %v", err)
	}
	h, _ := e.Details["holder"].(*Holder)
	if h == nil || h.PID != c.Process.Pid || h.Serial != "emulator-5554" || h.Since.IsZero() {
		t.Fatalf("holder %+v, want pid %d", h, c.Process.Pid)
	}
	if h.Command != "solopi run --owner-token "+redact.Marker+" --case x" || strings.Contains(e.Message, "s3cret") {
		t.Fatalf("command %q, message %q", h.Command, e.Message)
	}
	if !strings.Contains(e.Message, "pid "+strconv.Itoa(h.PID)) || !strings.Contains(e.Message, "solopi run") {
		t.Errorf("message does not name the holder: %s", e.Message)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if _, err := os.Stat(strings.TrimSpace(strings.TrimPrefix(line, "locked "))); err != nil {
		t.Fatalf("the dead holder's file is gone: %v", err)
	}
	l, err := lk.Acquire(context.Background(), "emulator-5554", 0)
	if err != nil {
		t.Fatalf("after SIGKILL: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// Within one process two acquisitions exclude each other too (a flock
// belongs to the open file); the waiter gets the phone when it is released.
func TestWaitForRelease(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Unix(1_700_000_000, 0))
	lk := Locker{Dir: t.TempDir(), Clock: fc}
	ctx := context.Background()
	first, err := lk.Acquire(ctx, "sim-0001", 0)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan res, 1)
	go func() { l, err := lk.Acquire(ctx, "sim-0001", 10*time.Second); ch <- res{l, err} }()
	// The wait's own timer and the retry's pause both sleep on the clock.
	if err := fc.WaitForSleepers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	got := advanceUntil(fc, ch)
	if got.err != nil {
		t.Fatalf("waiter: %v", got.err)
	}
	defer got.l.Release()
	// A phone that stays busy past the wait is device_busy.
	go func() { l, err := lk.Acquire(ctx, "sim-0001", 2*time.Second); ch <- res{l, err} }()
	got = advanceUntil(fc, ch)
	if e := fault.From(got.err); e.Code != fault.CodeDeviceBusy || !strings.Contains(e.Message, "not released within 2s") {
		t.Fatalf("expired wait: %v", got.err)
	}
	// An interrupt while waiting is an interrupt, not device_busy.
	cctx, cancel := context.WithCancel(ctx)
	go func() { l, err := lk.Acquire(cctx, "sim-0001", time.Hour); ch <- res{l, err} }()
	if err := fc.WaitForSleepers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cancel()
	if got = <-ch; !fault.IsInterrupt(got.err) {
		t.Fatalf("interrupted wait: %v", got.err)
	}
}

// Serials with odd characters get distinct files inside the directory.
func TestOddSerialsStayInTheDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lk := Locker{Dir: dir}
	serials := []string{"../../etc/passwd", "192.168.1.20:5555", "a:b", "a_b", "..", ".", "émulateur 1", "x/y\\z", strings.Repeat("s", 300), "nul\x00byte"}
	seen := map[string]string{}
	var locks []*Lock
	for _, s := range serials {
		l, err := lk.Acquire(context.Background(), s, 0)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		locks = append(locks, l)
		if filepath.Dir(l.Path()) != dir || strings.ContainsAny(filepath.Base(l.Path()), "/\\:\x00 ") {
			t.Errorf("%q: lock file %s", s, l.Path())
		}
		if other, dup := seen[l.Path()]; dup {
			t.Errorf("%q and %q share %s", s, other, l.Path())
		}
		seen[l.Path()] = s
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != len(serials) {
		t.Fatalf("%d files for %d serials: %v", len(entries), len(serials), err)
	}
	for _, l := range locks {
		l.Release()
	}
	if _, err := lk.Acquire(context.Background(), "", 0); fault.From(err).Code != fault.CodeDeviceLockFailed {
		t.Errorf("empty serial: %v", err)
	}
}

type res struct {
	l   *Lock
	err error
}

// advanceUntil moves the fake clock in small steps until the waiter
// answers (the clock's sleepers come and go as the wait retries).
func advanceUntil(fc *clock.Fake, ch chan res) res {
	for {
		select {
		case r := <-ch:
			return r
		case <-time.After(5 * time.Millisecond):
			fc.Advance(100 * time.Millisecond)
		}
	}
}

// A symbolic link planted at the lock file's name is refused, not followed.
func TestSymlinkedLockFileIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, fileName("sim-0001"))); err != nil {
		t.Fatal(err)
	}
	_, err := Locker{Dir: dir}.Acquire(context.Background(), "sim-0001", 0)
	if fault.From(err).Code != fault.CodeDeviceLockFailed {
		t.Fatalf("symlink: %v", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link was followed: %v", err)
	}
}

func TestDefaultDirectory(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	l, err := DefaultEnv(os.Getenv)
	if err != nil || l.Dir != filepath.Join(rt, "solopi", "devices") {
		t.Fatalf("runtime dir: %+v %v", l, err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	if l, err = DefaultEnv(os.Getenv); err != nil || l.Dir != filepath.Join(cache, "solopi", "devices") {
		t.Fatalf("cache dir: %+v %v", l, err)
	}
}

func TestCommandLineHidesSecretValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"/opt/bin/solopi", "agent-run", "--api-key", "sk-1", "--goal", "log in"}, []string{"solopi agent-run --api-key [redacted] --goal log in"}},
		{[]string{"solopi", "--owner-token=abc", "--bearer-token", "-v", "x"}, []string{"solopi --owner-token=[redacted] --bearer-token -v x"}},
		{[]string{"solopi", "run\x1b[31m", "--password"}, []string{"solopi run[31m --password"}},
	} {
		if got := commandLine(tc.in); got != tc.want[0] {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want[0])
		}
	}
	long := commandLine([]string{"solopi", strings.Repeat("é", 400)})
	if len(long) > commandMax+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("long command line: %d bytes", len(long))
	}
}

// A serial names a phone only within its adb server: lockers of two
// servers lock sim-0001 separately, two lockers of one server share it.
func TestServersLockTheirOwnSerials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := Locker{Dir: dir, Server: "adb-server-41000"}
	l, err := a.Acquire(context.Background(), "sim-0001", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := (Locker{Dir: dir, Server: "adb-server-41000"}).Acquire(context.Background(), "sim-0001", 0); fault.CodeOf(err) != fault.CodeDeviceBusy {
		t.Fatalf("same server: %v", err)
	}
	for _, other := range []Locker{{Dir: dir, Server: "adb-server-42000"}, {Dir: dir}} {
		o, err := other.Acquire(context.Background(), "sim-0001", 0)
		if err != nil {
			t.Fatalf("server %q: %v", other.Server, err)
		}
		o.Release()
	}
}

// A holder writes its record just after it takes the lock: a process
// that finds the lock taken in that moment still names the holder (the
// race the two-process end-to-end test met under load).
func TestBusyNamesAHolderThatIsStillWritingItsRecord(t *testing.T) {
	t.Parallel()
	lk := Locker{Dir: t.TempDir()}
	f, err := openLockFile(lk.Dir, filepath.Join(lk.Dir, fileName("sim-0001")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		writeHolder(f, Holder{Serial: "sim-0001", PID: 4242, Command: "solopi run --case slow", Since: time.Unix(1_700_000_000, 0).UTC()})
	}()
	_, err = lk.Acquire(context.Background(), "sim-0001", 0)
	e := fault.From(err)
	h, _ := e.Details["holder"].(*Holder)
	if e.Code != fault.CodeDeviceBusy || h == nil || h.PID != 4242 || !strings.Contains(e.Message, "pid 4242 (solopi run --case slow)") {
		t.Fatalf("busy without its holder: %v %+v", err, e.Details)
	}
}
