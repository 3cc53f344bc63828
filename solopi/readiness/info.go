package readiness

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// pageQueryTimeout covers status?type=page: the device waits 500 ms, then
// up to 5 000 ms for the tree (docs/device-protocol.md), which is longer than the
// default 5 s request timeout.
const pageQueryTimeout = 8 * time.Second

// infoPassThrough checks a query answer that uses E1 on failure: success absent
// or true passes the object on unchanged, success false is the device's
// rejection. The command lays its own success over the answer.
func infoPassThrough(r device.WireObject, what string) (map[string]any, error) {
	if r.Has("success") {
		ok, isBool := r.Flag("success")
		if !isBool {
			return nil, fault.Newf(fault.Transport, fault.CodeInvalidDeviceResponse, "the %s answer has a non-boolean success", what)
		}
		if !ok {
			return nil, deviceE1Error(r, what)
		}
	}
	return r, nil
}

// CapabilitiesOf returns the capabilities the session was opened with.
func CapabilitiesOf(s *device.Session) (map[string]any, error) {
	caps, err := device.DecodeObject(s.Capabilities)
	if err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeInvalidDeviceResponse, "the capabilities answer is not a JSON object", err)
	}
	return infoPassThrough(caps, "capabilities")
}

// harnessQuery runs harness?type=typ and passes the answer through.
func harnessQuery(ctx context.Context, s *device.Session, typ string) (map[string]any, error) {
	r, err := s.Device.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, typ))
	if err != nil {
		return nil, err
	}
	return infoPassThrough(r, "harness "+typ)
}

// Apps lists the apps SoloPi offers as targets (harness?type=apps).
func Apps(ctx context.Context, s *device.Session) (map[string]any, error) {
	m, err := harnessQuery(ctx, s, protocol.HarnessApps)
	if err != nil {
		return nil, err
	}
	if _, ok := m["apps"].([]any); !ok {
		return nil, fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "the apps answer has no apps array")
	}
	return m, nil
}

// AppInfo describes SoloPi and the device (harness?type=info).
func AppInfo(ctx context.Context, s *device.Session) (map[string]any, error) {
	return harnessQuery(ctx, s, protocol.HarnessInfo)
}

// AppStatus runs status?type=status; its bare {"status": s} answer must
// carry a string, and is returned unchanged.
func AppStatus(ctx context.Context, s *device.Session) (map[string]any, error) {
	r, err := s.Device.Query(ctx, protocol.ActionStatus, device.P(protocol.ParamType, "status"))
	if err != nil {
		return nil, err
	}
	if ok, isBool := r.Flag("success"); isBool && !ok {
		return nil, deviceE1Error(r, "status")
	}
	if _, ok := r.Text("status"); !ok {
		// The reference host exits 2 here; kept for script compatibility.
		return nil, fault.New(fault.Failed, fault.CodeAppStatusUnavailable, "SoloPi's status answer carries no status string")
	}
	return r, nil
}

// Inspect returns SoloPi's answer with the current page tree
// (status?type=page), unchanged; only an answer with a page object passes
// (whatever its success says: inspect prints it with success true).
func Inspect(ctx context.Context, s *device.Session) (device.WireObject, error) {
	d := s.DeviceWithTimeout(pageQueryTimeout)
	defer d.Close()
	r, err := d.Query(ctx, protocol.ActionStatus, device.P(protocol.ParamType, "page"))
	if err != nil {
		return nil, err
	}
	if _, ok := r["page"].(map[string]any); !ok {
		if ok, isBool := r.Flag("success"); isBool && !ok {
			return nil, deviceE1Error(r, "page")
		}
		return nil, fault.New(fault.Failed, fault.CodePageUnavailable, "SoloPi's page answer carries no page tree")
	}
	return r, nil
}

// screenshotResult is the screenshot command's object.
type screenshotResult struct {
	Success    bool   `json:"success"`
	Screenshot string `json:"screenshot"`
	SHA256     string `json:"sha256"`
	Size       int64  `json:"sizeBytes"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	// OutputReplaced tells that an existing --output file was replaced.
	OutputReplaced bool `json:"outputReplaced"`
}

// Screenshot captures the screen (binary-safe exec screencap) into output.
func Screenshot(ctx context.Context, t device.Transport, output string) (*screenshotResult, error) {
	if err := CheckOutput(output); err != nil {
		return nil, err
	}
	png, err := device.NewDevice(t, device.DeviceOptions{}).Screencap(ctx)
	if err != nil {
		return nil, err
	}
	w, h, err := pngSize(png)
	if err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeScreencapFailed, "screencap returned a broken PNG", err)
	}
	fr, err := screenOutput.WriteFile(output, png)
	if err != nil {
		return nil, err
	}
	return &screenshotResult{Success: true, Screenshot: fr.Path, SHA256: fr.SHA256, Size: fr.Size, Width: w, Height: h, OutputReplaced: fr.Replaced}, nil
}

// screenOutput is the policy of screenshot and logs --output: written
// where solopi-ai writes (parent directories created, an existing file
// replaced), but atomically and never through a symlink.
var screenOutput = artifacts.Output{Mode: artifacts.Replace, MakeParents: true}

// CheckOutput refuses an unusable output before anything is captured,
// so a refused command has no device side effect and wastes no time.
func CheckOutput(output string) error {
	if output == "" {
		return fault.Usage(fault.CodeInvalidOutputPath, "--output is required")
	}
	_, err := screenOutput.CheckFile(output)
	return err
}

// pngSize reads the IHDR width and height.
func pngSize(b []byte) (int, int, error) {
	if len(b) < 24 || string(b[12:16]) != "IHDR" {
		return 0, 0, fmt.Errorf("no IHDR chunk")
	}
	w := binary.BigEndian.Uint32(b[16:20])
	h := binary.BigEndian.Uint32(b[20:24])
	if w == 0 || h == 0 || w > 1<<16 || h > 1<<16 {
		return 0, 0, fmt.Errorf("implausible PNG size %dx%d", w, h)
	}
	return int(w), int(h), nil
}

// logsResult is the logs command's object.
type logsResult struct {
	Success bool   `json:"success"`
	Logcat  string `json:"logcat"`
	Lines   int    `json:"lines"`
	SHA256  string `json:"sha256"`
	Size    int64  `json:"sizeBytes"`
	// OutputReplaced tells that an existing --output file was replaced.
	OutputReplaced bool `json:"outputReplaced"`
}

// maxLogBytes caps a logcat dump kept on the host.
const maxLogBytes = 64 << 20

// Logs writes the last `lines` lines of logcat (threadtime) into output.
func Logs(ctx context.Context, t device.Transport, output string, lines int) (*logsResult, error) {
	if lines <= 0 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--lines must be a positive number")
	}
	if err := CheckOutput(output); err != nil {
		return nil, err
	}
	text, err := device.NewDevice(t, device.DeviceOptions{}).Logcat(ctx, lines, maxLogBytes)
	if err != nil {
		return nil, err
	}
	fr, err := screenOutput.WriteFile(output, text)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, c := range text {
		if c == '\n' {
			n++
		}
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		n++
	}
	return &logsResult{Success: true, Logcat: fr.Path, Lines: n, SHA256: fr.SHA256, Size: fr.Size, OutputReplaced: fr.Replaced}, nil
}
