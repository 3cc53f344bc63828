package android

import (
	"bytes"
	"context"
	"io"

	"github.com/solopi-dev/solopi/sim/android/shell"
)

// shellCtx is what the phone's own shell commands see: the running command
// plus the phone.
type shellCtx struct {
	*shell.Proc
	p *Phone
}

// locked runs f with the phone locked and sc's stdout buffered, so that a
// slow reader of the command's output never holds up the phone.
func (sc *shellCtx) locked(f func()) {
	var buf bytes.Buffer
	out := sc.Stdout
	sc.Stdout = &buf
	sc.p.view(f)
	sc.Stdout = out
	_, _ = out.Write(buf.Bytes())
}

type shellCmd func(sc *shellCtx, args []string) int

// commandTable maps command names (basenames) to implementations: the
// toybox commands plus the phone's own. It is built per phone, so nothing
// here is global mutable state.
func (p *Phone) commandTable() map[string]shell.Command {
	m := shell.Toybox()
	for _, group := range []map[string]shellCmd{amCommands(), pmCommands(), inputCommands(), sysCommands(), procCommands()} {
		for k, f := range group {
			m[k] = func(pr *shell.Proc, args []string) int { return f(&shellCtx{Proc: pr, p: p}, args) }
		}
	}
	return m
}

// shellEnv is the environment of adbd's shell on a stock device.
func (p *Phone) shellEnv() []string {
	return []string{
		"PATH=/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
		"HOME=/", "SHELL=/bin/sh", "USER=shell", "LOGNAME=shell", "HOSTNAME=" + p.cfg.Device,
		"TMPDIR=/data/local/tmp", "EXTERNAL_STORAGE=/sdcard", "ANDROID_DATA=/data",
		"ANDROID_ROOT=/system", "ANDROID_STORAGE=/storage", "TERM=dumb",
	}
}

// RunShell runs a command line the way adbd's `sh -c` does and returns its
// exit status (see package shell). An empty cmd is an interactive shell:
// the commands are read from stdin and run as they arrive, until EOF or
// exit. Stalled commands (StallCommand) wait before they start;
// overridden ones (OverrideCommand) print their fixed answers.
func (p *Phone) RunShell(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int {
	sh := &shell.Shell{FS: p.fs, Clock: p.clk, Env: p.shellEnv(), Commands: p.shellCommands(), Before: p.waitStall}
	return sh.Run(ctx, cmd, stdin, stdout, stderr)
}
