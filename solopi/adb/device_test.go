package adb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
	"github.com/solopi-dev/solopi/internal/tooltest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/adbd"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	// Every call in these tests must finish well inside this; a hang fails
	// the test instead of stalling the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustDevice(t *testing.T, c *Client, serial string) *Device {
	t.Helper()
	d, err := c.Device(testCtx(t), serial)
	if err != nil {
		t.Fatalf("Device(%q): %v", serial, err)
	}
	return d
}

func TestNewClientPort(t *testing.T) {
	t.Setenv("ANDROID_ADB_SERVER_PORT", "")
	c, err := NewClient()
	if err != nil || c.Port() != 5037 || c.Addr() != "127.0.0.1:5037" {
		t.Fatalf("default = %v, %v", c, err)
	}
	t.Setenv("ANDROID_ADB_SERVER_PORT", "5099")
	if c, _ := NewClient(); c.Port() != 5099 {
		t.Fatalf("env port = %d", c.Port())
	}
	if c, _ := NewClient(WithPort(6000)); c.Port() != 6000 {
		t.Fatalf("option port = %d, option must beat env", c.Port())
	}
	t.Setenv("ANDROID_ADB_SERVER_PORT", "abc")
	if _, err := NewClient(); err == nil || !strings.Contains(err.Error(), "ANDROID_ADB_SERVER_PORT") {
		t.Fatalf("bad env = %v", err)
	}
	if _, err := NewClient(WithPort(70000)); err == nil {
		t.Fatal("port 70000 accepted")
	}
}

func TestDeviceSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		devs    []string          // serials on the server
		states  map[string]string // serial -> state other than device
		serial  string
		want    error
		serialW string
	}{
		{"none", nil, nil, "", ErrNoDevice, ""},
		{"one", []string{"a"}, nil, "", nil, "a"},
		{"two ready", []string{"a", "b"}, nil, "", ErrMultipleDevices, ""},
		{"one ready one offline", []string{"offline-1", "b"}, map[string]string{"offline-1": "offline"}, "", nil, "b"},
		{"only unauthorized", []string{"unauth-1"}, map[string]string{"unauth-1": "unauthorized"}, "", ErrUnauthorized, ""},
		{"only offline", []string{"offline-1"}, map[string]string{"offline-1": "offline"}, "", ErrOffline, ""},
		{"only recovery", []string{"rec-1"}, map[string]string{"rec-1": "recovery"}, "", ErrNotReady, ""},
		{"offline and unauthorized", []string{"offline-1", "unauth-1"}, map[string]string{"offline-1": "offline", "unauth-1": "unauthorized"}, "", ErrNoDevice, ""},
		{"serial ok among two", []string{"a", "b"}, nil, "b", nil, "b"},
		{"serial not found", []string{"a"}, nil, "zz", ErrDeviceNotFound, ""},
		{"serial offline", []string{"offline-1"}, map[string]string{"offline-1": "offline"}, "offline-1", ErrOffline, ""},
		{"serial unauthorized", []string{"unauth-1"}, map[string]string{"unauth-1": "unauthorized"}, "unauth-1", ErrUnauthorized, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSimServer(t, append(tc.devs, "unplugged")...)
			if err := s.server().Remove("unplugged"); err != nil {
				t.Fatal(err)
			}
			for serial, st := range tc.states {
				if err := s.server().SetState(serial, adbd.State(st)); err != nil {
					t.Fatal(err)
				}
			}
			d, err := s.client(t).Device(testCtx(t), tc.serial)
			if tc.want == nil {
				if err != nil || d.Serial() != tc.serialW {
					t.Fatalf("Device = %v, %v; want %s", d, err, tc.serialW)
				}
				if !d.HasFeature("shell_v2") {
					t.Fatalf("features not read: %v", d.Features())
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T is not *Error", err)
			}
			// Every message must tell the user what to do next.
			msg := err.Error()
			if !strings.HasPrefix(msg, "adb: ") || len(msg) < 40 {
				t.Fatalf("message not actionable: %q", msg)
			}
			if tc.want == ErrMultipleDevices && (len(e.Devices) != 2 || !strings.Contains(msg, "a device") || !strings.Contains(msg, "--serial")) {
				t.Fatalf("multiple devices error lacks the list: %q %+v", msg, e.Devices)
			}
			if tc.want == ErrDeviceNotFound && e.Serial != "zz" {
				t.Fatalf("serial not carried: %+v", e)
			}
		})
	}
}

func TestConnectFailureText(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "127.0.0.1:5601")
	c := s.client(t)
	ctx := testCtx(t)
	if err := c.Connect(ctx, "127.0.0.1:5601"); err != nil {
		t.Fatalf("already connected must succeed: %v", err)
	}
	err := c.Connect(ctx, "127.0.0.1:5690")
	var ce *connectError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "Connection refused") {
		t.Fatalf("Connect = %v", err)
	}
	if err := c.Disconnect(ctx, "127.0.0.1:5601"); err != nil {
		t.Fatal(err)
	}
	if err := c.Disconnect(ctx, "127.0.0.1:5601"); !errors.As(err, &ce) || ce.Op != "disconnect" {
		t.Fatalf("second Disconnect = %v", err)
	}
	if st, err := c.GetState(ctx, "127.0.0.1:5601"); !errors.Is(err, ErrDeviceNotFound) {
		t.Fatalf("GetState after disconnect = %q, %v", st, err)
	}
}

func TestShellV2(t *testing.T) {
	t.Parallel()
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			t.Parallel()
			s := newSimServer(t, "a")
			s.link.set(func(l *link) { l.split = split })
			d := mustDevice(t, s.client(t), "a")
			for _, tc := range []struct {
				cmd         string
				out, errOut string
				code        int
			}{
				{"echo hi", "hi\n", "", 0},
				{"echo out; echo err >&2; exit 3", "out\n", "err\n", 3},
				{"exit 255", "", "", 255},
				{"echo " + strings.Repeat("x", 65_000), strings.Repeat("x", 65_000) + "\n", "", 0},
			} {
				out, errOut, code, err := d.Shell(testCtx(t), tc.cmd)
				if err != nil || string(out) != tc.out || string(errOut) != tc.errOut || code != tc.code {
					t.Errorf("Shell(%.20q) = %.20q, %q, %d, %v; want %.20q, %q, %d", tc.cmd, out, errOut, code, err, tc.out, tc.errOut, tc.code)
				}
			}
			// A command the device does not have: the shell says so on stderr.
			out, errOut, code, err := d.Shell(testCtx(t), "nosuchcmd")
			if err != nil || len(out) != 0 || !strings.Contains(string(errOut), "nosuchcmd") || code != 127 {
				t.Errorf("Shell(nosuchcmd) = %q, %q, %d, %v", out, errOut, code, err)
			}
		})
	}
}

func TestShellCommandTooLong(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	_, _, _, err := d.Shell(testCtx(t), "echo "+strings.Repeat("x", 70_000))
	if err == nil || !strings.Contains(err.Error(), "exceeds") || errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Shell(70 kB) = %v, want a local length error", err)
	}
}

// oldDevice is the phone seen as Android < 7 (no shell_v2, no stat_v2): the
// client then uses the v1 services, which every adbd keeps.
func oldDevice(c *Client, serial string) *Device { return &Device{c: c, serial: serial} }

func TestShellV1Fallback(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "old")
	d := oldDevice(s.client(t), "old")
	out, errOut, code, err := d.Shell(testCtx(t), "echo hi; echo oops >&2; exit 4")
	if err != nil || string(out) != "hi\noops\n" || errOut != nil || code != exitUnknown {
		t.Fatalf("v1 Shell = %q, %q, %d, %v", out, errOut, code, err)
	}
}

func TestExecBinary(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	s.link.set(func(l *link) { l.split = true })
	d := mustDevice(t, s.client(t), "a")
	png, err := s.device("a").Phone.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Exec(testCtx(t), "screencap -p")
	if err != nil || !bytes.Equal(out, png) {
		t.Fatalf("Exec = %d bytes, %v; want %d identical bytes", len(out), err, len(png))
	}
}

// unplug removes the device from the server, as a pulled cable does.
func (s *simServer) unplug(t *testing.T, serial string) func() {
	return func() {
		if err := s.server().Remove(serial); err != nil {
			t.Error(err)
		}
	}
}

// The link breaks in the middle of a shell v2 packet and the device
// disappears: the call must end with ErrDeviceGone, not hang.
func TestDeviceGoneMidShell(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	// A 16-byte stdout packet (5-byte header), cut after 7 of its bytes.
	s.link.cutNext(tportReply+5+7, s.unplug(t, "a"))
	out, _, code, err := d.Shell(testCtx(t), shellCmd("partialpartial16")+"; sleep 1000")
	if !errors.Is(err, ErrDeviceGone) || !errors.Is(err, io.ErrUnexpectedEOF) || code != exitUnknown {
		t.Fatalf("Shell = %q, %d, %v; want ErrDeviceGone", out, code, err)
	}
	if string(out) != "partial" {
		t.Errorf("partial output lost: %q", out)
	}
	// And the next call is refused by the server: still ErrDeviceGone.
	if _, _, _, err := d.Shell(testCtx(t), "true"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("next Shell = %v, want ErrDeviceGone", err)
	}
}

func TestDeviceGoneMidPull(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	big := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{2}).Read(big)
	if err := d.Push(testCtx(t), bytes.NewReader(big), "/sdcard/big.bin", 0o644, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Inside the first DATA chunk, then inside its header.
	for _, cut := range []int{tportReply + 8 + 1000, tportReply + 3} {
		s.link.cutNext(cut, nil)
		var w bytes.Buffer
		err := d.Pull(testCtx(t), "/sdcard/big.bin", &w)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "pull /sdcard/big.bin") {
			t.Fatalf("Pull cut after %d bytes = %v, want an unexpected EOF naming the path", cut, err)
		}
	}
	s.link.cutNext(tportReply+8+1000, s.unplug(t, "a"))
	var w bytes.Buffer
	err := d.Pull(testCtx(t), "/sdcard/big.bin", &w)
	if !errors.Is(err, ErrDeviceGone) || !strings.Contains(err.Error(), "pull /sdcard/big.bin") {
		t.Fatalf("Pull = %v, want ErrDeviceGone naming the path", err)
	}
}

// Exec's raw stream has no end marker: an early EOF is detected by asking
// the server afterwards.
func TestDeviceGoneMidExec(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	s.link.cutNext(4+100, s.unplug(t, "a"))
	if _, err := d.Exec(testCtx(t), "screencap -p"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Exec = %v, want ErrDeviceGone", err)
	}
}

func TestDeviceGoneBetweenCalls(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	if err := s.server().SetState("a", adbd.StateOffline); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DialTCP(testCtx(t), 23342); !errors.Is(err, ErrOffline) {
		t.Fatalf("DialTCP = %v, want ErrOffline", err)
	}
	s.unplug(t, "a")()
	if _, err := d.Stat(testCtx(t), "/sdcard"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Stat = %v, want ErrDeviceGone", err)
	}
}

func TestContextCancelMidCall(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	// A command that does not end while the test runs.
	ctx, cancel := context.WithCancel(testCtx(t))
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, _, _, err := d.Shell(ctx, "sleep 1000"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shell = %v, want context.Canceled", err)
	}
	ctx, cancel3 := context.WithTimeout(testCtx(t), 80*time.Millisecond)
	defer cancel3()
	if _, err := d.Exec(ctx, "sleep 1000"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec = %v, want context.DeadlineExceeded", err)
	}
	// A device that stops answering mid-transfer.
	if err := d.Push(testCtx(t), strings.NewReader("x"), "/sdcard/x", 0o644, time.Time{}); err != nil {
		t.Fatal(err)
	}
	s.link.set(func(l *link) { l.stall = true })
	ctx, cancel2 := context.WithTimeout(testCtx(t), 80*time.Millisecond)
	defer cancel2()
	var w bytes.Buffer
	if err := d.Pull(ctx, "/sdcard/x", &w); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Pull = %v, want context.DeadlineExceeded", err)
	}
	s.link.set(func(l *link) { l.stall = false })
}

func TestServerUnreachable(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	c, err := NewClient(WithPort(port), WithoutServerStart())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Version(testCtx(t))
	var e *Error
	if !errors.Is(err, ErrServerUnreachable) || !errors.As(err, &e) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Fatalf("Version = %v", err)
	}
	c, _ = NewClient(WithPort(port), WithAdbPath(filepath.Join(t.TempDir(), "missing-adb")))
	if _, err = c.Devices(testCtx(t)); !errors.Is(err, ErrServerUnreachable) || !errors.Is(err, ErrAdbNotFound) {
		t.Fatalf("missing adb = %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func fakeAdb(t *testing.T, body string) (path, marker string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		tooltest.Missing(t, "a POSIX shell script stands in for adb: not on Windows")
	}
	dir := t.TempDir()
	marker = filepath.Join(dir, "called")
	path = filepath.Join(dir, "adb")
	script := "#!/bin/sh\necho \"$@\" > '" + marker + "'\n" + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

func TestStartServerFails(t *testing.T) {
	t.Parallel()
	adb, marker := fakeAdb(t, "echo 'cannot bind listener: Address already in use' >&2\nexit 1\n")
	port := freePort(t)
	c, err := NewClient(WithPort(port), WithAdbPath(adb))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Version(testCtx(t))
	if !errors.Is(err, ErrServerUnreachable) || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("Version = %v; want ErrServerUnreachable with adb's output", err)
	}
	args, rerr := os.ReadFile(marker)
	if rerr != nil || strings.TrimSpace(string(args)) != fmt.Sprintf("-P %d start-server", port) {
		t.Fatalf("adb called with %q (%v)", args, rerr)
	}
}

// adb start-server succeeds: the server (the simulator's front, started by
// the test when the script runs) then answers, and the call goes through.
func TestStartServerThenRetry(t *testing.T) {
	t.Parallel()
	adb, marker := fakeAdb(t, "exit 0\n")
	port := freePort(t)
	started := make(chan struct{})
	go func() {
		defer close(started)
		for i := 0; i < 1000; i++ {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		// A server that reports early: it listens a moment after
		// start-server returned, within the client's grace period.
		time.Sleep(200 * time.Millisecond)
		f, err := sim.StartFarm(context.Background(), sim.FarmOptions{ServerPort: port, NoAdbd: true})
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { f.Close() })
	}()
	c, _ := NewClient(WithPort(port), WithAdbPath(adb))
	v, err := c.Version(testCtx(t))
	<-started
	if err != nil || v != 41 {
		t.Fatalf("Version after start-server = %d, %v", v, err)
	}
}

func TestPushPullRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v2 := range []bool{true, false} {
		t.Run(fmt.Sprint("stat_v2=", v2), func(t *testing.T) {
			t.Parallel()
			s := newSimServer(t, "a")
			d := mustDevice(t, s.client(t), "a")
			if !v2 {
				d = oldDevice(d.c, "a")
			}
			data := make([]byte, 3*adbwire.SyncDataMax+12345)
			rand.NewChaCha8([32]byte{1}).Read(data)
			mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
			// Shell-owned storage keeps the modes it is given (shared storage
			// would force 0660, as sdcardfs does).
			const path = "/data/local/tmp/harness-import/case.json"
			// The device refuses DATA chunks above 64 KiB: the push proves
			// the chunking.
			if err := d.Push(testCtx(t), bytes.NewReader(data), path, 0o640, mtime); err != nil {
				t.Fatal(err)
			}
			// adbd copies the user's permission bits to group and other.
			st, err := s.device("a").Phone.Stat(path)
			if err != nil || st.Mode().Perm() != 0o666 || !st.ModTime().Equal(mtime) {
				t.Fatalf("stored %v %v, %v", st.Mode(), st.ModTime(), err)
			}
			var got bytes.Buffer
			if err := d.Pull(testCtx(t), path, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("Pull: %d bytes identical=%v, %v", got.Len(), bytes.Equal(got.Bytes(), data), err)
			}
			fi, err := d.Stat(testCtx(t), path)
			if err != nil || fi.Size() != int64(len(data)) || fi.Mode() != 0o666 || !fi.ModTime().Equal(mtime) || fi.Name() != "case.json" || fi.IsDir() || fi.Sys() == nil {
				t.Fatalf("Stat = %v %v %v %v, %v", fi.Size(), fi.Mode(), fi.ModTime(), fi.Name(), err)
			}
			// An empty file is a SEND with no DATA.
			if err := d.Push(testCtx(t), strings.NewReader(""), "/data/local/tmp/empty", 0, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if st, err := s.device("a").Phone.Stat("/data/local/tmp/empty"); err != nil || st.Size() != 0 || st.Mode().Perm() != 0o666 || st.ModTime().IsZero() {
				t.Fatalf("empty file: %v %v", st, err)
			}
		})
	}
}

func TestStatMissing(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	v2 := mustDevice(t, s.client(t), "a")
	for _, d := range []*Device{v2, oldDevice(v2.c, "a")} {
		_, err := d.Stat(testCtx(t), "/sdcard/nope")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/sdcard/nope") {
			t.Fatalf("v2=%v Stat = %v, want fs.ErrNotExist", d.HasFeature("stat_v2"), err)
		}
	}
}

func TestSyncFail(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	// The shell user may not write outside its storage.
	for _, size := range []int{10, 4 << 20} {
		err := d.Push(testCtx(t), bytes.NewReader(make([]byte, size)), "/system/x", 0o644, time.Now())
		var se *syncError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "Permission denied") || !errors.Is(err, fs.ErrPermission) || se.Path != "/system/x" {
			t.Fatalf("Push %d bytes to read-only = %v, want *SyncError with the device text", size, err)
		}
	}
	err := d.Pull(testCtx(t), "/sdcard/nope", io.Discard)
	var se *syncError
	if !errors.As(err, &se) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Pull missing = %v", err)
	}
	long := "/sdcard/" + strings.Repeat("x", 1100)
	if err := d.Push(testCtx(t), strings.NewReader("x"), long, 0o644, time.Now()); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("long path = %v", err)
	}
	if _, err := d.Stat(testCtx(t), long); err == nil || !strings.Contains(err.Error(), "1024") {
		t.Fatalf("long stat path = %v", err)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	for p, body := range map[string]string{"/sdcard/d/a.txt": "aa", "/sdcard/d/b.txt": "b", "/sdcard/d/sub/c.txt": "c"} {
		if err := d.Push(testCtx(t), strings.NewReader(body), p, 0o644, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := d.List(testCtx(t), "/sdcard/d")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, fi := range list {
		if !fi.IsDir() {
			got[fi.Name()] = fi.Size()
		}
	}
	if len(got) != 2 || got["a.txt"] != 2 || got["b.txt"] != 1 {
		t.Fatalf("List = %v", got)
	}
}

func TestDialTCP(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	s.link.set(func(l *link) { l.split = true })
	ctx := testCtx(t)
	if err := s.device("a").WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	d := mustDevice(t, s.client(t), "a")
	// SoloPi's control port, through the adb tunnel; the stream outlives
	// the dial's context, like net.Dialer.
	dctx, cancel := context.WithCancel(ctx)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, err := d.DialTCP(ctx, 23342)
		if err == nil && (c.LocalAddr() == nil || c.RemoteAddr().String() != s.link.ln.Addr().String()) {
			t.Errorf("addrs %v %v", c.LocalAddr(), c.RemoteAddr())
		}
		return c, err
	}}}
	defer hc.CloseIdleConnections()
	for _, q := range []string{"harness?type=capabilities", "status?type=page"} {
		req, _ := http.NewRequestWithContext(dctx, "GET", "http://device/scheme/"+q, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || (m["success"] != true && m["page"] == nil) {
			t.Fatalf("%s: %.80s (%v)", q, body, err)
		}
	}
	cancel()

	_, err := d.DialTCP(testCtx(t), 9999)
	if !errors.Is(err, errServiceRefused) || !strings.Contains(err.Error(), "tcp:9999") {
		t.Fatalf("refused port = %v, want ErrServiceRefused", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		go func() {
			out, _, code, err := d.Shell(testCtx(t), fmt.Sprintf("echo %d; exit %d", i, i))
			if err == nil && (string(out) != fmt.Sprintf("%d\n", i) || code != i) {
				err = fmt.Errorf("call %d got %q rc %d", i, out, code)
			}
			errs <- err
		}()
	}
	for i := 0; i < 32; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// The server itself dies mid-call: that is not the device's fault, and the
// error says so.
func TestServerDiesMidCall(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	s.link.cutNext(tportReply+5+7, func() { s.link.ln.Close() })
	_, _, _, err := d.Shell(testCtx(t), shellCmd("partialpartial16")+"; sleep 1000")
	if !errors.Is(err, ErrServerUnreachable) || errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Shell = %v, want ErrServerUnreachable", err)
	}
}

// transport mirrors solopi.Transport (package solopi/adb must not import
// package solopi); a signature drift fails to compile here.
type transportIface interface {
	Serial() string
	Shell(ctx context.Context, cmd string) (stdout, stderr []byte, exitCode int, err error)
	Exec(ctx context.Context, cmd string) ([]byte, error)
	DialTCP(ctx context.Context, port int) (net.Conn, error)
	Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error
	Pull(ctx context.Context, remotePath string, w io.Writer) error
	Stat(ctx context.Context, remotePath string) (fs.FileInfo, error)
}

var _ transportIface = (*Device)(nil)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A local write failure during Pull is the caller's problem, not the
// device's: it must not be reported as ErrDeviceGone.
func TestPullLocalWriteError(t *testing.T) {
	t.Parallel()
	s := newSimServer(t, "a")
	d := mustDevice(t, s.client(t), "a")
	if err := d.Push(testCtx(t), strings.NewReader("data"), "/sdcard/f", 0o644, time.Time{}); err != nil {
		t.Fatal(err)
	}
	err := d.Pull(testCtx(t), "/sdcard/f", failingWriter{})
	if err == nil || errors.Is(err, ErrDeviceGone) || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "writing local copy") {
		t.Fatalf("Pull = %v", err)
	}
}
