package readiness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
)

func TestInfoQueries(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	ctx := context.Background()

	caps, err := CapabilitiesOf(s)
	if err != nil || caps["protocolVersion"] != "2.0" {
		t.Fatalf("capabilities %v %v", caps, err)
	}
	apps, err := Apps(ctx, s)
	if err != nil || apps["count"] == nil {
		t.Fatalf("apps %v %v", apps, err)
	}
	info, err := AppInfo(ctx, s)
	if err != nil || info["versionName"] != "1.0.2" {
		t.Fatalf("info %v %v", info, err)
	}
	if _, err := AppStatus(ctx, s); err != nil {
		t.Fatalf("status %v", err)
	}
	page, err := Inspect(ctx, s)
	if err != nil || page["page"] == nil {
		t.Fatalf("page %v %v", page, err)
	}

	// Answers of a build the host does not understand.
	answerFault(t, dev, sim.AnswerFault{Action: "status", Query: map[string]string{"type": "status"}, Set: map[string]any{"status": 3}})
	_, err = AppStatus(ctx, s)
	wantCode(t, err, fault.CodeAppStatusUnavailable, fault.Failed)
	answerFault(t, dev, sim.AnswerFault{Action: "status", Query: map[string]string{"type": "page"}, Times: 1,
		Set:    map[string]any{"success": false, "errorCode": "page_permission_required", "error": "ADB and accessibility permissions are required"},
		Remove: []string{"page"}})
	_, err = Inspect(ctx, s)
	wantCode(t, err, "page_permission_required", fault.Failed)
	answerFault(t, dev, sim.AnswerFault{Action: "status", Query: map[string]string{"type": "page"}, Remove: []string{"page"}})
	_, err = Inspect(ctx, s)
	wantCode(t, err, fault.CodePageUnavailable, fault.Failed)
}

func TestScreenshot(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "screen.png")
	res, err := Screenshot(context.Background(), dev, out)
	if err != nil || res.OutputReplaced {
		t.Fatal(res, err)
	}
	got, _ := os.ReadFile(out)
	sum := sha256.Sum256(got)
	w, h := dev.Phone.ScreenSize()
	if cfg, err := png.DecodeConfig(bytes.NewReader(got)); err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("not the device's screen: %v %+v", err, cfg)
	}
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.Size != int64(len(got)) ||
		res.Screenshot != out || res.Width != w || res.Height != h || !filepath.IsAbs(res.Screenshot) {
		t.Fatalf("%+v", res)
	}
	// An existing file is replaced (as solopi-ai writes it), and says so;
	// a symlink is refused before the device is asked.
	if res, err := Screenshot(context.Background(), dev, out); err != nil || !res.OutputReplaced {
		t.Fatal(res, err)
	}
	link := filepath.Join(dir, "link.png")
	os.Symlink(out, link)
	calls := len(dev.Commands())
	_, err = Screenshot(context.Background(), dev, link)
	wantCode(t, err, fault.CodeInvalidOutputPath, fault.Invalid)
	if len(dev.Commands()) != calls {
		t.Error("captured although the output is a symlink")
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(filepath.Dir(out))
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries", len(ents))
	}

	// A screencap that prints something else (a vendor build's error).
	if err := dev.Phone.OverrideCommand("screencap", nil, android.CommandOutput{Stdout: "not a png"}); err != nil {
		t.Fatal(err)
	}
	_, err = Screenshot(context.Background(), dev, filepath.Join(dir, "bad.png"))
	wantCode(t, err, fault.CodeScreencapFailed, fault.Transport)
	if _, statErr := os.Stat(filepath.Join(dir, "bad.png")); statErr == nil {
		t.Error("a failed capture wrote a file")
	}
}

func TestLogs(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	out := filepath.Join(t.TempDir(), "logcat.txt")
	res, err := Logs(context.Background(), dev, out, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ran(dev, "logcat -d -v threadtime -t 3") != 1 {
		t.Errorf("logcat commands %v", dev.Commands())
	}
	// logcat -t 3 prints the last three entries after its buffer header.
	got, _ := os.ReadFile(out)
	if lines := strings.Count(string(got), "\n"); lines < 3 || lines > 4 || res.Lines != lines || res.Logcat != out || !res.Success {
		t.Fatalf("%+v %q", res, got)
	}
	if res, err = Logs(context.Background(), dev, out, 3); err != nil || !res.OutputReplaced {
		t.Fatal(res, err)
	}
	_, err = Logs(context.Background(), dev, out, 0)
	wantCode(t, err, "invalid_option", fault.Invalid)
	before, _ := os.ReadFile(out)
	if err := dev.Phone.OverrideCommand("logcat", nil, android.CommandOutput{Stderr: "logcat: bad buffer", Exit: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = Logs(context.Background(), dev, out, 3)
	wantCode(t, err, fault.CodeAdbError, fault.Transport)
	if b, _ := os.ReadFile(out); !bytes.Equal(b, before) {
		t.Error("a failed logcat replaced the previous file")
	}
}
