package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// benchCLI runs the whole command path in process against dev and fails
// the benchmark unless the command exits 0.
func benchCLI(b *testing.B, dev *sim.Device, secrets string, args ...string) {
	b.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"solopi"}, args...), cmdutil.Env{Stdout: &stdout, Stderr: &stderr,
		Getenv:    func(string) string { return "" },
		Transport: func(context.Context) (device.Transport, error) { return dev, nil },
		Secrets:   &replay.SecretsStore{Dir: secrets}})
	if code != 0 {
		b.Fatalf("%v: exit %d %s %s", args, code, stdout.Bytes(), stderr.Bytes())
	}
}

// benchDevice is a ready simulated device at a high time scale.
func benchDevice(b *testing.B) *sim.Device {
	b.Helper()
	dev := sim.New(sim.Options{Serial: "sim-bench", TimeScale: 200})
	b.Cleanup(func() { dev.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dev.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	return dev
}

// BenchmarkInProcessRun is one `run --case` with artifacts, the whole
// command path in process on a simulated device (time scale 200): flags,
// session, replay, evidence, report, JSON.
//
//	go test -run '^$' -bench InProcessRun ./cmd/solopi/
func BenchmarkInProcessRun(b *testing.B) {
	dev, secrets := benchDevice(b), b.TempDir()
	casePath := filepath.Join(b.TempDir(), "case.json")
	if err := os.WriteFile(casePath, demoCase, 0o600); err != nil {
		b.Fatal(err)
	}
	benchCLI(b, dev, secrets, "case-import", "--file", casePath, "--replace")
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		benchCLI(b, dev, secrets, "run", "--case", demoCaseName, "--poll-interval", "0.05", "--artifacts", filepath.Join(root, time.Duration(i).String()))
	}
}

// BenchmarkInProcessVerifyRun is one verify-run of solopi-ai's
// counter-success fixture (two deterministic segments) in process on a
// simulated device: ms per op / 2 is a segment's cost.
//
//	go test -run '^$' -bench InProcessVerifyRun ./cmd/solopi/
func BenchmarkInProcessVerifyRun(b *testing.B) {
	dev, secrets := benchDevice(b), b.TempDir()
	plan := cmdtest.FixturePlan(b, "counter-success")
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		benchCLI(b, dev, secrets, "verify-run", "--plan", plan, "--artifacts", filepath.Join(root, time.Duration(i).String()), "--poll-interval", "0.05")
	}
}
