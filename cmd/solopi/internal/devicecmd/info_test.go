package devicecmd

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func TestInfoCommands(t *testing.T) {
	deps := testDeps(newDevTransport(t, newDevSoloPi()))
	ctx := context.Background()
	res, err := runCapabilities(ctx, deps)
	if out, code := printed(t, "capabilities", res, err); code != 0 {
		t.Fatalf("capabilities exit %d: %s", code, out)
	}
	for name, q := range map[string]func(context.Context, *device.Session) (map[string]any, error){
		"apps": readiness.Apps, "app-info": readiness.AppInfo, "app-status": readiness.AppStatus, "inspect": readiness.Inspect,
	} {
		res, err := sessionQuery(ctx, deps, q)
		if out, code := printed(t, name, res, err); code != 0 {
			t.Fatalf("%s exit %d: %s", name, code, out)
		}
	}
}

func TestScreenshotAndLogsCommands(t *testing.T) {
	tr := newDevTransport(t, newDevSoloPi())
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2)))
	tr.exec = func(string) ([]byte, error) { return img.Bytes(), nil }
	tr.shell["logcat"] = func(string) (string, int) { return "11-30 01:00:00.000  1  1 I tag: hello\n", 0 }
	dir := t.TempDir()
	deps := testDeps(tr)

	shot := filepath.Join(dir, "s.png")
	res, err := runScreenshot(context.Background(), deps, fileOptions{output: shot})
	if out, code := printed(t, "screenshot", res, err); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	res, err = runScreenshot(context.Background(), deps, fileOptions{output: shot})
	if out, code := printed(t, "screenshot", res, err); code != 0 || !strings.Contains(string(out), `"outputReplaced":true`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	logs := filepath.Join(dir, "l.txt")
	res, err = runLogs(context.Background(), deps, fileOptions{output: logs, lines: 10})
	if out, code := printed(t, "logs", res, err); code != 0 || !strings.Contains(string(out), `"lines":1`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	if b, _ := os.ReadFile(logs); !strings.Contains(string(b), "hello") {
		t.Fatalf("log file %q", b)
	}
	res, err = runLogs(context.Background(), deps, fileOptions{output: logs, lines: 0})
	if _, code := printed(t, "logs", res, err); code != outcome.ExitUsage {
		t.Fatalf("exit %d", code)
	}
}
