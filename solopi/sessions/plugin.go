package sessions

// Plugins (docs/device-protocol.md): plugin-list, plugin-install, plugin-remove.
// A plugin ZIP is checked and hashed locally, pushed under a name the host
// generates into SoloPi's import directory, imported by fileId and SHA-256,
// and the staged copy is deleted again whatever happened. Nothing is ever
// fetched from or uploaded to a URL: the `url` parameter is never sent.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Error codes of the plugin commands.
const (
	maxPluginZip = 64 << 20
)

// validStagedName is the name solopi gives a plugin ZIP it stages on the
// device: solopi-plugin-<32 hex>.zip (see StagedPluginName).
func validStagedName(name string) bool {
	base, ok := strings.CutSuffix(name, ".zip")
	return ok && protocol.ValidPrefixedHex(base, "solopi-plugin-", 32)
}

// validatePluginList checks plugin?action=list.
func validatePluginList(o device.WireObject) error {
	var v device.Violations
	plugins, ok := o["plugins"].([]any)
	v.Check(ok, "plugins is not an array")
	total, ok := o.Integer("total")
	v.Check(ok && total == int64(len(plugins)), "total does not count the plugins")
	dir, _ := o.Text("importDirectory")
	v.Check(dir == "patch", "importDirectory is not \"patch\"")
	ip, _ := o.Text("importPath")
	v.Check(validRootPath(ip, 4, "patch"), "importPath %q is not an absolute .../patch path with at least 4 parts", ip)
	_, ok = o.Flag("pathAvailable")
	v.Check(ok, "pathAvailable is not a boolean")
	mt, _ := o.Text("mutationTransport")
	v.Check(mt == "adb", "mutationTransport is not \"adb\"")
	_, ok = o.Flag("importFilesTruncated")
	v.Check(ok, "importFilesTruncated is not a boolean")
	for i, p := range plugins {
		po, ok := p.(map[string]any)
		if !ok {
			v.Add("plugins[%d] is not an object", i)
			continue
		}
		w := device.WireObject(po)
		id, _ := w.Text("id")
		name, _ := w.Text("name")
		ver, vok := w.Number("version")
		status, _ := w.Text("status")
		source, _ := w.Text("source")
		v.Check(protocol.ValidPrefixedHex(id, "plugin-", 64), "plugins[%d].id %q is not plugin-<64 hex>", i, id)
		v.Check(name != "", "plugins[%d] has no name", i)
		v.Check(vok && ver > 0, "plugins[%d].version is not positive", i)
		v.Check(slices.Contains([]string{"built_in", "loaded", "installed"}, status), "plugins[%d].status %q is unknown", i, status)
		v.Check(slices.Contains([]string{"built_in", "managed_patch_store", "runtime_registry"}, source), "plugins[%d].source %q is unknown", i, source)
		core, cok := w.Flag("core")
		rem, rok := w.Flag("removable")
		v.Check(cok && rok && rem == !core, "plugins[%d]: removable must be !core", i)
		for _, k := range []string{"runtimeLoaded", "hasCode", "hasNativeLibraries", "hasAssets", "catalogAvailable"} {
			_, ok := w.Flag(k)
			v.Check(ok, "plugins[%d].%s is not a boolean", i, k)
		}
		if w.Has("dependencies") {
			_, ok := w.Strings("dependencies")
			v.Check(ok, "plugins[%d].dependencies is not a list of strings", i)
		}
		if w.Has("updateAvailable") {
			v.Check(w.Has("catalogVersion"), "plugins[%d].updateAvailable without catalogVersion", i)
		}
	}
	files, ok := o["importFiles"].([]any)
	v.Check(ok && len(files) <= 100, "importFiles is not an array of at most 100 entries")
	for i, f := range files {
		fo, ok := f.(map[string]any)
		if !ok {
			v.Add("importFiles[%d] is not an object", i)
			continue
		}
		w := device.WireObject(fo)
		id, _ := w.Text("fileId")
		name, _ := w.Text("fileName")
		size, sok := w.Integer("sizeBytes")
		req, _ := w.Flag("sha256Required")
		v.Check(protocol.ValidPrefixedHex(id, "plugin-import-", 64), "importFiles[%d].fileId %q is not plugin-import-<64 hex>", i, id)
		v.Check(protocol.ValidIDName(name, ".zip", 127), "importFiles[%d].fileName %q is not a safe .zip name", i, name)
		v.Check(sok && size >= 1 && size <= maxPluginZip, "importFiles[%d].sizeBytes outside 1..64 MiB", i)
		v.Check(req, "importFiles[%d].sha256Required is not true", i)
	}
	return v.Err("plugin list", o)
}

// PluginList queries and validates plugin?action=list.
func PluginList(ctx context.Context, d *device.Device) (map[string]any, error) {
	o, err := d.QuerySucceeded(ctx, protocol.ActionPlugin, device.P(protocol.ParamAction, "list"),
		"the plugin list has no boolean success", "the device refused the plugin list")
	if err != nil {
		return nil, err
	}
	if err := validatePluginList(o); err != nil {
		return nil, err
	}
	return o, nil
}

// pluginZip is a local plugin archive that passed the host checks.
type pluginZip struct {
	Path   string
	Data   []byte
	SHA256 string
	Size   int64
}

// pluginArchive is how --file is read: the bytes checked and hashed are
// the bytes pushed, so a symlink or a file swapped while it is opened is
// refused.
var pluginArchive = artifacts.Input{What: "plugin archive", Code: fault.CodeInvalidPluginFile, Field: "file", Max: maxPluginZip, NoSymlink: true}

// ReadPluginZip checks the local archive: a .zip regular file (not a
// symlink, not swapped between the check and the open), 1 B..64 MiB, a
// valid ZIP with at least one entry and a desc.json at its root or inside
// a single top-level directory. The bytes that were checked and hashed are
// the bytes that are pushed.
func ReadPluginZip(p string) (*pluginZip, error) {
	bad := func(msg string, err error) *fault.Error {
		e := fault.Usage(fault.CodeInvalidPluginFile, msg).With("file", p)
		e.Err = err
		return e
	}
	if !strings.HasSuffix(strings.ToLower(p), ".zip") {
		return nil, bad("--file must name a .zip plugin archive", nil)
	}
	data, err := pluginArchive.Read(p)
	if err != nil {
		return nil, err
	}
	if len(data) < 1 {
		return nil, bad("the plugin archive must be between 1 byte and 64 MiB", nil).With("sizeBytes", len(data))
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, bad("the plugin archive is not a valid ZIP file", err)
	}
	if len(zr.File) == 0 {
		return nil, bad("the plugin archive has no entries", nil)
	}
	if !hasManifest(zr.File) {
		return nil, bad("the plugin archive has no desc.json at its root or in a single top-level directory", nil)
	}
	sum := sha256.Sum256(data)
	return &pluginZip{Path: p, Data: data, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}, nil
}

// hasManifest finds desc.json at the root or one level down, as the device
// accepts; the device repeats the full archive validation.
func hasManifest(files []*zip.File) bool {
	for _, f := range files {
		n := strings.TrimSuffix(f.Name, "/")
		if n == "desc.json" {
			return true
		}
		if dir, base, ok := strings.Cut(n, "/"); ok && dir != "" && dir != "__MACOSX" && base == "desc.json" {
			return true
		}
	}
	return false
}

// stagedPluginName is the controlled random name of a pushed archive:
// solopi-plugin-<first 32 hex of sha256(requestId)>.zip.
func stagedPluginName(requestID string) string {
	sum := sha256.Sum256([]byte(requestID))
	return "solopi-plugin-" + hex.EncodeToString(sum[:])[:32] + ".zip"
}

// pluginCleanup is the evidence of the staged file's removal. Its fields
// are in the order of their JSON names, the order the map it replaced
// printed.
type pluginCleanup struct {
	Attempted bool   `json:"attempted"`
	FileName  string `json:"fileName"`
	Reason    string `json:"reason,omitempty"`
	Removed   bool   `json:"removed"`
	Success   bool   `json:"success"`
}

// PluginInstallOptions configure InstallPlugin.
type PluginInstallOptions struct {
	File string
	SessionTimings
}

// InstallPlugin runs the whole install flow; the result always carries
// the cleanup evidence, also inside a returned error's details.
func InstallPlugin(ctx context.Context, d *device.Device, o PluginInstallOptions) (*PluginInstallResult, error) {
	z, err := ReadPluginZip(o.File)
	if err != nil {
		return nil, err
	}
	t := o.SessionTimings.or(120*time.Second, 500*time.Millisecond)
	list, err := PluginList(ctx, d)
	if err != nil {
		return nil, err
	}
	importPath, _ := device.WireObject(list).Text("importPath")
	if ok, _ := device.WireObject(list).Flag("pathAvailable"); !ok {
		return nil, fault.New(fault.Failed, fault.CodeImportPathUnavailable, "SoloPi's plugin import directory is not available on the device").With("importPath", importPath)
	}
	requestID := device.NewRequestID()
	name := stagedPluginName(requestID)
	if importFile(list, name) != nil {
		return nil, fault.New(fault.Transport, fault.CodeStagedNameTaken, "the generated staging name already exists on the device; nothing was pushed").With("fileName", name)
	}
	remote := importPath + "/" + name
	st := &pluginInstall{d: d, requestID: requestID, name: name, remote: remote, zip: z, t: t}
	res, runErr := st.run(ctx)
	cl := st.cleanup(ctx)
	return st.finish(res, runErr, cl)
}

// importFile finds the import entry called name.
func importFile(list map[string]any, name string) map[string]any {
	files, _ := list["importFiles"].([]any)
	for _, f := range files {
		fo, _ := f.(map[string]any)
		if n, _ := fo["fileName"].(string); n == name {
			return fo
		}
	}
	return nil
}

type pluginInstall struct {
	d         *device.Device
	requestID string
	name      string
	remote    string
	zip       *pluginZip
	t         SessionTimings
	pushed    bool // a push was attempted: from here on the file may exist
	invoked   bool
	terminal  bool
	fileID    string
	last      map[string]any
}

func (s *pluginInstall) run(ctx context.Context) (map[string]any, error) {
	s.pushed = true
	if _, err := s.d.Push(ctx, bytes.NewReader(s.zip.Data), s.remote, 0o644); err != nil {
		return nil, err
	}
	list, err := PluginList(ctx, s.d)
	if err != nil {
		return nil, err
	}
	ip, _ := device.WireObject(list).Text("importPath")
	if ip+"/"+s.name != s.remote {
		return nil, device.ContractError("the plugin importPath changed between two listings", list)
	}
	var match []map[string]any
	files, _ := list["importFiles"].([]any)
	for _, f := range files {
		fo, _ := f.(map[string]any)
		size, _ := device.WireObject(fo).Integer("sizeBytes")
		if n, _ := fo["fileName"].(string); n == s.name && size == s.zip.Size {
			match = append(match, fo)
		}
	}
	if len(match) != 1 {
		return nil, fault.Newf(fault.Transport, fault.CodeStagedFileMissing, "the device lists %d import files named %s with %d bytes, want exactly 1", len(match), s.name, s.zip.Size).
			With("fileName", s.name)
	}
	s.fileID, _ = match[0]["fileId"].(string)
	s.invoked = true
	if err := s.d.Mutate(ctx, protocol.ActionPlugin, device.P(protocol.ParamAction, "import", protocol.ParamRequestID, s.requestID,
		protocol.ParamSHA256, s.zip.SHA256, protocol.ParamFileID, s.fileID)); err != nil {
		return nil, err
	}
	exp := pluginExpect{action: "import", subject: s.fileID + ":" + s.zip.SHA256, sha: s.zip.SHA256, fileID: s.fileID, size: s.zip.Size}
	final, err := pollPluginReceipt(ctx, s.d, s.requestID, exp, s.t, &s.last)
	if err != nil {
		return nil, err
	}
	s.terminal = true
	return final, nil
}

// cleanup removes the staged archive with a fresh context (the command's
// may be cancelled): rm -f -- then test ! -e, only for our generated name.
func (s *pluginInstall) cleanup(ctx context.Context) pluginCleanup {
	cl := pluginCleanup{FileName: s.name}
	if !s.pushed {
		cl.Reason = "push_not_attempted"
		return cl
	}
	if !validStagedName(s.name) || path.Base(s.remote) != s.name {
		cl.Reason = "not_a_generated_name"
		return cl
	}
	if s.invoked && !s.terminal {
		// The device may still be copying the file; removing it makes that
		// import fail safely (sha256_mismatch or import_file_not_found)
		// rather than leaving an unowned archive behind.
		cl.Reason = "mutation_not_terminal"
	}
	cctx, cancel := device.Cleanup(ctx, 15*time.Second)
	defer cancel()
	cl.Attempted = true
	t := s.d.Transport()
	_, _, existed, err := t.Shell(cctx, device.ShellJoin("test", "-e", s.remote))
	if err != nil {
		cl.Reason = "remove_failed"
		return cl
	}
	if _, _, code, err := t.Shell(cctx, device.ShellJoin("rm", "-f", "--", s.remote)); err != nil || code != 0 {
		cl.Reason = "remove_failed"
		return cl
	}
	if _, _, code, err := t.Shell(cctx, "test ! -e "+device.ShellJoin(s.remote)); err != nil || code != 0 {
		cl.Reason = "still_present"
		return cl
	}
	cl.Success = true
	cl.Removed = existed == 0
	return cl
}

func (s *pluginInstall) finish(res map[string]any, runErr error, cl pluginCleanup) (*PluginInstallResult, error) {
	// What every outcome reports, an error with its phase as well.
	out := &PluginInstallResult{Cleanup: cl, FileID: s.fileID, FileName: s.name, RequestID: s.requestID,
		SHA256: s.zip.SHA256, SizeBytes: s.zip.Size}
	common := func(e *fault.Error) *fault.Error {
		e.With("requestId", out.RequestID).With("cleanup", out.Cleanup).With("fileName", out.FileName).
			With("sha256", out.SHA256).With("sizeBytes", out.SizeBytes).With("phase", "plugin-install")
		if out.FileID != "" {
			e.With("fileId", out.FileID)
		}
		return e
	}
	if runErr != nil {
		if errors.Is(runErr, device.ErrPollTimeout) {
			runErr = fault.New(fault.Timeout, fault.CodePluginMutationTimeout, "the plugin import did not reach a terminal state in time")
		}
		e := common(fault.From(runErr).With("action", "import").With("lastResponse", nil))
		if s.last != nil {
			e.With("lastResponse", s.last)
		}
		return nil, e
	}
	mut, _ := res["mutation"].(map[string]any)
	state := string(device.StateOf(res))
	if ok, _ := mut["success"].(bool); !ok {
		return nil, common(mutationFailure(mut)).With("state", state).With("mutation", mut)
	}
	if !cl.Success {
		e := fault.New(fault.Transport, fault.CodePluginCleanupFailed, "the plugin was installed but the staged archive could not be removed from the device")
		return nil, common(e).With("state", state).With("mutation", mut)
	}
	out.Mutation, out.State, out.RestartRequired, out.Success = mut, state, true, true
	return out, nil
}

// PluginInstallResult is what plugin-install prints once the device
// imported the archive and its staged copy is gone: the final receipt's
// state and mutation object (echoed) and what was pushed. Fields are in
// the order of their JSON names, as the map it replaces printed them.
type PluginInstallResult struct {
	Cleanup         pluginCleanup  `json:"cleanup"`
	FileID          string         `json:"fileId,omitempty"`
	FileName        string         `json:"fileName"`
	Mutation        map[string]any `json:"mutation"`
	RequestID       string         `json:"requestId"`
	RestartRequired bool           `json:"restartRequired"`
	SHA256          string         `json:"sha256"`
	SizeBytes       int64          `json:"sizeBytes"`
	State           string         `json:"state"`
	Success         bool           `json:"success"`
}

// pluginExpect is what a receipt must echo.
type pluginExpect struct {
	action, subject string
	sha, fileID     string
	size            int64
	pluginID        string
}

// pollPluginReceipt polls mutationStatus for requestID until it is
// terminal, every receipt validated and moving forward only.
func pollPluginReceipt(ctx context.Context, d *device.Device, requestID string, exp pluginExpect, t SessionTimings, last *map[string]any) (map[string]any, error) {
	m := protocol.PluginMutation()
	prev := protocol.ReceiptNew
	final, err := pollMutationReceipt(ctx, d, protocol.ActionPlugin, requestID, m, device.PollOptions{Timeout: t.Timeout, Interval: t.Interval},
		last, func(o device.WireObject) error {
			if err := validatePluginReceipt(o, requestID, exp); err != nil {
				return err
			}
			st := device.StateOf(o)
			if !device.Reachable(m, prev, st) {
				return device.ContractError("the plugin receipt went backwards", map[string]any(o))
			}
			prev = st
			return nil
		})
	return final, err
}

// pollMutationReceipt polls action's mutationStatus for requestID
// (device.AwaitReceipt) until the receipt's state is terminal in m. Every
// receipt of ours becomes *last, then check validates it.
func pollMutationReceipt(ctx context.Context, d *device.Device, action, requestID string, m *protocol.Machine, po device.PollOptions,
	last *map[string]any, check func(o device.WireObject) error) (device.WireObject, error) {
	r, err := device.AwaitReceipt(ctx, d, device.MutationReceipt(action, requestID), po, func(r device.Receipt) (bool, error) {
		*last = r.Answer
		if err := check(r.Object); err != nil {
			return false, err
		}
		return m.IsTerminal(device.StateOf(r.Object)), nil
	})
	if err != nil {
		return nil, err
	}
	return r.Object, nil
}

// validatePluginReceipt is the strict mutationStatus validator.
func validatePluginReceipt(o device.WireObject, requestID string, exp pluginExpect) error {
	var v device.Violations
	m := protocol.PluginMutation()
	rid, _ := o.Text("requestId")
	v.Check(rid == requestID, "requestId %q is not ours", rid)
	s := device.StateOf(o)
	v.Check(m.Has(s) && s != protocol.ReceiptNew, "state %q is not a plugin mutation state", s)
	mo, ok := o["mutation"].(map[string]any)
	if !ok {
		v.Add("the receipt has no mutation object")
		return v.Err("plugin mutation receipt", o)
	}
	mut := device.WireObject(mo)
	mrid, _ := mut.Text("requestId")
	act, _ := mut.Text("action")
	subj, _ := mut.Text("subject")
	v.Check(mrid == requestID && device.StateOf(mut) == s, "mutation requestId/state do not match the envelope")
	v.Check(act == exp.action || (exp.action == "import" && act == "install"), "mutation action %q is not %s", act, exp.action)
	v.Check(subj == exp.subject, "mutation subject %q is not %q", subj, exp.subject)
	acc, _ := mut.Flag("accepted")
	v.Check(acc, "mutation accepted is not true")
	success, sok := mut.Flag("success")
	v.Check(sok, "mutation success is not a boolean")
	switch s {
	case protocol.MutationInProgress:
		v.Check(success, "an in-progress receipt has success false")
	case protocol.MutationRestartRequired:
		rr, _ := mut.Flag("restartRequired")
		v.Check(success && rr, "a completed receipt needs success and restartRequired true")
		if exp.action == "import" {
			sha, _ := mut.Text("sha256")
			src, _ := mut.Text("sourceFileId")
			size, _ := mut.Integer("sizeBytes")
			kept, _ := mut.Flag("sourceFileRetained")
			actv, _ := mut.Text("activation")
			v.Check(strings.EqualFold(sha, exp.sha) && src == exp.fileID && size == exp.size, "the receipt's sha256, sourceFileId or sizeBytes differ from what was pushed")
			v.Check(kept, "sourceFileRetained is not true")
			v.Check(actv == "restart_required_for_full_activation", "activation is %q", actv)
			_, isObj := mo["plugin"].(map[string]any)
			v.Check(isObj, "a completed import has no plugin summary")
		} else {
			pid, _ := mut.Text("pluginId")
			reg, _ := mut.Flag("removedFromRegistry")
			kept, _ := mut.Flag("filesRetained")
			eff, _ := mut.Text("runtimeEffect")
			v.Check(pid == exp.pluginID && reg && kept && eff == "restart_required_for_full_removal", "the removal receipt does not confirm the removal of %s", exp.pluginID)
		}
	case protocol.MutationFailed:
		code, _ := mut.Text("errorCode")
		msg, _ := mut.Text("error")
		v.Check(!success && code != "" && msg != "", "a failed receipt needs success false, errorCode and error")
	}
	return v.Err("plugin mutation receipt", o)
}

// CheckPluginID is the local rule for --id (exit 3).
func CheckPluginID(id string) error {
	if !protocol.ValidPrefixedHex(id, "plugin-", 64) {
		return fault.Usage(fault.CodeInvalidPluginID, "--id must be plugin- followed by 64 lowercase hex digits (see plugin-list)").With("id", id).With("pluginId", id)
	}
	return nil
}

// RemovePlugin removes one plugin (confirmId = pluginId) and follows the
// receipt of a fresh requestId.
func RemovePlugin(ctx context.Context, d *device.Device, pluginID string, t SessionTimings) (*PluginRemoveResult, error) {
	if err := CheckPluginID(pluginID); err != nil {
		return nil, err
	}
	t = t.or(30*time.Second, 500*time.Millisecond)
	requestID := device.NewRequestID()
	if err := d.Mutate(ctx, protocol.ActionPlugin, device.P(protocol.ParamAction, "remove", protocol.ParamRequestID, requestID,
		protocol.ParamPluginID, pluginID, protocol.ParamConfirmID, pluginID)); err != nil {
		return nil, fault.From(err).With("requestId", requestID)
	}
	var last map[string]any
	final, err := pollPluginReceipt(ctx, d, requestID, pluginExpect{action: "remove", subject: pluginID, pluginID: pluginID}, t, &last)
	if err != nil {
		if errors.Is(err, device.ErrPollTimeout) {
			err = fault.New(fault.Timeout, fault.CodePluginMutationTimeout, "the plugin removal did not reach a terminal state in time; it may still complete")
		}
		// solopi-ai's action and lastResponse (null when no receipt was
		// read).
		e := fault.From(err).With("requestId", requestID).With("pluginId", pluginID).With("phase", "plugin-remove").
			With("action", "remove").With("lastResponse", nil)
		if last != nil {
			e.With("lastResponse", last)
		}
		return nil, e
	}
	mut, _ := final["mutation"].(map[string]any)
	state := string(device.StateOf(final))
	if ok, _ := mut["success"].(bool); !ok {
		return nil, mutationFailure(mut).
			With("requestId", requestID).With("state", state).With("mutation", mut)
	}
	return &PluginRemoveResult{Mutation: mut, RequestID: requestID, RestartRequired: true, State: state, Success: true}, nil
}

// PluginRemoveResult is what plugin-remove prints once the device removed
// the plugin: the final receipt's state and mutation object, echoed.
// Fields are in the order of their JSON names.
type PluginRemoveResult struct {
	Mutation        map[string]any `json:"mutation"`
	RequestID       string         `json:"requestId"`
	RestartRequired bool           `json:"restartRequired"`
	State           string         `json:"state"`
	Success         bool           `json:"success"`
}

// mutationFailure is the exit-2 error of a failed receipt, with the
// device's own errorCode and message.
func mutationFailure(mut map[string]any) *fault.Error {
	code, _ := device.WireObject(mut).Text("errorCode")
	msg, _ := device.WireObject(mut).Text("error")
	if code == "" {
		code = fault.CodeSessionFailed
	}
	if msg == "" {
		msg = "the device reported the plugin mutation as failed"
	}
	return fault.New(fault.Failed, code, msg)
}
