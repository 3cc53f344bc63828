package solopi

// Standalone screen recording (wire contract §12): screen-record-start,
// -status, -stop [--output FILE]. `pending-user-confirmation` means the
// MediaProjection dialog waits for a person; it is never success. Only a
// `stopped` session that was not cancelled before start has an MP4, and
// only that exact file, inside capturesRoot, is ever pulled.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// Error codes of the screen-record commands.
const (
	CodeUnsafeDevicePath = "unsafe_device_path"  // 4: a device path outside the session's root
	CodeArtifactMismatch = "artifact_mismatch"   // 4: the pulled file is not what the device reported
	CodeArtifactMissing  = "artifact_missing"    // 4: the reported file is not on the device
	CodeOutputWrite      = "output_write_failed" // 3
)

// RequiredMediaProjectionAction is the device's requiredUserAction text
// while the MediaProjection dialog is showing.
const RequiredMediaProjectionAction = "Confirm the Android MediaProjection system dialog"

var (
	screenSessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	mp4NamePattern         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,126}\.mp4$`)
	resolutionPattern      = regexp.MustCompile(`^(\d{3,4})x(\d{3,4})$`)
)

// screenSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func screenSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "screen recording",
		Kind:     "screen-recording",
		Action:   protocol.ActionScreenRecord,
		Status:   P(protocol.ParamAction, "status"),
		Machine:  protocol.ScreenRecord(),
		Validate: validateScreenRecording,
		Latest:   "latestScreenRecording",
		StopParams: func(id string) Params {
			return P(protocol.ParamAction, "stop", protocol.ParamSessionID, id)
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

// validateScreenRecording is the strict validator of §12.3.
func validateScreenRecording(o wireObject) error {
	var v violations
	m := protocol.ScreenRecord()
	s := v.machineFlags(o, m, map[string]protocol.State{"recording": protocol.SessionRecording, "userActionRequired": protocol.ScreenPending})
	ua, _ := o.flag("userActionRequired")
	ra, _ := o.text("requiredUserAction")
	v.iff(ua, ra == RequiredMediaProjectionAction, "requiredUserAction must be %q exactly when userActionRequired", RequiredMediaProjectionAction)
	if !ua {
		v.check(!o.has("requiredUserAction"), "requiredUserAction is present without userActionRequired")
	}
	cancelled, ok1 := o.flagOrFalse("cancelledBeforeStart")
	auto, ok2 := o.flagOrFalse("autoStopped")
	v.check(ok1 && ok2, "cancelledBeforeStart and autoStopped must be booleans")
	ints := []string{"width", "height", "bitrateKbps", "frameRate", "durationSec", "requestedAt", "startedAt", "finishedAt", "durationMs", "fileSize"}
	for _, k := range ints {
		if o.has(k) {
			_, ok := o.integer(k)
			v.check(ok, "%s is not an integer", k)
		}
	}
	if s == protocol.SessionIdle {
		v.absentAll(o, "idle", append(ints, "sessionId", "resolution", "capturesRoot", "outputPath", "error")...)
		v.check(!cancelled && !auto, "idle but cancelledBeforeStart or autoStopped is true")
		return v.err("screen recording status", o)
	}
	if s == "" {
		return v.err("screen recording status", o)
	}
	id, _ := o.text("sessionId")
	v.check(screenSessionIDPattern.MatchString(id), "sessionId %q is not a valid screen-record id", id)
	res, _ := o.text("resolution")
	w, _ := o.integer("width")
	h, _ := o.integer("height")
	v.check(res == fmt.Sprintf("%dx%d", w, h), "resolution %q does not equal width x height (%dx%d)", res, w, h)
	v.check(w%2 == 0 && h%2 == 0 && w >= 128 && w <= 4096 && h >= 128 && h <= 4096, "width/height %dx%d outside even 128..4096", w, h)
	br, _ := o.integer("bitrateKbps")
	fr, _ := o.integer("frameRate")
	ds, _ := o.integer("durationSec")
	v.check(br >= 100 && br <= 50000, "bitrateKbps %d outside 100..50000", br)
	v.check(fr >= 1 && fr <= 120, "frameRate %d outside 1..120", fr)
	v.check(ds >= 1 && ds <= 3600, "durationSec %d outside 1..3600", ds)
	req, _ := o.integer("requestedAt")
	v.check(req > 0, "requestedAt must be positive")
	root, hasRoot := o.text("capturesRoot")
	if o.has("capturesRoot") {
		v.check(hasRoot && validRootPath(root, 4, "ScreenCaptures"), "capturesRoot %q is not an absolute .../ScreenCaptures path with at least 4 parts", root)
	}
	if o.has("outputPath") {
		out, _ := o.text("outputPath")
		v.check(hasRoot && path.Dir(out) == root && mp4NamePattern.MatchString(path.Base(out)),
			"outputPath %q is not a safe .mp4 directly inside capturesRoot", out)
	}
	st, hasSt := o.integer("startedAt")
	fin, hasFin := o.integer("finishedAt")
	if hasSt {
		v.check(st >= req, "startedAt is before requestedAt")
	}
	if hasFin {
		v.check(fin >= req && (!hasSt || fin >= st), "finishedAt is before requestedAt or startedAt")
	}
	if dur, ok := o.integer("durationMs"); ok && hasSt && hasFin {
		v.check(dur == fin-st, "durationMs %d != finishedAt - startedAt (%d)", dur, fin-st)
	}
	v.iff(m.IsTerminal(s), o.has("finishedAt"), "finishedAt must be present exactly in terminal states")
	v.iff(s == protocol.SessionFailed, o.has("error"), "error must be present exactly in failed")
	if cancelled {
		v.check(s == protocol.SessionStopped, "cancelledBeforeStart in state %s", s)
		v.check(!o.has("startedAt") && !o.has("outputPath") && !o.has("fileSize"), "a recording cancelled before start has startedAt, outputPath or fileSize")
	}
	if s == protocol.SessionStopped && !cancelled {
		size, _ := o.integer("fileSize")
		v.check(o.has("startedAt") && o.has("outputPath") && size > 0, "a stopped recording lacks startedAt, outputPath or a positive fileSize")
	}
	if s == protocol.SessionRecording {
		v.check(o.has("startedAt") && o.has("outputPath"), "a recording session lacks startedAt or outputPath")
	}
	if s == protocol.ScreenPending {
		v.check(!o.has("outputPath"), "a session pending user confirmation has an outputPath")
	}
	if auto {
		v.check(s == protocol.SessionStopping || s == protocol.SessionStopped || s == protocol.SessionFailed, "autoStopped in state %s", s)
	}
	return v.err("screen recording status", o)
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
		return fault.Usage(CodeInvalidOption, "--resolution must be WIDTHxHEIGHT, e.g. 720x480")
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w%2 != 0 || h%2 != 0 || w < 128 || w > 4096 || h < 128 || h > 4096 {
		return fault.Usage(CodeInvalidOption, "--resolution dimensions must be even numbers between 128 and 4096")
	}
	switch {
	case c.BitrateKbps < 100 || c.BitrateKbps > 50000:
		return fault.Usage(CodeInvalidOption, "--bitrate-kbps must be between 100 and 50000")
	case c.FrameRate < 1 || c.FrameRate > 120:
		return fault.Usage(CodeInvalidOption, "--frame-rate must be between 1 and 120")
	case c.DurationSec < 1 || c.DurationSec > 3600:
		return fault.Usage(CodeInvalidOption, "--duration must be between 1 and 3600 seconds")
	}
	return nil
}

// StartScreenRecording starts a recording and waits for `recording`.
// `pending-user-confirmation` keeps the wait going (a person must accept
// the dialog); a timeout or interrupt stops exactly this session.
func StartScreenRecording(ctx context.Context, d *Device, c ScreenRecordConfig, t SessionTimings) (*SessionResult, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t = t.or(120*time.Second, 500*time.Millisecond)
	id := NewRequestID()
	var root string
	return screenSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params: P(protocol.ParamAction, "start", protocol.ParamSessionID, id, protocol.ParamResolution, c.Resolution,
			protocol.ParamBitrateKbps, strconv.Itoa(c.BitrateKbps), protocol.ParamFrameRate, strconv.Itoa(c.FrameRate),
			protocol.ParamDurationSec, strconv.Itoa(c.DurationSec)),
		Done:    []protocol.State{protocol.SessionRecording, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRecording},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 15 * time.Second, Phase: "screen-record-start",
		TimeoutHint: func(last wireObject) string {
			if last.state() == protocol.ScreenPending {
				return "the MediaProjection dialog on the device was not confirmed (" + RequiredMediaProjectionAction + ")"
			}
			return ""
		},
		Check: func(o wireObject) error {
			if res, _ := o.text("resolution"); res != c.Resolution {
				return contractError("the screen recording does not echo the requested resolution", map[string]any(o))
			}
			return stableRoot(&root, o)
		},
	})
}

// stableRoot enforces that capturesRoot never changes within a session.
func stableRoot(root *string, o wireObject) error {
	r, _ := o.text("capturesRoot")
	if r == "" {
		return nil
	}
	if *root == "" {
		*root = r
		return nil
	}
	if r != *root {
		return contractError("capturesRoot changed during the session", map[string]any(o))
	}
	return nil
}

// ScreenRecordingStatus reads the snapshot (exit 2 on a sessionId mismatch).
func ScreenRecordingStatus(ctx context.Context, d *Device, sessionID string) (*SessionResult, error) {
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
// that is a directory or a symlink, or exists without --overwrite.
func CheckScreenOutput(output string, overwrite bool) (string, error) {
	return checkOutput(output, overwrite, outputRules{
		symlink:   "the output path is a symbolic link",
		wrongKind: "the output path is a directory",
		exists:    "the output file already exists; pass --overwrite to replace it",
		noParent:  "the output file's directory does not exist",
	})
}

// StopScreenRecording stops our recording and, with Output, pulls exactly
// the MP4 this session published.
func StopScreenRecording(ctx context.Context, d *Device, o ScreenStopOptions) (*SessionResult, error) {
	if err := RequireSessionID(o.SessionID); err != nil {
		return nil, err
	}
	out, err := CheckScreenOutput(o.Output, o.Overwrite)
	if err != nil {
		return nil, err
	}
	t := o.SessionTimings.or(60*time.Second, 500*time.Millisecond)
	res, err := screenSpec().stop(ctx, d, stopPlan{SessionID: o.SessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "screen-record-stop", Success: []protocol.State{protocol.SessionStopped}, Detail: "screenRecording", FailureCode: CodeSessionFailed})
	if err != nil || out == "" {
		return res, err
	}
	snap := wireObject(res.Object)
	if c, _ := snap.flag("cancelledBeforeStart"); c {
		// Stopped before the encoder ran: there is no MP4 to pull.
		res.Object["artifacts"] = map[string]any{"screenRecording": nil, "skipped": "cancelled_before_start"}
		return res, nil
	}
	art, err := pullScreenRecording(ctx, d, snap, out, o.Overwrite)
	if err != nil {
		e := fault.From(err)
		e.With("sessionId", o.SessionID).With("phase", "screen-record-artifact-pull").With("screenRecording", res.Object)
		return nil, e
	}
	res.Object["artifacts"] = map[string]any{"screenRecording": art}
	return res, nil
}

// pullScreenRecording copies the session's MP4 to local: test -f, stat -c
// %s == fileSize, pull (SHA-256 checked by the channel) into a temporary
// directory next to local, size check, then a hard link (no overwrite) or
// a rename (with --overwrite) into place.
func pullScreenRecording(ctx context.Context, d *Device, snap wireObject, local string, overwrite bool) (map[string]any, error) {
	root, _ := snap.text("capturesRoot")
	remote, _ := snap.text("outputPath")
	size, _ := snap.integer("fileSize")
	// Only shared storage is pulled from: SoloPi's data root lives there
	// (§19), and nothing else on the device is this command's to copy.
	shared := strings.HasPrefix(root, "/storage/") || strings.HasPrefix(root, "/sdcard/")
	if !shared || !validRootPath(root, 4, "ScreenCaptures") || path.Dir(remote) != root || !mp4NamePattern.MatchString(path.Base(remote)) || size <= 0 {
		return nil, fault.New(fault.Transport, CodeUnsafeDevicePath, "the recording's outputPath is not a non-empty MP4 directly inside capturesRoot; nothing was pulled").
			With("remotePath", remote).With("capturesRoot", root)
	}
	if err := shellCheck(ctx, d, "test -f", ShellJoin("test", "-f", remote)); err != nil {
		return nil, fault.Wrap(fault.Transport, CodeArtifactMissing, "the recording's MP4 is not a regular file on the device", err).With("remotePath", remote)
	}
	got, err := remoteSize(ctx, d, remote)
	if err != nil {
		return nil, err
	}
	if got != size {
		return nil, fault.Newf(fault.Transport, CodeArtifactMismatch, "the MP4 on the device has %d bytes, the session reported %d", got, size).With("remotePath", remote)
	}
	return pullFileAtomic(ctx, d, remote, local, size, overwrite)
}

// shellCheck runs a command whose exit code is the answer.
func shellCheck(ctx context.Context, d *Device, what, cmd string) error {
	_, stderr, code, err := d.Transport().Shell(ctx, cmd)
	if err != nil {
		if ie := ctxErr(ctx, err); ie != nil {
			return ie
		}
		return fault.Wrap(fault.Transport, CodeAdbError, "adb shell failed during "+what, err)
	}
	if code != 0 {
		return fmt.Errorf("%s exited with %d: %s", what, code, firstLine(string(stderr)))
	}
	return nil
}

// remoteSize is `stat -c %s` of a device file.
func remoteSize(ctx context.Context, d *Device, remote string) (int64, error) {
	stdout, stderr, code, err := d.Transport().Shell(ctx, ShellJoin("stat", "-c", "%s", remote))
	if err != nil {
		if ie := ctxErr(ctx, err); ie != nil {
			return 0, ie
		}
		return 0, fault.Wrap(fault.Transport, CodeAdbError, "adb shell failed while reading a file size", err)
	}
	if code != 0 {
		return 0, fault.Newf(fault.Transport, CodeArtifactMissing, "stat of %s failed: %s", remote, firstLine(string(stderr)))
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(string(stdout)), 10, 64)
	if perr != nil {
		return 0, fault.Newf(fault.Transport, CodeInvalidResponse, "unexpected stat output for %s", remote)
	}
	return n, nil
}

// pullFileAtomic pulls remote into a temporary directory next to local and
// publishes it in one step; wantSize < 0 skips the size check.
func pullFileAtomic(ctx context.Context, d *Device, remote, local string, wantSize int64, overwrite bool) (map[string]any, error) {
	tmpDir, err := os.MkdirTemp(filepath.Dir(local), "."+filepath.Base(local)+".pull-*")
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, CodeOutputWrite, "cannot create a temporary directory next to the output", err).With("output", local)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "pull.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, CodeOutputWrite, "cannot create the temporary output file", err).With("output", local)
	}
	dg, perr := d.Pull(ctx, remote, f)
	if cerr := f.Close(); perr == nil && cerr != nil {
		perr = fault.Wrap(fault.Invalid, CodeOutputWrite, "writing the pulled file failed", cerr)
	}
	if perr != nil {
		return nil, perr
	}
	if wantSize >= 0 && dg.Size != wantSize {
		return nil, fault.Newf(fault.Transport, CodeArtifactMismatch, "pulled %d bytes, the session reported %d", dg.Size, wantSize).With("remotePath", remote)
	}
	if overwrite {
		if fi, err := os.Lstat(local); err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
			return nil, fault.Usage(CodeInvalidOutput, "the output path became a directory or symbolic link").With("output", local)
		}
		err = os.Rename(tmp, local)
	} else {
		// A link fails when the target appeared meanwhile: no silent overwrite.
		err = os.Link(tmp, local)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fault.Usage(CodeOutputExists, "the output file appeared while pulling; nothing was replaced").With("output", local)
		}
		return nil, fault.Wrap(fault.Invalid, CodeOutputWrite, "publishing the pulled file failed", err).With("output", local)
	}
	return map[string]any{"path": local, "remotePath": remote, "sha256": dg.SHA256, "sizeBytes": dg.Size}, nil
}
