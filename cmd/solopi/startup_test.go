package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func TestStartupTimeCommand(t *testing.T) {
	tr := newDevTransport(t, newDevSoloPi())
	tr.shell["cmd package resolve-activity"] = func(string) (string, int) { return "com.example.counter/.Main\n", 0 }
	n := 0
	tr.shell["am start -W -S"] = func(string) (string, int) {
		n++
		return "Status: ok\nLaunchState: COLD\nActivity: com.example.counter/.Main\nThisTime: 90\nTotalTime: " +
			map[int]string{1: "100", 2: "300", 3: "200"}[n] + "\nWaitTime: 400\nComplete\n", 0
	}
	res, err := runStartupTime(context.Background(), testDeps(tr), readiness.StartupOptions{TargetPackage: "com.example.counter", Count: 3, Interval: time.Millisecond})
	out, code := printed(t, "startup-time", res, err)
	if code != 0 || !strings.Contains(string(out), `"TotalTime":{"available":true,"sampleCount":3,"min":100,"max":300,"mean":200,"median":200,"p90":300}`) {
		t.Fatalf("exit %d: %s", code, out)
	}

	tr.shell["am start -W -S"] = func(string) (string, int) { return "Status: timeout\nComplete\n", 0 }
	res, err = runStartupTime(context.Background(), testDeps(tr), readiness.StartupOptions{TargetPackage: "com.example.counter", Count: 2})
	out, code = printed(t, "startup-time", res, err)
	if code != outcome.ExitTransport || !strings.Contains(string(out), `"completedSamples":[]`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestStartupTimeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"startup-time", "--target-package", "com.x", "--interval", "-1"},
		{"startup-time", "--target-package", "com.x", "--iterations", "0"},
		{"startup-time", "--target-package", "com.x", "--mode", "lukewarm"},
		{"startup-time", "--target-package", "com.x", "--launch-timeout", "0"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"solopi", "--adb", "/nonexistent/adb", "--adb-server-port", "1"}, args...),
			Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != outcome.ExitUsage || !strings.Contains(out.String(), `"errorCode":"invalid_option"`) {
			t.Errorf("%v: exit %d %s %s", args, code, out.String(), errb.String())
		}
	}
}
