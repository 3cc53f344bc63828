// Package cmdtest is the command tests' rig: it runs a command group's
// commands in process the way the binary does (argv → flags bound to the
// options → the run function → the one JSON object and the exit code),
// against an in-process simulated device handed in through
// cmdutil.Env.Transport, without building the binary. Every test gets its
// own device, secrets store and temporary files, so tests run in parallel.
package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// defaultTimeScale is the speed-up of the rig's simulated devices: device
// waits (settle 3 s, root readiness 5 s) take milliseconds, the rules stay.
const defaultTimeScale = 50

// Device is a ready simulated device (closed with the test).
func Device(t testing.TB, o sim.Options) *sim.Device {
	t.Helper()
	if o.TimeScale == 0 && o.Clock == nil {
		o.TimeScale = defaultTimeScale
	}
	d := sim.New(o)
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// commands are a command group's commands (or the whole app's).
type commands = func(cmdutil.Env) []*cli.Command

// CLI runs commands of one group (or the whole app) in process.
type CLI struct {
	t        testing.TB
	commands commands
	// Transport is the device the commands reach (nil: selection through
	// the adb server the globals name).
	Transport device.Transport
	// NoDevice fails the test when a command selects a device: for the
	// commands that must never touch one.
	NoDevice bool
	// Env is what the commands read through Getenv.
	Env map[string]string
	// Stdin is the commands' standard input.
	Stdin *os.File
	// Globals are global flags put before every command line.
	Globals []string
	// Tee also receives what a command writes to stdout, as it writes it
	// (a server's first line).
	Tee     io.Writer
	secrets string

	mu         sync.Mutex
	outputs    [][]byte
	selections int
}

// New is a rig for cmds reaching dev (nil for none).
func New(t testing.TB, cmds commands, dev device.Transport) *CLI {
	return &CLI{t: t, commands: cmds, Transport: dev, Env: map[string]string{}, secrets: t.TempDir()}
}

// Result is one finished command.
type Result struct {
	Stdout, Stderr []byte
	Code           int
}

// Object decodes stdout as the one JSON object it must be.
func (r Result) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Stdout, &m); err != nil {
		t.Fatalf("stdout is not one JSON object (exit %d): %q\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	return m
}

// Run runs one command line (without the program name).
func (c *CLI) Run(args ...string) Result {
	c.t.Helper()
	return c.RunCtx(context.Background(), args...)
}

// RunCtx runs one command line under ctx (a test interrupts it by
// cancelling).
func (c *CLI) RunCtx(ctx context.Context, args ...string) Result {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	var out io.Writer = &stdout
	if c.Tee != nil {
		out = io.MultiWriter(&stdout, c.Tee)
	}
	e := cmdutil.Env{Stdout: out, Stderr: &stderr, Stdin: c.Stdin, Secrets: &replay.SecretsStore{Dir: c.secrets},
		Getenv: func(k string) string { return c.Env[k] }}
	switch {
	case c.NoDevice:
		e.Transport = func(context.Context) (device.Transport, error) {
			c.t.Errorf("%v selected a device although it must not touch one", args)
			return nil, errors.New("cmdtest: no device")
		}
	case c.Transport != nil:
		tr := c.Transport
		e.Transport = func(context.Context) (device.Transport, error) {
			c.mu.Lock()
			c.selections++
			c.mu.Unlock()
			return tr, nil
		}
	}
	argv := append(append([]string{"solopi"}, c.Globals...), args...)
	code := cmdutil.App{Version: "test", Commands: c.commands}.Run(ctx, argv, e)
	c.mu.Lock()
	c.outputs = append(c.outputs, bytes.Clone(stdout.Bytes()), bytes.Clone(stderr.Bytes()))
	c.mu.Unlock()
	return Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Code: code}
}

// Expect runs a command, checks its exit code and its output against the
// command's schema (a handled error against "error"), and decodes it.
func (c *CLI) Expect(code int, schema string, args ...string) map[string]any {
	c.t.Helper()
	return c.ExpectCtx(context.Background(), code, schema, args...)
}

// ExpectCtx is Expect under ctx.
func (c *CLI) ExpectCtx(ctx context.Context, code int, schema string, args ...string) map[string]any {
	c.t.Helper()
	r := c.RunCtx(ctx, args...)
	if r.Code != code {
		c.t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.Code, code, r.Stdout, r.Stderr)
	}
	schematest.Validate(c.t, schema, r.Stdout)
	return r.Object(c.t)
}

// UseSecrets makes the commands keep case-import's records of encrypted
// parameters in dir (another computer's empty store, say).
func (c *CLI) UseSecrets(dir string) { c.secrets = dir }

// Selections counts the commands that selected the device: a command
// that refuses its input before any device contact selects none.
func (c *CLI) Selections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.selections
}

// Outputs are the stdout and stderr of every command run so far.
func (c *CLI) Outputs() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.outputs...)
}

// Obj is m's object at path ("" keys skipped), nil when absent.
func Obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m, _ = m[p].(map[string]any)
	}
	return m
}

// Farm is a ready simulated farm behind the simulator's adb-server front
// (no per-device adbd), closed with the test.
func Farm(t testing.TB, o sim.FarmOptions) *sim.Farm {
	t.Helper()
	o.NoAdbd = true
	return StartFarm(t, o)
}

// StartFarm is a ready simulated farm made from o (DefaultTimeScale unless
// o says), closed with the test.
func StartFarm(t testing.TB, o sim.FarmOptions) *sim.Farm {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = defaultTimeScale
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := sim.StartFarm(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// OverAdb is a rig for cmds that reaches f's devices the way a phone is
// reached: device selection through f's adb server.
func OverAdb(t testing.TB, cmds commands, f *sim.Farm) *CLI {
	c := New(t, cmds, nil)
	// --serial= keeps an ANDROID_SERIAL of the test process out.
	c.Globals = []string{"--adb-server-port", strconv.Itoa(f.Server().Port()), "--serial="}
	return c
}
