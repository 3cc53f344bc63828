package devicecmd

import (
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
