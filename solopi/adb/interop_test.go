//go:build interop

package adb

// Interop tests: our client against Debian's real adb server, which talks
// over the real transport protocol to the simulator's fake adbd
// (solopi/sim/adbd) fronting the simulator's phone (solopi/sim/android: its
// mvdan.cc/sh shell and in-memory file system), with the device's TCP ports
// wired to test-owned HTTP servers. Run with
//
//	go test -tags interop ./solopi/adb/
//	go test -tags interop -run '^$' -bench . ./solopi/adb/
//
// Each test starts its own `adb -P <free port> nodaemon server` with HOME
// in a temporary directory (the adb key lands there) and ADB_EMU=0 (no
// emulator port scan); never port 5037.

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
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/realadb"
	"github.com/solopi-dev/solopi/sim/adbd"
	"github.com/solopi-dev/solopi/sim/android"
)

type adbServer struct {
	bin  string
	port int
	home string
	c    *Client
}

// startAdbServer runs Debian's real adb server (internal/realadb: a free
// private port, a temporary HOME, killed at cleanup) and waits until our
// client gets an answer from it.
func startAdbServer(t testing.TB) *adbServer {
	t.Helper()
	srv := realadb.Start(t)
	c, err := NewClient(WithPort(srv.Port), WithoutServerStart())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Version(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("adb server on %d not answering: %v", srv.Port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &adbServer{bin: srv.Bin, port: srv.Port, home: srv.Home, c: c}
}

// testPhone is the device behind one fake adbd: the simulator's phone
// provides the adbd.Device methods (shell, file system), except DialTCP,
// which reaches the host servers registered with listen.
type testPhone struct {
	*android.Phone
	adbd *adbd.Adbd

	mu    sync.Mutex
	ports map[int]string // device port -> host address
}

var _ adbd.Device = (*testPhone)(nil)

// startPhone starts a phone behind a fake adbd on a free loopback port.
// Its /sdcard starts empty, so a listing shows only what a test pushed.
func startPhone(t testing.TB) *testPhone {
	t.Helper()
	p := &testPhone{
		Phone: android.New(android.Config{Model: "FakePhone", Product: "fakephone", Device: "fake"}, nil),
		ports: map[int]string{},
	}
	ents, err := p.FS().ReadDir("/sdcard")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := p.FS().RemoveAll("/sdcard/" + e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	p.adbd, err = adbd.ListenAdbd(context.Background(), "127.0.0.1:0", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.adbd.Close() })
	return p
}

func (p *testPhone) addr() string { return p.adbd.Addr() }

// listen makes device port port reach the host server at addr.
func (p *testPhone) listen(port int, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ports[port] = addr
}

func (p *testPhone) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	p.mu.Lock()
	addr, ok := p.ports[port]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("connect 127.0.0.1:%d: %w", port, syscall.ECONNREFUSED)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// attach connects the server to a fresh fake adbd and waits until the
// device is in state "device".
func (s *adbServer) attach(t testing.TB) (*testPhone, *Device) {
	t.Helper()
	a := startPhone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := s.c.Connect(ctx, a.addr()); err != nil {
		t.Fatal(err)
	}
	s.waitState(t, ctx, a.addr(), stateDevice)
	d, err := s.c.Device(ctx, a.addr())
	if err != nil {
		t.Fatal(err)
	}
	return a, d
}

// waitState polls the server until serial is in state want.
func (s *adbServer) waitState(t testing.TB, ctx context.Context, serial, want string) {
	t.Helper()
	for {
		st, err := s.c.GetState(ctx, serial)
		if err == nil && st == want {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("device %s never %q: %q %v", serial, want, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInteropHostServices(t *testing.T) {
	s := startAdbServer(t)
	ctx := testCtx(t)
	if v, err := s.c.Version(ctx); err != nil || v != 41 {
		t.Fatalf("Version = %d, %v", v, err)
	}
	if _, err := s.c.Device(ctx, ""); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("no device: %v", err)
	}
	a, d := s.attach(t)
	if !d.HasFeature("shell_v2") || !d.HasFeature("stat_v2") {
		t.Fatalf("features %v", d.Features())
	}
	list, err := s.c.Devices(ctx)
	if err != nil || len(list) != 1 || list[0].Serial != a.addr() || list[0].Model != "FakePhone" || list[0].Product != "fakephone" || list[0].TransportID == 0 {
		t.Fatalf("Devices = %+v, %v", list, err)
	}
	if d2, err := s.c.Device(ctx, ""); err != nil || d2.Serial() != a.addr() {
		t.Fatalf("auto select = %v, %v", d2, err)
	}
	b, _ := s.attach(t)
	_, err = s.c.Device(ctx, "")
	var e *Error
	if !errors.Is(err, ErrMultipleDevices) || !errors.As(err, &e) || len(e.Devices) != 2 {
		t.Fatalf("two devices: %v", err)
	}
	if _, err := s.c.Device(ctx, "127.0.0.1:1"); !errors.Is(err, ErrDeviceNotFound) {
		t.Fatalf("unknown serial: %v", err)
	}
	var ce *connectError
	if err := s.c.Connect(ctx, "127.0.0.1:1"); !errors.As(err, &ce) {
		t.Fatalf("connect refused port: %v", err)
	}
	if err := s.c.Disconnect(ctx, b.addr()); err != nil {
		t.Fatal(err)
	}
}

func TestInteropShell(t *testing.T) {
	s := startAdbServer(t)
	_, d := s.attach(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		cmd, out, errOut string
		code             int
	}{
		{"echo hi", "hi\n", "", 0},
		{"echo out; echo err >&2; exit 3", "out\n", "err\n", 3},
		{"exit 255", "", "", 255},
		{"false", "", "", 1},
		{"nosuch", "", "/system/bin/sh: nosuch: inaccessible or not found\n", 127}, // Android mksh's text
		{"echo " + shellQuote("it's a 'test' $HOME `x` \\ ;"), "it's a 'test' $HOME `x` \\ ;\n", "", 0},
	} {
		out, errOut, code, err := d.Shell(ctx, tc.cmd)
		if err != nil || string(out) != tc.out || string(errOut) != tc.errOut || code != tc.code {
			t.Errorf("Shell(%q) = %q, %q, %d, %v; want %q, %q, %d", tc.cmd, out, errOut, code, err, tc.out, tc.errOut, tc.code)
		}
	}
}

func TestInteropPushPullExec(t *testing.T) {
	s := startAdbServer(t)
	a, d := s.attach(t)
	ctx := testCtx(t)
	big := make([]byte, 5<<20+777)
	rand.NewChaCha8([32]byte{7}).Read(big)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; i < 4096; i++ {
		png = append(png, byte(i), byte(i>>8), '\r', '\n', 0)
	}
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, data := range map[string][]byte{"/sdcard/big.bin": big, "/sdcard/shot.png": png, "/sdcard/empty": nil} {
		if err := d.Push(ctx, bytes.NewReader(data), name, 0o644, mtime); err != nil {
			t.Fatalf("Push %s: %v", name, err)
		}
		if local, _ := a.FS().ReadFile(name); !bytes.Equal(local, data) {
			t.Fatalf("device copy of %s differs (%d vs %d bytes)", name, len(local), len(data))
		}
		var got bytes.Buffer
		if err := d.Pull(ctx, name, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("Pull %s: %d bytes, identical=%v, %v", name, got.Len(), bytes.Equal(got.Bytes(), data), err)
		}
		fi, err := d.Stat(ctx, name)
		if err != nil || fi.Size() != int64(len(data)) || !fi.Mode().IsRegular() || !fi.ModTime().Equal(mtime) {
			t.Fatalf("Stat %s = %v, %v", name, fi, err)
		}
	}
	out, err := d.Exec(ctx, "cat /sdcard/shot.png")
	if err != nil || !bytes.Equal(out, png) {
		t.Fatalf("Exec cat png: %d bytes identical=%v, %v", len(out), bytes.Equal(out, png), err)
	}
	if _, err := d.Stat(ctx, "/sdcard/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing = %v", err)
	}
	if err := d.Pull(ctx, "/sdcard/nope", io.Discard); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Pull missing = %v", err)
	}
	// The device lists "." and ".." too; List leaves them out.
	list, err := d.List(ctx, "/sdcard")
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %v, %v", list, err)
	}
	sizes := map[string]int{"big.bin": len(big), "shot.png": len(png), "empty": 0}
	for _, fi := range list {
		if n, ok := sizes[fi.Name()]; !ok || fi.Size() != int64(n) || !fi.Mode().IsRegular() {
			t.Errorf("List entry %s: %d bytes, mode %v", fi.Name(), fi.Size(), fi.Mode())
		}
	}
	// A file where a directory should be: the device cannot create it.
	err = d.Push(ctx, strings.NewReader("x"), "/sdcard/big.bin/sub", 0o644, mtime)
	var se *syncError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "couldn't create file") {
		t.Fatalf("Push under a file = %v", err)
	}
}

func TestInteropTunnel(t *testing.T) {
	s := startAdbServer(t)
	a, d := s.attach(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB body
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(big)
			return
		}
		fmt.Fprintf(w, `{"success":true,"q":%q}`, r.URL.RawQuery)
	}))
	defer web.Close()
	a.listen(23342, web.Listener.Addr().String())
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialTCP(ctx, 23342)
	}}}
	defer hc.CloseIdleConnections()
	for i := 0; i < 3; i++ {
		resp, err := hc.Get("http://device/scheme/harness?type=capabilities")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != `{"success":true,"q":"type=capabilities"}` {
			t.Fatalf("body %q", body)
		}
	}
	resp, err := hc.Get("http://device/big")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, big) {
		t.Fatalf("big body: %d bytes", len(body))
	}
	if _, err := d.DialTCP(testCtx(t), 9); !errors.Is(err, errServiceRefused) {
		t.Fatalf("nothing on device port 9: %v", err)
	}
}

func TestInteropConcurrent(t *testing.T) {
	s := startAdbServer(t)
	a, d := s.attach(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.URL.Query().Get("i"))
	}))
	defer web.Close()
	a.listen(23342, web.Listener.Addr().String())
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialTCP(ctx, 23342)
	}, DisableKeepAlives: true}
	hc := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				out, _, code, err := d.Shell(testCtx(t), fmt.Sprintf("echo %d; exit %d", i, i))
				if err == nil && (string(out) != fmt.Sprintf("%d\n", i) || code != i) {
					err = fmt.Errorf("shell %d: %q rc %d", i, out, code)
				}
				errs <- err
				return
			}
			resp, err := hc.Get(fmt.Sprintf("http://device/?i=%d", i))
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(body) != strconv.Itoa(i) {
					err = fmt.Errorf("http %d: %q", i, body)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// The device drops off the transport while a shell command and a pull are
// in flight: both calls end with ErrDeviceGone promptly. While it stays away
// the server has it offline or forgets it; once it is back (the server
// reconnects), the same Device works again.
func TestInteropDeviceVanishes(t *testing.T) {
	s := startAdbServer(t)
	a, d := s.attach(t)
	ctx := testCtx(t)
	if err := a.WriteFile("/sdcard/huge", 0o644, time.Now(), bytes.NewReader(make([]byte, 64<<20))); err != nil {
		t.Fatal(err)
	}
	type result struct {
		what string
		err  error
	}
	res := make(chan result, 2)
	go func() {
		_, _, _, err := d.Shell(ctx, "echo started; sleep 30")
		res <- result{"shell", err}
	}()
	go func() {
		// A slow writer keeps the pull in flight when the device goes.
		err := d.Pull(ctx, "/sdcard/huge", &slowWriter{})
		res <- result{"pull", err}
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	a.adbd.SetOnline(false) // Drop, and refuse the server's reconnects
	for i := 0; i < 2; i++ {
		r := <-res
		if !errors.Is(r.err, ErrDeviceGone) {
			t.Errorf("%s after vanish = %v, want ErrDeviceGone", r.what, r.err)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("calls took %v to notice", el)
	}
	// Later calls: the server lists it offline (reconnecting) or not at all.
	_, _, _, err := d.Shell(ctx, "true")
	if !errors.Is(err, ErrOffline) && !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("after vanish: %v", err)
	}
	a.adbd.SetOnline(true)
	s.waitState(t, ctx, a.addr(), stateDevice)
	if out, _, code, err := d.Shell(ctx, "echo back"); err != nil || string(out) != "back\n" || code != 0 {
		t.Fatalf("after reconnect: %q, %d, %v", out, code, err)
	}
}

type slowWriter struct{ n int }

func (w *slowWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	time.Sleep(time.Millisecond)
	return len(p), nil
}

// With nothing on the port, the client runs `adb -P <port> start-server`
// (the real binary, daemonizing) and retries.
func TestInteropStartServer(t *testing.T) {
	bin := realadb.Binary(t)
	port := freePort(t)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ADB_EMU", "0")
	t.Cleanup(func() { exec.Command(bin, "-P", strconv.Itoa(port), "kill-server").Run() })
	c, err := NewClient(WithPort(port), WithAdbPath(bin))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := c.Version(ctx); err != nil || v != 41 {
		t.Fatalf("Version = %d, %v", v, err)
	}
}

// BenchmarkInteropShell compares one `echo` through our client with running
// `adb -P <port> -s <serial> shell echo hi` per call, same server and device.
func BenchmarkInteropShell(b *testing.B) {
	s := startAdbServer(b)
	_, d := s.attach(b)
	ctx := context.Background()
	b.Run("client", func(b *testing.B) {
		for b.Loop() {
			out, _, code, err := d.Shell(ctx, "echo hi")
			if err != nil || code != 0 || string(out) != "hi\n" {
				b.Fatalf("%q %d %v", out, code, err)
			}
		}
	})
	b.Run("adb-binary", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(s.bin, "-P", strconv.Itoa(s.port), "-s", d.Serial(), "shell", "echo", "hi")
			cmd.Env = append(os.Environ(), "HOME="+s.home)
			out, err := cmd.Output()
			if err != nil || string(out) != "hi\n" {
				b.Fatalf("%q %v", out, err)
			}
		}
	})
}
