package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakePNG is what the fake `screencap -p` prints: a PNG signature plus bytes
// a pty or text handling would corrupt (CR LF, LF, NUL, 0xff).
var fakePNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n\r\n\xff\x00tail")

// fakeDevice is an in-memory-ish Device for tests: files live under a
// t.TempDir, the shell is mvdan.cc/sh with a few fake commands, and device
// port 23342 is a tiny HTTP echo server.
type fakeDevice struct {
	serial string
	root   string
	http   string // host address standing in for device port 23342

	mu   sync.Mutex
	cmds []string

	// slowOpened is closed when /slow is first read: its reader hands out
	// 1 MiB and then blocks until slowRelease, to hold a pull mid-transfer.
	slowOpened  chan struct{}
	slowRelease chan struct{}
	slowOnce    sync.Once
}

const solopiPort = 23342

func newFakeDevice(t testing.TB, serial string) *fakeDevice {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "echo %s %s %s", r.Method, r.URL.Path, body)
	}))
	t.Cleanup(srv.Close)
	d := &fakeDevice{
		serial: serial, root: t.TempDir(), http: srv.Listener.Addr().String(),
		slowOpened: make(chan struct{}), slowRelease: make(chan struct{}),
	}
	t.Cleanup(func() { close(d.slowRelease) })
	// Directories every Android device has.
	for _, dir := range []string{"/data/local/tmp", "/sdcard"} {
		if err := os.MkdirAll(d.hostPath(dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// /slow claims 10 MiB so a pull starts; its content comes from slowReader.
	if err := os.WriteFile(d.hostPath("/slow"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(d.hostPath("/slow"), 10<<20); err != nil {
		t.Fatal(err)
	}
	return d
}

// slowReader serves /slow: 1 MiB, then nothing until released or closed.
type slowReader struct {
	d      *fakeDevice
	left   []byte
	closed chan struct{}
	once   sync.Once
}

func (r *slowReader) Read(p []byte) (int, error) {
	r.d.slowOnce.Do(func() { close(r.d.slowOpened) })
	if len(r.left) > 0 {
		n := copy(p, r.left)
		r.left = r.left[n:]
		return n, nil
	}
	select {
	case <-r.d.slowRelease:
	case <-r.closed:
	}
	return 0, errors.New("slow file released")
}

func (r *slowReader) Close() error {
	r.once.Do(func() { close(r.closed) })
	return nil
}

func (d *fakeDevice) Serial() string { return d.serial }

func (d *fakeDevice) Props() (string, string, string) { return "simphone", "SimPhone", "sim" }

func (d *fakeDevice) commands() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.cmds...)
}

// hostPath maps an absolute device path into the temp dir; Clean on a
// rooted path keeps ".." from escaping it.
func (d *fakeDevice) hostPath(p string) string {
	return filepath.Join(d.root, filepath.FromSlash(path.Clean("/"+p)))
}

func (d *fakeDevice) Stat(p string) (fs.FileInfo, error) { return os.Stat(d.hostPath(p)) }

func (d *fakeDevice) ReadDir(p string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(d.hostPath(p))
	if err != nil {
		return nil, err
	}
	var out []fs.FileInfo
	for _, e := range entries {
		fi, err := e.Info()
		if err == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}

func (d *fakeDevice) Open(p string) (io.ReadCloser, error) {
	if p == "/slow" {
		return &slowReader{d: d, left: pattern(1 << 20), closed: make(chan struct{})}, nil
	}
	return os.Open(d.hostPath(p))
}

func (d *fakeDevice) WriteFile(p string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	hp := d.hostPath(p)
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(hp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(hp, mode.Perm()); err != nil { // bypass the umask
		return err
	}
	return os.Chtimes(hp, mtime, mtime)
}

func (d *fakeDevice) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port != solopiPort {
		return nil, fmt.Errorf("connect 127.0.0.1:%d: %w", port, syscall.ECONNREFUSED)
	}
	var dialer net.Dialer
	return dialer.DialContext(ctx, "tcp", d.http)
}

// RunShell interprets a tiny shell: commands separated by ';', words split
// on blanks with single quotes stripped, `>&2` redirection, and `exit N`.
// That is all the transport tests need; the real device shell is elsewhere.
func (d *fakeDevice) RunShell(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int {
	d.mu.Lock()
	d.cmds = append(d.cmds, cmd)
	d.mu.Unlock()
	if cmd == "" { // interactive: the script comes on stdin
		b, _ := io.ReadAll(stdin)
		cmd, stdin = string(b), strings.NewReader("")
	}
	status := 0
	for _, line := range strings.FieldsFunc(cmd, func(r rune) bool { return r == ';' || r == '\n' }) {
		var args []string
		out := stdout
		for _, w := range strings.Fields(line) {
			if w == ">&2" {
				out = stderr
				continue
			}
			args = append(args, strings.Trim(w, "'"))
		}
		if len(args) == 0 {
			continue
		}
		if args[0] == "exit" {
			n, _ := strconv.Atoi(args[1])
			return n
		}
		status = d.exec(ctx, args, stdin, out, stderr)
		if ctx.Err() != nil {
			return 130
		}
	}
	return status
}

// exec runs the device's "binaries".
func (d *fakeDevice) exec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch args[0] {
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args[1:], " "))
		return 0
	case "cat":
		if len(args) == 1 {
			if _, err := io.Copy(stdout, stdin); err != nil {
				return 1
			}
			return 0
		}
		for _, p := range args[1:] {
			b, err := os.ReadFile(d.hostPath(p))
			if err != nil {
				fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", p)
				return 1
			}
			stdout.Write(b)
		}
		return 0
	case "screencap":
		stdout.Write(fakePNG)
		return 0
	case "blob": // blob N: N bytes of a known pattern on stdout
		n, _ := strconv.Atoi(args[1])
		if _, err := stdout.Write(pattern(n)); err != nil {
			return 1
		}
		return 0
	case "sleep":
		secs, _ := strconv.ParseFloat(args[1], 64)
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
			return 0
		case <-ctx.Done():
			return 130
		}
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", args[0])
	return 127
}

// pattern is deterministic, non-repeating-at-small-periods content, so a
// misplaced or dropped chunk shows up as a mismatch.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
