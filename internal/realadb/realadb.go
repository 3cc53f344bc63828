// Package realadb starts Debian's real adb server for interop tests: on a
// free private port (never 5037), with HOME in a temporary directory so the
// adb key lands there, and with the emulator port scan off. The server runs
// in the foreground and is killed when the test ends, so no daemon outlives
// it. Without adb installed the test is skipped locally and fails when
// CI=true: CI must never go green without running the interop tests.
package realadb

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/tooltest"
)

// server is a running real adb server.
type server struct {
	Bin  string
	Port int
	Home string
}

// Binary finds adb or ends the test (skip locally, fail in CI).
func Binary(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("adb")
	if err != nil {
		tooltest.Missing(t, "adb is not installed (apt-get install -y adb): %v", err)
	}
	return p
}

// Start runs `adb -P <port> nodaemon server` and waits until it answers.
func Start(t testing.TB) *server {
	t.Helper()
	bin := Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &server{Bin: bin, Port: port, Home: t.TempDir()}
	cmd := exec.Command(bin, "-P", strconv.Itoa(port), "nodaemon", "server")
	cmd.Env = s.Env()
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("adb server log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("adb server on %d did not start: %v\n%s", port, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Env is the environment for adb clients of this server.
func (s *server) Env() []string {
	env := []string{"HOME=" + s.Home, "ADB_EMU=0", "ANDROID_ADB_SERVER_PORT=" + strconv.Itoa(s.Port)}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "ADB_EMU" && k != "ANDROID_ADB_SERVER_PORT" && k != "ANDROID_SERIAL" {
			env = append(env, kv)
		}
	}
	return env
}

// Run runs the adb client against this server.
func (s *server) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.Bin, append([]string{"-P", strconv.Itoa(s.Port)}, args...)...)
	cmd.Env = s.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Connect runs `adb connect addr` and waits until the device is online;
// the device's serial is addr.
func (s *server) Connect(t testing.TB, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.Run(ctx, "connect", addr)
	if err != nil || !strings.Contains(out, "connected to") {
		t.Fatalf("adb connect %s: %v %s", addr, err, out)
	}
	for {
		out, _ := s.Run(ctx, "-s", addr, "get-state")
		if strings.TrimSpace(out) == "device" {
			return addr
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never came online: %s", addr, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
