// Package transporttest is the conformance suite every solopi.Transport
// must pass: the simulator's in-process front, our adb client against the
// simulator's adb-server front, and our adb client through Debian's real adb
// server (interop). One suite, every backend, like restic's backend tests.
package transporttest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/solopi/device"
)

// Fixture is one backend under test. The device behind it must be a
// SoloPi-capable (simulated) Android device whose control service answers
// on HTTPPort.
type Fixture struct {
	Transport device.Transport
	HTTPPort  int
	// Scratch is a writable device directory for file tests.
	Scratch string
}

// Run runs the whole suite, its cases in parallel, each against its own
// fixture made by newFixture (so fixtures must not share a device).
func Run(t *testing.T, newFixture func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"ShellStdoutStderrExit", testShellStreams},
		{"ShellQuotingRoundTrip", testShellQuoting},
		{"ExecBinarySafe", testExecBinary},
		{"PushPullSmall", func(t *testing.T, f Fixture) { testPushPull(t, f, 11) }},
		{"PushPullMultiChunk", func(t *testing.T, f Fixture) { testPushPull(t, f, 150_000) }},
		{"PushPullMultiMegabyte", func(t *testing.T, f Fixture) { testPushPull(t, f, 5<<20+7) }},
		{"StatMissing", testStatMissing},
		{"PullMissing", testPullMissing},
		{"DialTCPHTTP", testDialHTTP},
		{"ConcurrentQueries", testConcurrent},
		{"CancelledContext", testCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // every case has its own fixture
			f := newFixture(t)
			tc.fn(t, f)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func testShellStreams(t *testing.T, f Fixture) {
	out, errb, code, err := f.Transport.Shell(ctx(t), "echo out; echo err >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "out\n" || string(errb) != "err\n" || code != 3 {
		t.Fatalf("got stdout %q stderr %q code %d", out, errb, code)
	}
	_, _, code, err = f.Transport.Shell(ctx(t), "true")
	if err != nil || code != 0 {
		t.Fatalf("true: code %d err %v", code, err)
	}
}

func testShellQuoting(t *testing.T, f Fixture) {
	hostile := []string{"with space", "it's", `"dq"`, "$HOME", "`id`", "$(id)", "a;b&&c|d", "*", "", "-n",
		"tab\there", `back\slash`, "支付 & 退款", `{"k":[1,2]}`, "%s", "trailing "}
	for _, s := range hostile {
		// printf, not echo: `echo -n` is an option on the device too.
		out, _, code, err := f.Transport.Shell(ctx(t), device.ShellJoin("printf", "%s\n", s))
		if err != nil || code != 0 {
			t.Fatalf("printf %q: code %d err %v", s, code, err)
		}
		if string(out) != s+"\n" {
			t.Errorf("printf %q came back as %q", s, out)
		}
	}
}

func testExecBinary(t *testing.T, f Fixture) {
	b, err := f.Transport.Exec(ctx(t), "screencap -p")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 100 {
		t.Fatalf("screencap returned %d bytes starting %q", len(b), b[:min(len(b), 8)])
	}
	if bytes.Contains(b[:8], []byte("\r\r\n")) {
		t.Fatal("PNG header mangled")
	}
}

func testPushPull(t *testing.T, f Fixture, size int) {
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	remote := fmt.Sprintf("%s/pp-%d.bin", f.Scratch, size)
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := f.Transport.Push(ctx(t), bytes.NewReader(data), remote, 0o644, mtime); err != nil {
		t.Fatal(err)
	}
	st, err := f.Transport.Stat(ctx(t), remote)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != int64(size) || st.IsDir() {
		t.Fatalf("stat size %d dir %v, want %d", st.Size(), st.IsDir(), size)
	}
	var got bytes.Buffer
	if err := f.Transport.Pull(ctx(t), remote, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("pulled %d bytes differ from the %d pushed", got.Len(), size)
	}
}

func testStatMissing(t *testing.T, f Fixture) {
	_, err := f.Transport.Stat(ctx(t), f.Scratch+"/does-not-exist")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing = %v, want fs.ErrNotExist", err)
	}
	st, err := f.Transport.Stat(ctx(t), f.Scratch)
	if err != nil || !st.IsDir() {
		t.Fatalf("Stat scratch dir = %v, %v", st, err)
	}
}

func testPullMissing(t *testing.T, f Fixture) {
	err := f.Transport.Pull(ctx(t), f.Scratch+"/nope.bin", io.Discard)
	if err == nil {
		t.Fatal("pulling a missing file succeeded")
	}
}

func get(c context.Context, f Fixture, path string) (int, string, error) {
	conn, err := f.Transport.DialTCP(c, f.HTTPPort)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	if dl, ok := c.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	req, _ := http.NewRequestWithContext(c, http.MethodGet, "http://127.0.0.1"+path, nil)
	req.Close = true
	if err := req.Write(conn); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func testDialHTTP(t *testing.T, f Fixture) {
	code, body, err := get(ctx(t), f, "/scheme/harness?type=capabilities")
	if err != nil {
		t.Fatal(err)
	}
	if code != 200 || !strings.Contains(body, `"protocolVersion":"2.0"`) {
		t.Fatalf("HTTP %d body %s", code, body)
	}
}

func testConcurrent(t *testing.T, f Fixture) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 32; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, body, err := get(ctx(t), f, "/scheme/harness?type=capabilities"); err != nil || !strings.Contains(body, "success") {
				errs <- fmt.Errorf("query: %v %s", err, body)
			}
		}()
		go func(i int) {
			defer wg.Done()
			out, _, code, err := f.Transport.Shell(ctx(t), fmt.Sprintf("echo %d", i))
			if err != nil || code != 0 || string(out) != fmt.Sprintf("%d\n", i) {
				errs <- fmt.Errorf("shell %d: %q %d %v", i, out, code, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testCancelled(t *testing.T, f Fixture) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, _, _, err := f.Transport.Shell(c, "echo never")
	if err == nil {
		t.Fatal("shell with a cancelled context succeeded")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("cancelled call did not return promptly")
	}
}
