package managedcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/managed"
)

const serveToken = "serve-token-1234567890abcd"

type serving struct {
	url  string
	addr string
	stop context.CancelFunc
	done chan serveEnd
}

type serveEnd struct {
	res cmdutil.Result
	err error
}

// startServe runs managed-serve's run function on a fresh store with the
// given limits until stop.
func startServe(t *testing.T, lim serveLimits) *serving {
	t.Helper()
	s, err := managed.Open(context.Background(), filepath.Join(t.TempDir(), "managed.sqlite"), managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lines := &lineWriter{first: make(chan string, 1)}
	sv := &serving{stop: cancel, done: make(chan serveEnd, 1)}
	go func() {
		res, err := runManagedServe(ctx, s, managedServeOptions{bearerToken: serveToken, bind: "127.0.0.1", host: "host-a", limits: lim}, lines)
		sv.done <- serveEnd{res, err}
	}()
	select {
	case first := <-lines.first:
		var l managedListening
		if err := json.Unmarshal([]byte(first), &l); err != nil {
			t.Fatal(err)
		}
		sv.url, sv.addr = l.Listening.URL, l.Listening.Address
	case end := <-sv.done:
		t.Fatalf("managed-serve ended: %+v %v", end.res, end.err)
	}
	return sv
}

// headersWithoutBody opens a connection and sends a request's headers
// announcing a body it never sends.
func headersWithoutBody(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/recover HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", addr, serveToken)
	return c
}

// A connection that sends its headers and then never its body is closed by
// the server once the read timeout passes.
func TestManagedServeClosesStalledConnections(t *testing.T) {
	t.Parallel()
	lim := defaultServeLimits()
	lim.read = 300 * time.Millisecond
	sv := startServe(t, lim)
	c := headersWithoutBody(t, sv.addr)
	// A safety net only: the server must close well before it.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the stalled connection was not closed by the server: %v (read %q)", err, rest)
	}
	// The server still serves everyone else.
	resp, err := http.Get(sv.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health after the stall: %d", resp.StatusCode)
	}
}

// SIGINT/SIGTERM (the context ending) stops the server after a bounded
// grace even while a client holds a request open without its body, and the
// command ends as interrupted (exit 130) with its end object, not
// serve_failed.
func TestManagedServeStopsDespiteStalledClients(t *testing.T) {
	t.Parallel()
	lim := defaultServeLimits()
	lim.read, lim.grace = time.Hour, 100*time.Millisecond
	sv := startServe(t, lim)
	stalled := make([]net.Conn, 5)
	for i := range stalled {
		stalled[i] = headersWithoutBody(t, sv.addr)
	}
	// The requests reached their handlers (which wait for the bodies)
	// before the interrupt: one request answered on each side.
	resp, err := http.Get(sv.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sv.stop()
	end := <-sv.done
	if end.err != nil || end.res.Exit != 130 {
		t.Fatalf("after the interrupt: exit %d, error %v", end.res.Exit, end.err)
	}
	if r, ok := end.res.Value.(managedServeResult); !ok || !r.Stopped {
		t.Fatalf("end object %+v", end.res.Value)
	}
	for _, c := range stalled {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := bufio.NewReader(c).ReadString(0); err != io.EOF && !strings.Contains(fmt.Sprint(err), "reset") {
			t.Fatalf("a stalled connection survived the stop: %v", err)
		}
	}
}
