package readiness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

func TestInfoQueries(t *testing.T) {
	solo := newFakeSoloPi()
	s := openTestSession(t, newSoloTransport(t, solo))
	ctx := context.Background()

	caps, err := CapabilitiesOf(s)
	if err != nil || caps["protocolVersion"] != "2.0" || caps["success"] != true {
		t.Fatalf("capabilities %v %v", caps, err)
	}
	apps, err := Apps(ctx, s)
	if err != nil || apps["count"] != json.Number("1") {
		t.Fatalf("apps %v %v", apps, err)
	}
	info, err := AppInfo(ctx, s)
	if err != nil || info["versionName"] != "1.0.2" {
		t.Fatalf("info %v %v", info, err)
	}
	st, err := AppStatus(ctx, s)
	if err != nil || st["status"] != "none" || st["success"] != true {
		t.Fatalf("status %v %v", st, err)
	}
	page, err := Inspect(ctx, s)
	if err != nil || page["page"] == nil || page["success"] != true {
		t.Fatalf("page %v %v", page, err)
	}

	solo.with(func(f *fakeSoloPi) {
		f.status = map[string]any{"status": 3}
		f.page = map[string]any{"success": false, "errorCode": "page_permission_required", "error": "ADB and accessibility permissions are required"}
	})
	_, err = AppStatus(ctx, s)
	wantCode(t, err, CodeAppStatusUnavailable, fault.Failed)
	_, err = Inspect(ctx, s)
	wantCode(t, err, "page_permission_required", fault.Failed)
	solo.with(func(f *fakeSoloPi) { f.page = map[string]any{"something": 1} })
	_, err = Inspect(ctx, s)
	wantCode(t, err, CodePageUnavailable, fault.Failed)
}

func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	// Bytes a text-mode channel would mangle, to prove the path is binary-safe.
	return append(b.Bytes(), '\r', '\n', 0, '\n')
}

func TestScreenshot(t *testing.T) {
	pngBytes := testPNG(t)
	ft := newSoloTransport(t, newFakeSoloPi())
	ft.execFn = func(cmd string) ([]byte, error) {
		if cmd != "screencap -p" {
			t.Errorf("exec %q", cmd)
		}
		return pngBytes, nil
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "screen.png")
	res, err := Screenshot(context.Background(), ft, out)
	if err != nil || res.OutputReplaced {
		t.Fatal(res, err)
	}
	sum := sha256.Sum256(pngBytes)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, pngBytes) || res.SHA256 != hex.EncodeToString(sum[:]) || res.Size != int64(len(pngBytes)) ||
		res.Screenshot != out || res.Width != 4 || res.Height != 3 || !filepath.IsAbs(res.Screenshot) {
		t.Fatalf("%+v", res)
	}
	// An existing file is replaced (as solopi-ai writes it), and says so;
	// a symlink is refused before the device is asked.
	if res, err := Screenshot(context.Background(), ft, out); err != nil || !res.OutputReplaced {
		t.Fatal(res, err)
	}
	link := filepath.Join(dir, "link.png")
	os.Symlink(out, link)
	calls := len(ft.shellCalls())
	_, err = Screenshot(context.Background(), ft, link)
	wantCode(t, err, artifacts.CodeInvalidOutput, fault.Invalid)
	if len(ft.shellCalls()) != calls {
		t.Error("captured although the output is a symlink")
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(filepath.Dir(out))
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries", len(ents))
	}

	ft.execFn = func(string) ([]byte, error) { return []byte("not a png"), nil }
	_, err = Screenshot(context.Background(), ft, filepath.Join(dir, "bad.png"))
	wantCode(t, err, device.CodeScreencapFailed, fault.Transport)
	if _, statErr := os.Stat(filepath.Join(dir, "bad.png")); statErr == nil {
		t.Error("a failed capture wrote a file")
	}
}

func TestLogs(t *testing.T) {
	ft := newSoloTransport(t, newFakeSoloPi())
	ft.on("logcat ", func(cmd string) shellReply {
		if cmd != "logcat -d -v threadtime -t 3" {
			t.Errorf("logcat command %q", cmd)
		}
		return shellReply{stdout: "a\nb\nc\n"}
	})
	out := filepath.Join(t.TempDir(), "logcat.txt")
	res, err := Logs(context.Background(), ft, out, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != "a\nb\nc\n" || res.Lines != 3 || res.Logcat != out || !res.Success {
		t.Fatalf("%+v %q", res, got)
	}
	if res, err = Logs(context.Background(), ft, out, 3); err != nil || !res.OutputReplaced {
		t.Fatal(res, err)
	}
	_, err = Logs(context.Background(), ft, out, 0)
	wantCode(t, err, "invalid_option", fault.Invalid)
	ft.on("logcat ", func(string) shellReply { return shellReply{stderr: "logcat: bad buffer", code: 1} })
	_, err = Logs(context.Background(), ft, out, 3)
	wantCode(t, err, device.CodeAdbError, fault.Transport)
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "a\n") {
		t.Error("a failed logcat replaced the previous file")
	}
}
