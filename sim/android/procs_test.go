package android

import (
	"context"
	"strings"
	"testing"
)

// ps lists the running apps (as their own user) and the shell's running
// commands, in toybox's columns; pidof finds both.
func TestPsAndPidofListAppsAndShellCommands(t *testing.T) {
	t.Parallel()
	p := New(Config{}, nil) // real time: the recording runs while it is listed
	launch(t, p, "com.example.counter")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid, done := startRecording(t, p, ctx, "screenrecord --size 180x320 /sdcard/ps.mp4")
	out := mustSh(t, p, "ps -A")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "USER") || !strings.HasSuffix(lines[0], "NAME") {
		t.Fatalf("ps header: %q", lines[0])
	}
	var app, rec []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		switch f[len(f)-1] {
		case "com.example.counter":
			app = f
		case "screenrecord":
			rec = f
		}
	}
	if app == nil || app[0] != "u0_a100" || rec == nil || rec[0] != "shell" || rec[1] != pid {
		t.Fatalf("ps -A:\n%s", out)
	}
	if got := strings.TrimSpace(mustSh(t, p, "pidof com.example.counter")); got != app[1] {
		t.Fatalf("pidof the app = %q, ps says %s", got, app[1])
	}
	// The shell user may not signal an app.
	if r := sh(t, p, "kill "+app[1]); r.rc != 1 || !strings.Contains(r.err, "Operation not permitted") {
		t.Fatalf("kill an app: %+v", r)
	}
	if r := sh(t, p, "pidof nothing-runs-as-this"); r.rc != 1 || r.out != "" {
		t.Fatalf("pidof of nothing: %+v", r)
	}
	// kill -- PID: the end of the options; the recording stops cleanly.
	mustSh(t, p, "kill -s TERM -- "+pid)
	if rc := <-done; rc != 0 {
		t.Fatalf("screenrecord exited %d after SIGTERM", rc)
	}
	if strings.Contains(mustSh(t, p, "ps"), "screenrecord") {
		t.Fatal("screenrecord listed after it exited")
	}
}

// The toybox refusals of kill and pkill, with their exit statuses.
func TestKillAndPkillUsage(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	for cmd, want := range map[string]struct {
		rc  int
		err string
	}{
		"kill":                     {1, "usage: kill"},
		"kill -s":                  {1, "unknown signal"},
		"kill -n 99 1":             {1, "unknown signal '99'"},
		"kill abc":                 {1, "not a number: abc"},
		"kill -SIGHUP 4 x":         {1, "No such process"},
		"pkill":                    {2, "usage: pkill"},
		"pkill a b":                {2, "usage: pkill"},
		"pkill -l":                 {2, "-l needs a signal"},
		"pkill -NOPE screenrecord": {2, "unknown signal 'NOPE'"},
		"pkill -x '('":             {2, "bad regex '('"},
		"pkill -f -x -- nothing":   {1, ""},
	} {
		r := sh(t, p, cmd)
		if r.rc != want.rc || !strings.Contains(r.err, want.err) {
			t.Errorf("%q: rc=%d stderr=%q, want %d %q", cmd, r.rc, r.err, want.rc, want.err)
		}
	}
	if got := mustSh(t, p, "kill -l"); got != "HUP\nINT\nKILL\nTERM\n" {
		t.Errorf("kill -l = %q", got)
	}
	for s, want := range map[string]int{"INT": 2, "sigterm": 15, "9": 9, "64": 64, "65": 0, "0": 0, "x": 0} {
		if n, ok := parseSignal(s); n != want && ok || ok != (want != 0) {
			t.Errorf("parseSignal(%q) = %d %v, want %d", s, n, ok, want)
		}
	}
}

// pkill -x matches the whole name only; -f the whole command line.
func TestPkillExactAndFull(t *testing.T) {
	t.Parallel()
	p := New(Config{}, nil)
	_, done := startRecording(t, p, context.Background(), "screenrecord --size 180x320 /sdcard/px.mp4")
	if r := sh(t, p, "pkill -x screen"); r.rc != 1 {
		t.Fatalf("pkill -x on a part of the name: %+v", r)
	}
	if r := sh(t, p, "pkill -x -f screenrecord"); r.rc != 1 {
		t.Fatalf("pkill -x -f on the name alone: %+v", r)
	}
	mustSh(t, p, "pkill -HUP -f -x 'screenrecord --size 180x320 /sdcard/px.mp4'")
	<-done
	if r := sh(t, p, "pidof screenrecord"); r.rc != 1 {
		t.Fatalf("still running after pkill: %+v", r)
	}
}

func TestParseBitRate(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"4M": 4000000, "8m": 8000000, "800K": 800000, "64k": 64000, "2000000": 2000000,
		"200M": 200000000, "201M": 0, "0": 0, "-5": 0, "M": 0, "4G": 0} {
		n, ok := parseBitRate(s)
		if n != want || ok != (want != 0) {
			t.Errorf("parseBitRate(%q) = %d %v, want %d", s, n, ok, want)
		}
	}
}
