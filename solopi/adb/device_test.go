package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
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
	off := phone("offline-1")
	off.state = "offline"
	unauth := phone("unauth-1")
	unauth.state = "unauthorized"
	rec := phone("rec-1")
	rec.state = "recovery"
	tests := []struct {
		name    string
		devs    []*fakeDevice
		serial  string
		want    error
		serialW string
	}{
		{"none", nil, "", ErrNoDevice, ""},
		{"one", []*fakeDevice{phone("a")}, "", nil, "a"},
		{"two ready", []*fakeDevice{phone("a"), phone("b")}, "", ErrMultipleDevices, ""},
		{"one ready one offline", []*fakeDevice{off, phone("b")}, "", nil, "b"},
		{"only unauthorized", []*fakeDevice{unauth}, "", ErrUnauthorized, ""},
		{"only offline", []*fakeDevice{off}, "", ErrOffline, ""},
		{"only recovery", []*fakeDevice{rec}, "", ErrNotReady, ""},
		{"offline and unauthorized", []*fakeDevice{off, unauth}, "", ErrNoDevice, ""},
		{"serial ok among two", []*fakeDevice{phone("a"), phone("b")}, "b", nil, "b"},
		{"serial not found", []*fakeDevice{phone("a")}, "zz", ErrDeviceNotFound, ""},
		{"serial offline", []*fakeDevice{off}, "offline-1", ErrOffline, ""},
		{"serial unauthorized", []*fakeDevice{unauth}, "unauth-1", ErrUnauthorized, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeServer(t, tc.devs...)
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
	s := newFakeServer(t, phone("127.0.0.1:5601"))
	c := s.client(t)
	ctx := testCtx(t)
	if err := c.Connect(ctx, "127.0.0.1:5601"); err != nil {
		t.Fatalf("already connected must succeed: %v", err)
	}
	err := c.Connect(ctx, "127.0.0.1:5690")
	var ce *ConnectError
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
			p := phone("a")
			p.splitWrites = split
			s := newFakeServer(t, p)
			d := mustDevice(t, s.client(t), "a")
			for _, tc := range []struct {
				cmd         string
				out, errOut string
				code        int
			}{
				{"echo hi", "hi\n", "", 0},
				{"echo out; warn err; exit 3", "out\n", "err\n", 3},
				{"exit 255", "", "", 255},
				{"nosuchcmd", "", "sh: nosuchcmd: not found\n", 127},
				{"echo " + strings.Repeat("x", 65_000), strings.Repeat("x", 65_000) + "\n", "", 0},
			} {
				out, errOut, code, err := d.Shell(testCtx(t), tc.cmd)
				if err != nil || string(out) != tc.out || string(errOut) != tc.errOut || code != tc.code {
					t.Errorf("Shell(%.20q) = %.20q, %q, %d, %v; want %.20q, %q, %d", tc.cmd, out, errOut, code, err, tc.out, tc.errOut, tc.code)
				}
			}
		})
	}
}

func TestShellCommandTooLong(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, phone("a"))
	d := mustDevice(t, s.client(t), "a")
	_, _, _, err := d.Shell(testCtx(t), "echo "+strings.Repeat("x", 70_000))
	if err == nil || !strings.Contains(err.Error(), "exceeds") || errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Shell(70 kB) = %v, want a local length error", err)
	}
}

func TestShellV1Fallback(t *testing.T) {
	t.Parallel()
	p := phone("old")
	p.features = nil // Android < 7: no shell_v2, no stat_v2
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "old")
	out, errOut, code, err := d.Shell(testCtx(t), "echo hi; warn oops; exit 4")
	if err != nil || string(out) != "hi\noops\n" || errOut != nil || code != ExitUnknown {
		t.Fatalf("v1 Shell = %q, %q, %d, %v", out, errOut, code, err)
	}
	if log := s.reqLog(); !contains(log, "shell:echo hi; warn oops; exit 4") {
		t.Fatalf("v1 service not used: %q", log)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestExecBinary(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; i < 256; i++ {
		png = append(png, byte(i), '\n', '\r')
	}
	p := phone("a")
	p.exec = func(cmd string) []byte {
		if cmd != "screencap -p" {
			return nil
		}
		return png
	}
	p.splitWrites = true
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	out, err := d.Exec(testCtx(t), "screencap -p")
	if err != nil || !bytes.Equal(out, png) {
		t.Fatalf("Exec = %d bytes, %v; want %d identical bytes", len(out), err, len(png))
	}
}

// The server closes the stream in the middle of a shell v2 packet and the
// device disappears: the call must end with ErrDeviceGone, not hang.
func TestDeviceGoneMidShell(t *testing.T) {
	t.Parallel()
	p := phone("a")
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	p.serviceHook = func(fc *fakeConn, svc string) bool {
		fc.okay()
		// Read the client's close-stdin packet first, as a real server
		// does: closing over unread bytes would reset the connection
		// instead of ending it.
		io.ReadFull(fc.br, make([]byte, 5))
		fc.write([]byte("\x01\x10\x00\x00\x00partial"))
		s.removeDevice("a")
		return true // closes the connection
	}
	start := time.Now()
	out, _, code, err := d.Shell(testCtx(t), "logcat")
	if !errors.Is(err, ErrDeviceGone) || !errors.Is(err, io.ErrUnexpectedEOF) || code != ExitUnknown {
		t.Fatalf("Shell = %q, %d, %v; want ErrDeviceGone", out, code, err)
	}
	if string(out) != "partial" {
		t.Errorf("partial output lost: %q", out)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
	// And the next call is refused by the server: still ErrDeviceGone.
	if _, _, _, err := d.Shell(testCtx(t), "true"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("next Shell = %v, want ErrDeviceGone", err)
	}
}

func TestDeviceGoneMidPull(t *testing.T) {
	t.Parallel()
	p := phone("a")
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	p.serviceHook = func(fc *fakeConn, svc string) bool {
		fc.okay()
		var h [8]byte
		io.ReadFull(fc.br, h[:])
		io.ReadFull(fc.br, make([]byte, h[4]))
		fc.write(syncMsg("DATA", 5, []byte("hello")))
		fc.write([]byte("DATA\x00\x01\x00\x00abc"))
		return true
	}
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
	p := phone("a")
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	p.serviceHook = func(fc *fakeConn, svc string) bool {
		fc.okay()
		fc.write([]byte("\x89PNG\r\n"))
		s.removeDevice("a")
		return true
	}
	if _, err := d.Exec(testCtx(t), "screencap -p"); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Exec = %v, want ErrDeviceGone", err)
	}
}

func TestDeviceGoneBetweenCalls(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, phone("a"))
	d := mustDevice(t, s.client(t), "a")
	s.setDevices()
	_, err := d.Stat(testCtx(t), "/sdcard")
	if !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("Stat = %v, want ErrDeviceGone", err)
	}
	p := phone("a")
	p.state = "offline"
	s.setDevices(p)
	if _, err := d.DialTCP(testCtx(t), 23342); !errors.Is(err, ErrOffline) {
		t.Fatalf("DialTCP = %v, want ErrOffline", err)
	}
}

func TestContextCancelMidCall(t *testing.T) {
	t.Parallel()
	p := phone("a")
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	p.serviceHook = func(fc *fakeConn, svc string) bool {
		fc.okay()
		io.Copy(io.Discard, fc.br) // a command that never ends
		return true
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, _, _, err := d.Shell(ctx, "sleep 1000")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Shell = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("cancel took %v", el)
	}
	ctx, cancel2 := context.WithTimeout(testCtx(t), 80*time.Millisecond)
	defer cancel2()
	var w bytes.Buffer
	if err := d.Pull(ctx, "/x", &w); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Pull = %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel3 := context.WithTimeout(testCtx(t), 80*time.Millisecond)
	defer cancel3()
	if _, err := d.Exec(ctx, "cat /dev/zero"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec = %v, want context.DeadlineExceeded", err)
	}
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
		t.Skip("a POSIX shell script stands in for adb; not on Windows (CI runs Linux)")
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

// adb start-server succeeds: the "server" (our fake, started by the test when
// the script runs) then answers, and the call goes through.
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
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Error(err)
			return
		}
		s := &fakeServer{t: t, ln: ln}
		s.wg.Add(1)
		go s.acceptLoop()
		t.Cleanup(func() { ln.Close(); s.wg.Wait() })
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
			p := phone("a")
			if !v2 {
				p.features = []string{"shell_v2"}
			}
			s := newFakeServer(t, p)
			d := mustDevice(t, s.client(t), "a")
			data := make([]byte, 3*adbwire.SyncDataMax+12345)
			rand.NewChaCha8([32]byte{1}).Read(data)
			mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
			const path = "/sdcard/Android/data/com.alipay.hulu/files/harness-import/case.json"
			if err := d.Push(testCtx(t), bytes.NewReader(data), path, 0o640, mtime); err != nil {
				t.Fatal(err)
			}
			if len(p.chunks) != 4 || p.chunks[0] != adbwire.SyncDataMax || p.chunks[3] != 12345 {
				t.Fatalf("chunks = %v", p.chunks)
			}
			if f := p.files[path]; f.mode != 0o100640 || f.mtime != uint32(mtime.Unix()) {
				t.Fatalf("stored mode %o mtime %d", f.mode, f.mtime)
			}
			var got bytes.Buffer
			if err := d.Pull(testCtx(t), path, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("Pull: %d bytes identical=%v, %v", got.Len(), bytes.Equal(got.Bytes(), data), err)
			}
			fi, err := d.Stat(testCtx(t), path)
			if err != nil || fi.Size() != int64(len(data)) || fi.Mode() != 0o640 || !fi.ModTime().Equal(mtime) || fi.Name() != "case.json" || fi.IsDir() {
				t.Fatalf("Stat = %v %v %v %v, %v", fi.Size(), fi.Mode(), fi.ModTime(), fi.Name(), err)
			}
			// An empty file is a SEND with no DATA.
			if err := d.Push(testCtx(t), strings.NewReader(""), "/sdcard/empty", 0, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if f := p.files["/sdcard/empty"]; len(f.data) != 0 || f.mode != 0o100644 || f.mtime == 0 {
				t.Fatalf("empty file: %+v", f)
			}
		})
	}
}

func TestStatMissing(t *testing.T) {
	t.Parallel()
	for _, v2 := range []bool{true, false} {
		p := phone("a")
		if !v2 {
			p.features = nil
		}
		s := newFakeServer(t, p)
		d := mustDevice(t, s.client(t), "a")
		_, err := d.Stat(testCtx(t), "/sdcard/nope")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/sdcard/nope") {
			t.Fatalf("v2=%v Stat = %v, want fs.ErrNotExist", v2, err)
		}
	}
}

func TestSyncFail(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, phone("a"))
	d := mustDevice(t, s.client(t), "a")
	for _, size := range []int{10, 4 << 20} {
		err := d.Push(testCtx(t), bytes.NewReader(make([]byte, size)), "/readonly/x", 0o644, time.Now())
		var se *SyncError
		if !errors.As(err, &se) || se.Msg != "couldn't create file: Permission denied" || !errors.Is(err, fs.ErrPermission) || se.Path != "/readonly/x" {
			t.Fatalf("Push %d bytes to read-only = %v, want *SyncError with the device text", size, err)
		}
	}
	err := d.Pull(testCtx(t), "/sdcard/nope", io.Discard)
	var se *SyncError
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
	p := phone("a")
	p.files["/sdcard/d/a.txt"] = &fakeFile{data: []byte("aa"), mode: 0o100644, mtime: 7}
	p.files["/sdcard/d/b.txt"] = &fakeFile{data: []byte("b"), mode: 0o100600, mtime: 8}
	p.files["/sdcard/d/sub/c.txt"] = &fakeFile{data: []byte("c"), mode: 0o100600, mtime: 8}
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	list, err := d.List(testCtx(t), "/sdcard/d")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, fi := range list {
		got[fi.Name()] = fi.Size()
	}
	if len(got) != 2 || got["a.txt"] != 2 || got["b.txt"] != 1 {
		t.Fatalf("List = %v", got)
	}
}

func TestDialTCP(t *testing.T) {
	t.Parallel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer web.Close()
	p := phone("a")
	p.tcp = map[int]string{7: echo.Addr().String(), 23342: web.Listener.Addr().String()}
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")

	c, err := d.DialTCP(testCtx(t), 7)
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("ping\x00\xff"), 50_000)
	go c.Write(msg)
	got := make([]byte, len(msg))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo: %v", err)
	}
	if c.LocalAddr() == nil || c.RemoteAddr().String() != s.ln.Addr().String() {
		t.Fatalf("addrs %v %v", c.LocalAddr(), c.RemoteAddr())
	}
	c.Close()

	// The stream outlives the dial's context, like net.Dialer.
	ctx, cancel := context.WithCancel(testCtx(t))
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialTCP(ctx, 23342)
	}}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://device/scheme/harness?type=capabilities", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel()
	if string(body) != `{"path":"/scheme/harness"}` {
		t.Fatalf("HTTP body %q", body)
	}
	if log := s.reqLog(); contains(log, "forward") {
		t.Fatal("a forward was installed")
	}

	_, err = d.DialTCP(testCtx(t), 9999)
	if !errors.Is(err, ErrServiceRefused) || !strings.Contains(err.Error(), "tcp:9999") {
		t.Fatalf("refused port = %v, want ErrServiceRefused", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, phone("a"))
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
	p := phone("a")
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	p.serviceHook = func(fc *fakeConn, svc string) bool {
		fc.okay()
		fc.write([]byte("\x01\x10\x00\x00\x00partial"))
		s.ln.Close()
		return true
	}
	_, _, _, err := d.Shell(testCtx(t), "logcat")
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
	p := phone("a")
	p.files["/sdcard/f"] = &fakeFile{data: []byte("data"), mode: 0o100644}
	s := newFakeServer(t, p)
	d := mustDevice(t, s.client(t), "a")
	err := d.Pull(testCtx(t), "/sdcard/f", failingWriter{})
	if err == nil || errors.Is(err, ErrDeviceGone) || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "writing local copy") {
		t.Fatalf("Pull = %v", err)
	}
}
