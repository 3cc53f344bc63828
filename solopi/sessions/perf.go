package sessions

// Performance collection (docs/device-protocol.md): perf-list, perf-current,
// perf-start, perf-status, perf-stop [--output DIR]. `stopped` means the
// device saved the CSVs, never that the app performed well. With --output
// only the directory published for exactly our sessionId is pulled.

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// validPerfOutputName is the folder name of a recording:
// performance-<session id>.
func validPerfOutputName(name string) bool {
	id, ok := strings.CutPrefix(name, "performance-")
	return ok && protocol.ValidID(id, 116)
}

// perfSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func perfSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "performance recording",
		Kind:     "performance",
		Action:   protocol.ActionPerformance,
		Status:   device.P(protocol.ParamMode, "status"),
		Machine:  protocol.Performance(),
		Validate: validatePerformance,
		Latest:   "latestPerformance",
		Key:      "performance",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamMode, "normal", protocol.ParamAction, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.SessionRecording},
		Retryable: true,
	}
}

// validatePerformance is the host validator.
func validatePerformance(o device.WireObject) error {
	var v device.Violations
	s := v.MachineFlags(o, protocol.Performance(), map[string]protocol.State{"recording": protocol.SessionRecording})
	if s != "" && s != protocol.SessionIdle {
		id, _ := o.Text("sessionId")
		v.Check(id != "", "a %s performance session has no sessionId", s)
	}
	if o.Has("stopRetryable") {
		r, ok := o.Flag("stopRetryable")
		v.Check(ok, "stopRetryable is not a boolean")
		v.Check(!r || s == protocol.SessionStopping, "stopRetryable is true in state %s", s)
	}
	for _, k := range []string{"items", "runningItems"} {
		if o.Has(k) {
			_, ok := o.Strings(k)
			v.Check(ok, "%s is not a list of strings", k)
		}
	}
	return v.Err("performance status", o)
}

// validateCurrent adds the perf-current rules: a positive sampledAt and a
// values object of strings.
func validateCurrent(o device.WireObject) error {
	var v device.Violations
	n, ok := o.Integer("sampledAt")
	v.Check(ok && n > 0, "sampledAt is not a positive integer")
	vals, ok := o["values"].(map[string]any)
	v.Check(ok, "values is not an object")
	for k, x := range vals {
		_, isStr := x.(string)
		v.Check(isStr, "values[%q] is not a string", k)
	}
	return v.Err("performance current values", o)
}

// PerfItems queries listItems and returns the object and the item keys.
func PerfItems(ctx context.Context, d *device.Device) (map[string]any, []string, error) {
	o, err := d.QuerySucceeded(ctx, protocol.ActionPerformance, device.P(protocol.ParamMode, "listItems"),
		"the performance item list has no boolean success", "the device refused the performance item list")
	if err != nil {
		return nil, nil, err
	}
	m := map[string]any(o)
	arr, isArr := m["items"].([]any)
	if !isArr {
		return nil, nil, device.ContractError("the performance item list has no items array", m)
	}
	keys := make([]string, 0, len(arr))
	for i, it := range arr {
		item, _ := it.(map[string]any)
		k, _ := item["key"].(string)
		if k == "" {
			return nil, nil, device.ContractError(fmt.Sprintf("performance item %d has no key", i), m)
		}
		keys = append(keys, k)
	}
	return m, keys, nil
}

// PerfCurrent queries mode=current: the snapshot plus sampled values.
func PerfCurrent(ctx context.Context, d *device.Device) (map[string]any, error) {
	o, err := d.QuerySucceeded(ctx, protocol.ActionPerformance, device.P(protocol.ParamMode, "current"),
		"the performance values have no boolean success", "the device refused the performance values query")
	if err != nil {
		return nil, err
	}
	if err := validatePerformance(o); err != nil {
		return nil, err
	}
	if err := validateCurrent(o); err != nil {
		return nil, err
	}
	return o, nil
}

// ParseItems splits --items: trimmed, empties dropped, duplicates removed
// with the order kept.
func ParseItems(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// PerfStartOptions configure StartPerformance and StartPerfDisplay.
type PerfStartOptions struct {
	TargetPackage string // empty with Global
	Global        bool
	Items         []string
	SessionTimings
}

// Validate checks the request locally (exit 3).
func (o *PerfStartOptions) Validate() error {
	if o.Global == (o.TargetPackage != "") {
		return fault.Usage(fault.CodeInvalidOption, "give exactly one of --target-package PKG and --global")
	}
	if o.TargetPackage != "" && !protocol.ValidPackageName(o.TargetPackage) {
		return fault.Usage(fault.CodeInvalidOption, "--target-package must look like com.example.app")
	}
	if len(o.Items) == 0 {
		return fault.Usage(fault.CodeInvalidOption, "--items must name at least one performance item, e.g. CPU,Memory")
	}
	return nil
}

func (o *PerfStartOptions) targetApp() string {
	if o.Global {
		return "-"
	}
	return o.TargetPackage
}

// checkItems refuses items the device does not list (exit 2).
func checkItems(want, available []string) error {
	var bad []string
	for _, w := range want {
		if !slices.Contains(available, w) {
			bad = append(bad, w)
		}
	}
	if len(bad) > 0 {
		return fault.New(fault.Failed, fault.CodeUnsupportedItems, "the device does not support these performance items: "+strings.Join(bad, ",")).
			With("unsupportedItems", bad).With("availableItems", available)
	}
	return nil
}

// StartPerformance starts a performance recording under a fresh sessionId
// and waits for `recording`; a timeout or an interrupt stops it again.
func StartPerformance(ctx context.Context, d *device.Device, o PerfStartOptions) (*StartResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	_, keys, err := PerfItems(ctx, d)
	if err != nil {
		return nil, err
	}
	if err := checkItems(o.Items, keys); err != nil {
		return nil, err
	}
	t := o.SessionTimings.or(30*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	return perfSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params: device.P(protocol.ParamMode, "normal", protocol.ParamAction, "start", protocol.ParamTargetApp, o.targetApp(),
			protocol.ParamItems, strings.Join(o.Items, ","), protocol.ParamSessionID, id),
		Done:    []protocol.State{protocol.SessionRecording, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRecording},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 15 * time.Second, Phase: "performance-start",
	})
}

// PerfStatus reads the performance snapshot (exit 2 on a mismatch).
func PerfStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	return perfSpec().statusResult(ctx, d, sessionID)
}

// PerfStopOptions configure StopPerformance.
type PerfStopOptions struct {
	SessionID string
	Output    string // local directory; empty: nothing is pulled
	Overwrite bool
	SessionTimings
}

// CheckDirOutput refuses, before any device contact, an output directory
// that exists (unless overwrite), is a symlink or a file, or has no parent.
// An empty output is no output.
func CheckDirOutput(output string, overwrite bool) (string, error) {
	if output == "" {
		return "", nil
	}
	return artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.CheckDir(output)
}

// StopPerformance stops our recording (re-sending the stop at most 3 times
// while the device reports retryable cleanup) and, with Output, pulls the
// saved directory of exactly this session.
func StopPerformance(ctx context.Context, d *device.Device, o PerfStopOptions) (*PerfStopResult, error) {
	if err := CheckPerfSessionID(o.SessionID, true); err != nil {
		return nil, err
	}
	out, err := CheckDirOutput(o.Output, o.Overwrite)
	if err != nil {
		return nil, err
	}
	t := o.SessionTimings.or(60*time.Second, 500*time.Millisecond)
	stop, err := perfSpec().stop(ctx, d, stopPlan{SessionID: o.SessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "performance-stop", Success: []protocol.State{protocol.SessionStopped}, RecoverUnreachable: true,
		FailureCode: fault.CodeSessionFailed})
	if err != nil {
		return nil, err
	}
	res := &PerfStopResult{Snapshot: stop.Snapshot, stopFields: stop.stopFields}
	if out == "" {
		return res, nil
	}
	dir, err := pullPerformance(ctx, d, device.WireObject(res.Snapshot), o.SessionID, out, o.Overwrite)
	if err != nil {
		e := fault.From(err)
		e.With("sessionId", o.SessionID).With("phase", "performance-artifact-pull").With("performance", res)
		return nil, e
	}
	res.Artifacts = &perfArtifacts{Performance: dir.Path, Files: dir.Files, PerformanceDirectory: *dir}
	return res, nil
}

// checkPerfPaths is the path rule: both paths on shared
// storage, the root named records, the output its direct child named
// performance-<our sessionId>.
func checkPerfPaths(o device.WireObject, sessionID string) (string, error) {
	root, _ := o.Text("recordsRoot")
	out, _ := o.Text("outputPath")
	onStorage := func(p string) bool {
		return (strings.HasPrefix(p, "/sdcard/") || strings.HasPrefix(p, "/storage/emulated/")) && path.Clean(p) == p &&
			!strings.ContainsAny(p, "\\\x00")
	}
	if !onStorage(root) || !onStorage(out) || path.Base(root) != "records" || path.Dir(out) != root ||
		!validPerfOutputName(path.Base(out)) || path.Base(out) != "performance-"+sessionID {
		return "", fault.New(fault.Transport, fault.CodeUnsafeDevicePath,
			"the saved performance directory is not records/performance-<this sessionId> on shared storage; nothing was pulled").
			With("outputPath", out).With("recordsRoot", root)
	}
	return out, nil
}

// remoteEntry is one file of a device directory.
type remoteEntry struct {
	name string
	size int64
}

// lister is the optional directory listing of a transport (adb sync LIST).
type lister interface {
	List(ctx context.Context, remotePath string) ([]fs.FileInfo, error)
}

// listRemoteFiles lists the regular files of a device directory, refusing
// anything that is not a plain file with a safe name.
func listRemoteFiles(ctx context.Context, d *device.Device, dir string, maxFiles int, maxSize int64) ([]remoteEntry, error) {
	var infos []fs.FileInfo
	if l, ok := d.Transport().(lister); ok {
		list, err := l.List(ctx, dir)
		if err != nil {
			if ie := device.CtxErr(ctx, err); ie != nil {
				return nil, ie
			}
			return nil, fault.Wrap(fault.Transport, fault.CodeAdbError, "listing the device directory failed", err).With("remotePath", dir)
		}
		infos = list
	} else {
		stdout, stderr, code, err := d.Transport().Shell(ctx, device.ShellJoin("ls", "-1a", dir))
		if err != nil {
			if ie := device.CtxErr(ctx, err); ie != nil {
				return nil, ie
			}
			return nil, fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while listing a device directory", err)
		}
		if code != 0 {
			return nil, fault.Newf(fault.Transport, fault.CodeArtifactMissing, "listing %s failed: %s", dir, device.FirstLine(string(stderr)))
		}
		for _, name := range strings.Split(string(stdout), "\n") {
			name = strings.TrimRight(name, "\r")
			if name == "" || name == "." || name == ".." {
				continue
			}
			fi, err := d.Transport().Stat(ctx, dir+"/"+name)
			if err != nil {
				if ie := device.CtxErr(ctx, err); ie != nil {
					return nil, ie
				}
				return nil, fault.Wrap(fault.Transport, fault.CodeAdbError, "stat of a device file failed", err).With("remotePath", dir+"/"+name)
			}
			infos = append(infos, namedInfo{FileInfo: fi, name: name})
		}
	}
	var out []remoteEntry
	for _, fi := range infos {
		name := fi.Name()
		if name == "." || name == ".." {
			continue
		}
		if !safeLocalName(name) || !fi.Mode().IsRegular() {
			return nil, fault.Newf(fault.Transport, fault.CodeUnsafeDevicePath, "the device directory holds an entry the host will not pull: %q", name).With("remotePath", dir)
		}
		if len(out) >= maxFiles {
			return nil, fault.Newf(fault.Transport, fault.CodeUnsafeDevicePath, "the device directory holds more than %d files", maxFiles).With("remotePath", dir)
		}
		if fi.Size() > maxSize {
			return nil, fault.Newf(fault.Transport, fault.CodeUnsafeDevicePath, "%s is larger than %d bytes", name, maxSize).With("remotePath", dir)
		}
		out = append(out, remoteEntry{name: name, size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b remoteEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// namedInfo keeps the listed name (Stat of a path may report another).
type namedInfo struct {
	fs.FileInfo
	name string
}

func (n namedInfo) Name() string { return n.name }

// safeLocalName accepts a single path element without separators, control
// characters or a leading dot.
func safeLocalName(name string) bool {
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") || len(name) > 255 {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == ':' {
			return false
		}
	}
	return true
}

// pullPerformance pulls every file of the session directory into a
// temporary directory next to local, requires at least one non-empty CSV,
// then renames the directory into place.
func pullPerformance(ctx context.Context, d *device.Device, o device.WireObject, sessionID, local string, overwrite bool) (*perfDirectory, error) {
	remote, entries, err := perfEntries(ctx, d, o, sessionID)
	if err != nil {
		return nil, err
	}
	var files []pulledFile
	_, err = artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.PublishDir(local, func(dir *artifacts.Dir) error {
		pulled, err := pullPerfFiles(ctx, d, remote, entries, dir, "")
		if err != nil {
			if fault.CodeOf(err) == fault.CodeArtifactMissing {
				fault.From(err).With("output", local)
			}
			return err
		}
		for _, f := range pulled {
			files = append(files, pulledFile{Name: f.Path, SizeBytes: f.Size, SHA256: f.SHA256})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &perfDirectory{Path: local, RemotePath: remote, Files: files}, nil
}

// PerfRecorder is a performance recording driven by another feature
// (run --perf, through replay.RunOptions.PerfSessions): started under a
// fresh sessionId, stopped by exactly that id, and pulled into an
// evidence directory.
type PerfRecorder struct{}

// Start starts recording items on target ("" for the whole device) and
// returns the sessionId once the device records; a timeout or an interrupt
// stops what it began.
func (PerfRecorder) Start(ctx context.Context, d *device.Device, target string, items []string, interval time.Duration) (string, error) {
	res, err := StartPerformance(ctx, d, PerfStartOptions{TargetPackage: target, Global: target == "", Items: items, SessionTimings: SessionTimings{Interval: interval}})
	if err != nil {
		return "", err
	}
	return device.SessionIDOf(res.Snapshot), nil
}

// Stop stops exactly sessionID and returns the stopped snapshot (where the
// device saved the CSVs).
func (PerfRecorder) Stop(ctx context.Context, d *device.Device, sessionID string, timeout, interval time.Duration) (map[string]any, error) {
	res, err := StopPerformance(ctx, d, PerfStopOptions{SessionID: sessionID, SessionTimings: SessionTimings{Timeout: timeout, Interval: interval}})
	if err != nil {
		return nil, err
	}
	return res.Snapshot, nil
}

// Pull pulls the directory the stop saved (stopped, its snapshot) for
// exactly sessionID into sub/ of an evidence directory, every file in its
// manifest; like perf-stop --output it requires at least one non-empty
// CSV, and on an error it returns the files pulled before it.
func (PerfRecorder) Pull(ctx context.Context, d *device.Device, stopped map[string]any, sessionID string, dir *artifacts.Dir, sub string) ([]artifacts.FileEntry, error) {
	remote, entries, err := perfEntries(ctx, d, device.WireObject(stopped), sessionID)
	if err != nil {
		return nil, err
	}
	return pullPerfFiles(ctx, d, remote, entries, dir, sub+"/")
}

// perfEntries checks the saved directory's path and lists its files.
func perfEntries(ctx context.Context, d *device.Device, o device.WireObject, sessionID string) (string, []remoteEntry, error) {
	remote, err := checkPerfPaths(o, sessionID)
	if err != nil {
		return "", nil, err
	}
	entries, err := listRemoteFiles(ctx, d, remote, perfstats.PerfMaxFiles, perfstats.PerfMaxFileBytes)
	return remote, entries, err
}

// pullPerfFiles pulls entries of remote into dir under prefix, each
// checked against the listed size and by SHA-256; on an error it returns
// the files pulled before it (an evidence directory keeps them).
func pullPerfFiles(ctx context.Context, d *device.Device, remote string, entries []remoteEntry, dir *artifacts.Dir, prefix string) ([]artifacts.FileEntry, error) {
	var out []artifacts.FileEntry
	csvs := 0
	for _, e := range entries {
		w, err := dir.Create(prefix+e.name, remote+"/"+e.name)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "cannot create a pulled file", err).With("output", dir.Root())
		}
		dg, perr := d.Pull(ctx, remote+"/"+e.name, w)
		var fe artifacts.FileEntry
		if perr == nil {
			var cerr error
			if fe, cerr = w.Commit(); cerr != nil {
				perr = fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "writing a pulled file failed", cerr)
			}
		}
		if perr != nil {
			w.Abort()
			return out, perr
		}
		if dg.Size != e.size {
			return out, fault.Newf(fault.Transport, fault.CodeArtifactMismatch, "%s: pulled %d bytes, the device listed %d", e.name, dg.Size, e.size)
		}
		if strings.HasSuffix(strings.ToLower(e.name), ".csv") && dg.Size > 0 {
			csvs++
		}
		out = append(out, fe)
	}
	if csvs == 0 {
		return out, fault.New(fault.Transport, fault.CodeArtifactMissing, "the saved performance directory holds no non-empty CSV file").With("remotePath", remote)
	}
	return out, nil
}

// CheckPerfSessionID is the local rule for a performance or display
// --session-id: [A-Za-z0-9][A-Za-z0-9._-]{0,115} (exit 3).
func CheckPerfSessionID(id string, required bool) error {
	if id == "" && !required {
		return nil
	}
	if !protocol.ValidID(id, 116) {
		return fault.Usage(fault.CodeInvalidSessionID, "--session-id must match [A-Za-z0-9][A-Za-z0-9._-]{0,115}").With("sessionId", id)
	}
	return nil
}
