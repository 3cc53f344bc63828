package main

// The end-to-end rig of the scenarios that cross command groups: the
// whole app against a simulated farm, every real stdout validated against
// its schema.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// e2eRig is a farm with one device reached through its adb-server front,
// the whole app run in process against it, plus every output printed, so a
// test can search all of them afterwards. env points the built binary at
// the same farm, for what only a process shows (signals, another user).
type e2eRig struct {
	t    *testing.T
	farm *sim.Farm
	dev  *sim.Device
	cli  *cmdtest.CLI
	env  []string
	outs []cliRun
	args [][]string
}

func newE2ERig(t *testing.T, o sim.FarmOptions) *e2eRig {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = 40
	}
	f := cmdtest.Farm(t, o)
	return &e2eRig{t: t, farm: f, dev: f.Devices()[0], cli: cmdtest.OverAdb(t, commands, f),
		env: []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", f.Server().Port()), "ANDROID_SERIAL="}}
}

// run runs the command in process and keeps its output.
func (r *e2eRig) run(args ...string) cliRun {
	r.t.Helper()
	out := r.cli.Run(args...)
	res := cliRun{stdout: out.Stdout, stderr: out.Stderr, code: out.Code}
	r.outs = append(r.outs, res)
	r.args = append(r.args, args)
	return res
}

// expect runs the command, requires the exit code, validates stdout
// against the command's schema (or the shared error schema for an error
// object) and decodes it.
func (r *e2eRig) expect(code int, args ...string) map[string]any {
	r.t.Helper()
	res := r.run(args...)
	if res.code != code {
		r.t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, code, res.stdout, res.stderr)
	}
	schematest.Validate(r.t, args[0], res.stdout)
	return decodeObject(r.t, res)
}

// requireNoOutputContains fails when any stdout or stderr seen so far
// contains one of the secrets.
func (r *e2eRig) requireNoOutputContains(secrets ...string) {
	r.t.Helper()
	for i, o := range r.outs {
		for _, s := range secrets {
			if bytes.Contains(o.stdout, []byte(s)) || bytes.Contains(o.stderr, []byte(s)) {
				r.t.Errorf("solopi %s printed the secret %q:\nstdout: %s\nstderr: %s", strings.Join(r.args[i], " "), s, o.stdout, o.stderr)
			}
		}
	}
}

func e2eAutoStartOn(_ int, o *sim.Options) {
	o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
}

// e2eFastPoll makes the host poll quickly: the simulator runs faster than
// real time, the host's polling does not.
var e2eFastPoll = []string{"--poll-interval", "0.05"}

func e2ePoll(args ...string) []string { return append(args, e2eFastPoll...) }
