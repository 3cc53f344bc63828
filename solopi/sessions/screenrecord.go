package sessions

// Standalone screen recording (docs/device-protocol.md): screen-record-start,
// -status, -stop [--output FILE]. `pending-user-confirmation` means the
// MediaProjection dialog waits for a person; it is never success. Only a
// `stopped` session that was not cancelled before start has an MP4, and
// only that exact file, inside capturesRoot, is ever pulled.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// requiredMediaProjectionAction is the device's requiredUserAction text
// while the MediaProjection dialog is showing.
const requiredMediaProjectionAction = "Confirm the Android MediaProjection system dialog"

var resolutionPattern = lazyregexp.New(`^(\d{3,4})x(\d{3,4})$`)

// screenSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func screenSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "screen recording",
		Kind:     "screen-recording",
		Action:   protocol.ActionScreenRecord,
		Status:   device.P(protocol.ParamAction, "status"),
		Machine:  protocol.ScreenRecord(),
		Validate: validateScreenRecording,
		Latest:   "latestScreenRecording",
		Key:      "screenRecording",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamAction, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.ScreenPending, protocol.SessionStarting, protocol.SessionRecording},
	}
}

// validRootPath checks an absolute device directory with at least minParts
// segments whose last segment is last.
func validRootPath(p string, minParts int, last string) bool {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	return len(parts) >= minParts && parts[len(parts)-1] == last
}

// validateScreenRecording is the strict validator.
func validateScreenRecording(o device.WireObject) error {
	var v device.Violations
	m := protocol.ScreenRecord()
	s := v.MachineFlags(o, m, map[string]protocol.State{"recording": protocol.SessionRecording, "userActionRequired": protocol.ScreenPending})
	ua, _ := o.Flag("userActionRequired")
	ra, _ := o.Text("requiredUserAction")
	v.Iff(ua, ra == requiredMediaProjectionAction, "requiredUserAction must be %q exactly when userActionRequired", requiredMediaProjectionAction)
	if !ua {
		v.Check(!o.Has("requiredUserAction"), "requiredUserAction is present without userActionRequired")
	}
	cancelled, ok1 := o.FlagOrFalse("cancelledBeforeStart")
	auto, ok2 := o.FlagOrFalse("autoStopped")
	v.Check(ok1 && ok2, "cancelledBeforeStart and autoStopped must be booleans")
	ints := []string{"width", "height", "bitrateKbps", "frameRate", "durationSec", "requestedAt", "startedAt", "finishedAt", "durationMs", "fileSize"}
	for _, k := range ints {
		if o.Has(k) {
			_, ok := o.Integer(k)
			v.Check(ok, "%s is not an integer", k)
		}
	}
	if s == protocol.SessionIdle {
		v.AbsentAll(o, "idle", append(ints, "sessionId", "resolution", "capturesRoot", "outputPath", "error")...)
		v.Check(!cancelled && !auto, "idle but cancelledBeforeStart or autoStopped is true")
		return v.Err("screen recording status", o)
	}
	if s == "" {
		return v.Err("screen recording status", o)
	}
	id, _ := o.Text("sessionId")
	v.Check(protocol.ValidIDChars(id, 128), "sessionId %q is not a valid screen-record id", id)
	res, _ := o.Text("resolution")
	w, _ := o.Integer("width")
	h, _ := o.Integer("height")
	v.Check(res == fmt.Sprintf("%dx%d", w, h), "resolution %q does not equal width x height (%dx%d)", res, w, h)
	v.Check(w%2 == 0 && h%2 == 0 && w >= 128 && w <= 4096 && h >= 128 && h <= 4096, "width/height %dx%d outside even 128..4096", w, h)
	br, _ := o.Integer("bitrateKbps")
	fr, _ := o.Integer("frameRate")
	ds, _ := o.Integer("durationSec")
	v.Check(br >= 100 && br <= 50000, "bitrateKbps %d outside 100..50000", br)
	v.Check(fr >= 1 && fr <= 120, "frameRate %d outside 1..120", fr)
	v.Check(ds >= 1 && ds <= 3600, "durationSec %d outside 1..3600", ds)
	req, _ := o.Integer("requestedAt")
	v.Check(req > 0, "requestedAt must be positive")
	root, hasRoot := o.Text("capturesRoot")
	if o.Has("capturesRoot") {
		v.Check(hasRoot && validRootPath(root, 4, "ScreenCaptures"), "capturesRoot %q is not an absolute .../ScreenCaptures path with at least 4 parts", root)
	}
	if o.Has("outputPath") {
		out, _ := o.Text("outputPath")
		v.Check(hasRoot && path.Dir(out) == root && protocol.ValidIDName(path.Base(out), ".mp4", 127),
			"outputPath %q is not a safe .mp4 directly inside capturesRoot", out)
	}
	st, hasSt := o.Integer("startedAt")
	fin, hasFin := o.Integer("finishedAt")
	if hasSt {
		v.Check(st >= req, "startedAt is before requestedAt")
	}
	if hasFin {
		v.Check(fin >= req && (!hasSt || fin >= st), "finishedAt is before requestedAt or startedAt")
	}
	if dur, ok := o.Integer("durationMs"); ok {
		v.Check(dur >= 0, "durationMs %d is negative", dur)
		if hasSt && hasFin {
			v.Check(dur == fin-st, "durationMs %d != finishedAt - startedAt (%d)", dur, fin-st)
		}
	}
	v.Iff(m.IsTerminal(s), o.Has("finishedAt"), "finishedAt must be present exactly in terminal states")
	v.Iff(s == protocol.SessionFailed, o.Has("error"), "error must be present exactly in failed")
	if cancelled {
		v.Check(s == protocol.SessionStopped, "cancelledBeforeStart in state %s", s)
		v.Check(!o.Has("startedAt") && !o.Has("outputPath") && !o.Has("fileSize"), "a recording cancelled before start has startedAt, outputPath or fileSize")
	}
	if s == protocol.SessionStopped && !cancelled {
		size, _ := o.Integer("fileSize")
		v.Check(o.Has("startedAt") && o.Has("outputPath") && size > 0, "a stopped recording lacks startedAt, outputPath or a positive fileSize")
	}
	if s == protocol.SessionRecording {
		// A recording's durationMs is live (now - startedAt): the two come
		// together (docs/device-protocol.md#session-types).
		v.Check(o.Has("startedAt") && o.Has("outputPath"), "a recording session lacks startedAt or outputPath")
		v.Check(o.Has("durationMs"), "a recording session lacks its live durationMs")
	}
	if s == protocol.ScreenPending {
		v.Check(!o.Has("outputPath"), "a session pending user confirmation has an outputPath")
	}
	if auto {
		v.Check(s == protocol.SessionStopping || s == protocol.SessionStopped || s == protocol.SessionFailed, "autoStopped in state %s", s)
	}
	return v.Err("screen recording status", o)
}

// ScreenRecordConfig is the encoder configuration of a start.
type ScreenRecordConfig struct {
	Resolution  string // WIDTHxHEIGHT, default 720x480
	BitrateKbps int    // default 2500
	FrameRate   int    // default 30
	DurationSec int    // default 300
}

// Validate checks the configuration locally with the device's ranges.
func (c *ScreenRecordConfig) Validate() error {
	if c.Resolution == "" {
		c.Resolution = "720x480"
	}
	if c.BitrateKbps == 0 {
		c.BitrateKbps = 2500
	}
	if c.FrameRate == 0 {
		c.FrameRate = 30
	}
	if c.DurationSec == 0 {
		c.DurationSec = 300
	}
	m := resolutionPattern.FindStringSubmatch(c.Resolution)
	if m == nil {
		return fault.Usage(fault.CodeInvalidOption, "--resolution must be WIDTHxHEIGHT, e.g. 720x480")
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w%2 != 0 || h%2 != 0 || w < 128 || w > 4096 || h < 128 || h > 4096 {
		return fault.Usage(fault.CodeInvalidOption, "--resolution dimensions must be even numbers between 128 and 4096")
	}
	switch {
	case c.BitrateKbps < 100 || c.BitrateKbps > 50000:
		return fault.Usage(fault.CodeInvalidOption, "--bitrate-kbps must be between 100 and 50000").With("field", "bitrateKbps").With("value", c.BitrateKbps)
	case c.FrameRate < 1 || c.FrameRate > 120:
		return fault.Usage(fault.CodeInvalidOption, "--frame-rate must be between 1 and 120").With("field", "frameRate").With("value", c.FrameRate)
	case c.DurationSec < 1 || c.DurationSec > 3600:
		return fault.Usage(fault.CodeInvalidOption, "--duration must be between 1 and 3600 seconds").With("field", "durationSec").With("value", c.DurationSec)
	}
	return nil
}

// StartScreenRecording starts a recording and waits for `recording`.
// `pending-user-confirmation` keeps the wait going (a person must accept
// the dialog); a timeout or interrupt stops exactly this session.
func StartScreenRecording(ctx context.Context, d *device.Device, c ScreenRecordConfig, t SessionTimings) (*StartResult, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t = t.or(120*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	var root string
	res, err := screenSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params: device.P(protocol.ParamAction, "start", protocol.ParamSessionID, id, protocol.ParamResolution, c.Resolution,
			protocol.ParamBitrateKbps, strconv.Itoa(c.BitrateKbps), protocol.ParamFrameRate, strconv.Itoa(c.FrameRate),
			protocol.ParamDurationSec, strconv.Itoa(c.DurationSec)),
		Done:    []protocol.State{protocol.SessionRecording, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRecording},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 15 * time.Second, Phase: "screen-record-start",
		TimeoutHint: func(last device.WireObject) string {
			if device.StateOf(last) == protocol.ScreenPending {
				return "the MediaProjection dialog on the device was not confirmed (" + requiredMediaProjectionAction + ")"
			}
			return ""
		},
		Check: func(o device.WireObject) error {
			if res, _ := o.Text("resolution"); res != c.Resolution {
				return device.ContractError("the screen recording does not echo the requested resolution", map[string]any(o))
			}
			return stableRoot(&root, o)
		},
	})
	var e *fault.Error
	if errors.As(err, &e) && e.Code == fault.CodeSessionStartTimeout {
		// solopi-ai's fields of a start timeout: whether the tester must
		// act on the device (false, or the text of what to do) and what.
		last, _ := e.Details["lastStatus"].(map[string]any)
		e.With("userActionRequired", false).With("requiredUserAction", nil)
		if device.StateOf(device.WireObject(last)) == protocol.ScreenPending {
			e.WithUserAction(requiredMediaProjectionAction).With("requiredUserAction", requiredMediaProjectionAction)
		}
	}
	return res, err
}

// stableRoot enforces that capturesRoot never changes within a session.
func stableRoot(root *string, o device.WireObject) error {
	r, _ := o.Text("capturesRoot")
	if r == "" {
		return nil
	}
	if *root == "" {
		*root = r
		return nil
	}
	if r != *root {
		return device.ContractError("capturesRoot changed during the session", map[string]any(o))
	}
	return nil
}

// ScreenRecordingStatus reads the snapshot (exit 2 on a sessionId mismatch).
func ScreenRecordingStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	return screenSpec().statusResult(ctx, d, sessionID)
}

// ScreenStopOptions configure StopScreenRecording.
type ScreenStopOptions struct {
	SessionID string
	Output    string // local MP4 path; empty: nothing is pulled
	Overwrite bool
	SessionTimings
}

// CheckScreenOutput refuses, before the device is contacted, an output
// that exists (unless overwrite), is a directory or a symlink, or has no
// parent directory. An empty output is no output.
func CheckScreenOutput(output string, overwrite bool) (string, error) {
	if output == "" {
		return "", nil
	}
	return artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.CheckFile(output)
}

// StopScreenRecording stops our recording and, with Output, pulls exactly
// the MP4 this session published.
func StopScreenRecording(ctx context.Context, d *device.Device, o ScreenStopOptions) (*ScreenStopResult, error) {
	if err := RequireSessionID(o.SessionID); err != nil {
		return nil, err
	}
	out, err := CheckScreenOutput(o.Output, o.Overwrite)
	if err != nil {
		return nil, err
	}
	t := o.SessionTimings.or(60*time.Second, 500*time.Millisecond)
	stop, err := screenSpec().stop(ctx, d, stopPlan{SessionID: o.SessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "screen-record-stop", Success: []protocol.State{protocol.SessionStopped}, FailureCode: fault.CodeSessionFailed})
	if err != nil {
		return nil, err
	}
	res := &ScreenStopResult{Snapshot: stop.Snapshot, stopFields: stop.stopFields}
	if out == "" {
		return res, nil
	}
	snap := device.WireObject(res.Snapshot)
	if c, _ := snap.Flag("cancelledBeforeStart"); c {
		// Stopped before the encoder ran: there is no MP4 to pull.
		res.Artifacts = &screenArtifacts{Skipped: "cancelled_before_start"}
		return res, nil
	}
	f, err := pullScreenRecording(ctx, d, snap, out, o.Overwrite)
	if err != nil {
		e := fault.From(err)
		e.With("sessionId", o.SessionID).With("phase", "screen-record-artifact-pull").With("screenRecording", res)
		return nil, e
	}
	res.Artifacts = &screenArtifacts{ScreenRecording: &f.Path, ScreenRecordingFile: f}
	return res, nil
}

// pullScreenRecording copies the session's MP4 to local: test -f, stat -c
// %s == fileSize, pull (SHA-256 checked by the channel) into a temporary
// directory next to local, size check, then a hard link (no overwrite) or
// a rename (with --overwrite) into place.
func pullScreenRecording(ctx context.Context, d *device.Device, snap device.WireObject, local string, overwrite bool) (*screenFile, error) {
	root, _ := snap.Text("capturesRoot")
	remote, _ := snap.Text("outputPath")
	size, _ := snap.Integer("fileSize")
	// Only shared storage is pulled from: SoloPi's data root lives there
	//, and nothing else on the device is this command's to copy.
	shared := strings.HasPrefix(root, "/storage/") || strings.HasPrefix(root, "/sdcard/")
	if !shared || !validRootPath(root, 4, "ScreenCaptures") || path.Dir(remote) != root || !protocol.ValidIDName(path.Base(remote), ".mp4", 127) || size <= 0 {
		return nil, fault.New(fault.Transport, fault.CodeUnsafeDevicePath, "the recording's outputPath is not a non-empty MP4 directly inside capturesRoot; nothing was pulled").
			With("remotePath", remote).With("outputPath", remote).With("capturesRoot", root).With("fileSize", size)
	}
	if err := shellCheck(ctx, d, "test -f", device.ShellJoin("test", "-f", remote)); err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeArtifactMissing, "the recording's MP4 is not a regular file on the device", err).With("remotePath", remote).With("outputPath", remote)
	}
	got, err := remoteSize(ctx, d, remote)
	if err != nil {
		return nil, err
	}
	if got != size {
		return nil, fault.Newf(fault.Transport, fault.CodeArtifactMismatch, "the MP4 on the device has %d bytes, the session reported %d", got, size).With("remotePath", remote).
			With("outputPath", remote).With("reportedSize", size).With("deviceSize", got)
	}
	return pullFileAtomic(ctx, d, remote, local, size, overwrite)
}

// shellCheck runs a command whose exit code is the answer.
func shellCheck(ctx context.Context, d *device.Device, what, cmd string) error {
	_, stderr, code, err := d.Transport().Shell(ctx, cmd)
	if err != nil {
		if ie := device.CtxErr(ctx, err); ie != nil {
			return ie
		}
		return fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed during "+what, err)
	}
	if code != 0 {
		return fmt.Errorf("%s exited with %d: %s", what, code, device.FirstLine(string(stderr)))
	}
	return nil
}

// remoteSize is `stat -c %s` of a device file.
func remoteSize(ctx context.Context, d *device.Device, remote string) (int64, error) {
	stdout, stderr, code, err := d.Transport().Shell(ctx, device.ShellJoin("stat", "-c", "%s", remote))
	if err != nil {
		if ie := device.CtxErr(ctx, err); ie != nil {
			return 0, ie
		}
		return 0, fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while reading a file size", err)
	}
	if code != 0 {
		return 0, fault.Newf(fault.Transport, fault.CodeArtifactMissing, "stat of %s failed: %s", remote, device.FirstLine(string(stderr)))
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(string(stdout)), 10, 64)
	if perr != nil {
		return 0, fault.Newf(fault.Transport, fault.CodeInvalidDeviceResponse, "unexpected stat output for %s", remote)
	}
	return n, nil
}

// pullFileAtomic pulls remote into local under the output policy and
// checks the size the session reported before publishing.
func pullFileAtomic(ctx context.Context, d *device.Device, remote, local string, wantSize int64, overwrite bool) (*screenFile, error) {
	var dg device.Digest
	abs, err := artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.PublishFile(local, func(f *os.File) error {
		var err error
		if dg, err = d.Pull(ctx, remote, f); err != nil {
			return err
		}
		if wantSize >= 0 && dg.Size != wantSize {
			return fault.Newf(fault.Transport, fault.CodeArtifactMismatch, "pulled %d bytes, the session reported %d", dg.Size, wantSize).With("remotePath", remote)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &screenFile{Path: abs, RemotePath: remote, SHA256: dg.SHA256, SizeBytes: dg.Size}, nil
}
