package soloapp

// plugin: list, import (alias install) and remove
// (docs/device-protocol.md#plugins). The registry is installation state (it
// survives restarts); an imported plugin is only runtime-loaded after
// Restart. The app's internal storage (staging files, the managed patch
// store) is not reachable from the adb shell, so it is kept in memory
// (ext.internal) rather than on the phone's file system.
//
// The real v1.0.2 app always fails import and remove with
// activity_status_unavailable; SetPluginActivityBug(true) reproduces that,
// the default follows the protocol's intent.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

var pluginMachine = protocol.PluginMutation()

const (
	corePluginName     = "hulu_hotPatch"
	analyzerPluginName = "hulu_screenRecord"
	// pluginWorkTime is how long the background import/remove takes.
	pluginWorkTime = 300 * time.Millisecond
	mib            = 1 << 20
)

// Plugins is the plugin resolver and the plugin registry, which is
// installation state: it and the knobs survive Restart. Mutations refuse to
// run while a performance recording is live.
type Plugins struct {
	*appCore
	perf *Perf
	// registry is the installed plugins by name.
	registry          map[string]*pluginEntry
	pluginActivityBug bool
	pluginWorkTime    time.Duration
	// internal is the app's private storage (files/…): plugin staging
	// files and the managed patch store, invisible to the adb shell.
	internal map[string][]byte
}

// pluginProc is the plugin state of one process: its mutation receipts.
type pluginProc struct{ receipts *receiptLRU }

var pluginSlot = NewSlot(func() *pluginProc { return &pluginProc{receipts: newReceiptLRU(64)} })

func pluginSx(p *process) *pluginProc { return pluginSlot.Of(p) }

// newPlugins creates the registry with the built-in plugins.
func newPlugins(core *appCore, perf *Perf) *Plugins {
	pl := &Plugins{appCore: core, perf: perf, internal: map[string][]byte{}, registry: map[string]*pluginEntry{}}
	pl.registry[corePluginName] = &pluginEntry{name: corePluginName, version: 1.0, core: true, builtIn: true,
		runtimeLoaded: true, hasCode: true}
	pl.registry[analyzerPluginName] = defaultAnalyzerPlugin()
	return pl
}

// pluginEntry is one registry row.
type pluginEntry struct {
	name                          string
	version                       float64
	core, builtIn, runtimeLoaded  bool
	hasCode, hasNative, hasAssets bool
	filter                        string
	dependencies                  []string
}

func defaultAnalyzerPlugin() *pluginEntry {
	return &pluginEntry{name: analyzerPluginName, version: 1.0, runtimeLoaded: true, hasCode: true, hasNative: true,
		filter: "com.alipay.ffmpegsdk", dependencies: []string{}}
}

// restarted makes every registered plugin runtime-loaded (a new process
// loads the whole registry).
func (a *Plugins) restarted() {
	for _, p := range a.registry {
		p.runtimeLoaded = true
	}
}

func pluginID(name string) string { return "plugin-" + sha256Hex("plugin\x00"+name) }

func importFileID(name string) string { return "plugin-import-" + sha256Hex("plugin-import\x00"+name) }

func (e *pluginEntry) summary() obj {
	status, source := "installed", "managed_patch_store"
	switch {
	case e.builtIn:
		status, source = "built_in", "built_in"
	case e.runtimeLoaded:
		status = "loaded"
	}
	deps := slices.Clone(e.dependencies)
	if deps == nil {
		deps = []string{}
	}
	return newObj("id", pluginID(e.name), "name", e.name, "version", e.version, "status", status, "source", source,
		"core", e.core, "removable", !e.core, "runtimeLoaded", e.runtimeLoaded, "hasCode", e.hasCode,
		"hasNativeLibraries", e.hasNative, "hasAssets", e.hasAssets, "filter", e.filter, "dependencies", deps,
		"catalogAvailable", false)
}

func (a *Plugins) patchDirLocked() string { return normPath(a.solopiDirLocked() + "/patch") }

// importFile is one candidate in <solopiDir>/patch.
type importFile struct {
	name    string
	size    int64
	modTime int64
}

// importFilesLocked lists the acceptable ZIPs, newest first.
func (a *Plugins) importFilesLocked() []importFile {
	entries, err := a.phone.ReadDir(a.patchDirLocked())
	if err != nil {
		return nil
	}
	var out []importFile
	for _, e := range entries {
		if !e.Mode().IsRegular() || !validImportFileName(e.Name()) || e.Size() < 1 || e.Size() > 64*mib {
			continue
		}
		out = append(out, importFile{name: e.Name(), size: e.Size(), modTime: millis(e.ModTime())})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].modTime != out[j].modTime {
			return out[i].modTime > out[j].modTime
		}
		return out[i].name < out[j].name
	})
	return out
}

func (a *Plugins) pluginResolver(ctx context.Context, p *process, via transport, q params) obj {
	act, present := q["action"]
	switch {
	case !present || act == "":
		return e1(protocol.ErrMissingAction, "Parameter 'action' is required")
	case act == "list":
		return a.pluginList()
	case act == "mutationStatus":
		return a.mutationStatus(p, q, pluginSx(p).receipts)
	case act == "import" || act == "install":
		return a.pluginImport(p, via, q)
	case act == "remove":
		return a.pluginRemove(p, via, q)
	}
	return e1(protocol.ErrUnsupportedAction, "Unsupported plugin action: "+act)
}

func (a *Plugins) pluginList() obj {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, 0, len(a.registry))
	for n := range a.registry {
		names = append(names, n)
	}
	slices.Sort(names)
	plugins := make([]obj, 0, len(names))
	for _, n := range names {
		plugins = append(plugins, a.registry[n].summary())
	}
	files := a.importFilesLocked()
	truncated := len(files) > 100
	if truncated {
		files = files[:100]
	}
	list := make([]obj, 0, len(files))
	for _, f := range files {
		list = append(list, newObj("fileId", importFileID(f.name), "fileName", f.name, "sizeBytes", f.size,
			"modifiedAt", f.modTime, "sha256Required", true))
	}
	return ok("plugins", plugins, "total", len(plugins), "importDirectory", "patch", "importPath", a.patchDirLocked(),
		"pathAvailable", true, "importFiles", list, "importFilesTruncated", truncated, "mutationTransport", "adb")
}

// mutationStatus answers history's and plugin's receipt query.
func (a *appCore) mutationStatus(p *process, q params, store *receiptLRU) obj {
	id, present := q["requestId"]
	if !present || id == "" {
		return e1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	if !protocol.ValidID(id, 128) {
		return e1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r, found := store.get(id)
	if !found {
		return append(e1(protocol.ErrReceiptNotFound, "Mutation receipt was not found"), kv{"requestId", id})
	}
	return ok("requestId", id, "state", r.get("state"), "mutation", r.clone())
}

// checkRequestID validates a mutation's requestId (missing/invalid).
func checkRequestID(q params) obj {
	id := q["requestId"]
	if id == "" {
		return e1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	if !protocol.ValidID(id, 128) {
		return e1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	return nil
}

// admitPluginMutationLocked applies the shared conflict, idempotency, busy
// and maintenance rules. It returns the answer to send back, or the latch
// release func when the mutation is accepted.
func (a *Plugins) admitPluginMutationLocked(p *process, reqID, action, subject string, inUse string) (obj, func()) {
	store := pluginSx(p).receipts
	if r, found := store.get(reqID); found {
		if r.get("action") != action || r.get("subject") != subject {
			return e1(protocol.ErrRequestIDConflict, "The requestId is already associated with another mutation"), nil
		}
		return r.clone(), nil
	}
	busy := false
	store.each(func(_ string, r obj) { busy = busy || r.get("state") == string(protocol.MutationInProgress) })
	if busy {
		return e1(protocol.ErrMutationBusy, "Another plugin mutation is still in progress"), nil
	}
	release, err := a.beginMaintenanceLocked(p)
	if err != nil {
		return e1(protocol.ErrPluginInUse, inUse), nil
	}
	st, _ := pluginMachine.Step(pluginMachine.Initial, protocol.EvMutationAccept)
	r := ok("accepted", true, "requestId", reqID, "action", action, "subject", subject, "state", string(st),
		"requestedAt", a.nowMs())
	store.put(reqID, r, "")
	return r.clone(), release
}

// finishPluginMutation merges the outcome into the receipt (if it still
// exists in this process).
func (a *Plugins) finishPluginMutationLocked(p *process, reqID string, fields obj, failed bool) {
	r, found := pluginSx(p).receipts.m[reqID]
	if !found {
		return
	}
	ev := protocol.EvMutationComplete
	if failed {
		ev = protocol.EvMutationFail
	}
	st, err := pluginMachine.Step(protocol.State(r.get("state").(string)), ev)
	if err != nil {
		return
	}
	r = r.clone()
	for _, e := range fields {
		r.set(e.k, e.v)
	}
	r.set("state", string(st))
	r.set("completedAt", a.nowMs())
	pluginSx(p).receipts.m[reqID] = r
}

func pluginFailure(code, msg string) obj {
	return newObj("success", false, "errorCode", code, "error", msg)
}

// activityCheckLocked is the first step of both mutations: the plugin resolver asks
// the performance resolver whether a recording is active. The real app asks
// the display resolver, which does not handle mode=status
// (docs/device-protocol.md#known-device-quirks).
func (a *Plugins) activityCheckLocked(p *process) obj {
	if a.pluginActivityBug {
		return pluginFailure(protocol.ErrActivityStatusUnavailable, "Unable to verify that the related activity is idle")
	}
	if a.perf.RecordingLiveLocked(p) {
		return pluginFailure(protocol.ErrPluginInUse, "An active SoloPi session prevents plugin installation")
	}
	return nil
}

func (a *Plugins) pluginImport(p *process, via transport, q params) obj {
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Plugin installation requires the ADB scheme transport")
	}
	if q.has("url") {
		return e1(protocol.ErrURLNotAllowed, "Plugin URLs are not accepted by this protocol")
	}
	if bad := checkRequestID(q); bad != nil {
		return bad
	}
	sum := q["sha256"]
	if sum == "" {
		return e1(protocol.ErrMissingSHA256, "Parameter 'sha256' is required")
	}
	if !protocol.ValidHex(sum, 64, true) {
		return e1(protocol.ErrInvalidSHA256, "Parameter 'sha256' must be 64 hexadecimal characters")
	}
	sum = strings.ToLower(sum)
	name, fileID := q["fileName"], q["fileId"]
	if name == "" && fileID == "" {
		return e1(protocol.ErrMissingImportSelector, "Parameter 'fileName' or 'fileId' is required")
	}
	if name != "" && !validImportFileName(name) {
		return e1(protocol.ErrInvalidFileName, "Parameter 'fileName' is invalid")
	}
	if fileID != "" && !protocol.ValidPrefixedHex(fileID, "plugin-import-", 64) {
		return e1(protocol.ErrInvalidFileID, "Parameter 'fileId' is invalid")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var file *importFile
	for _, f := range a.importFilesLocked() {
		if (name == "" || f.name == name) && (fileID == "" || importFileID(f.name) == fileID) {
			file = &f
			break
		}
	}
	if file == nil {
		return e1(protocol.ErrImportFileNotFound, "Plugin import file was not found")
	}
	id := importFileID(file.name)
	reqID := q["requestId"]
	resp, release := a.admitPluginMutationLocked(p, reqID, "import", id+":"+sum, "An active SoloPi session prevents plugin installation")
	if release != nil {
		go a.runPluginImport(p, reqID, a.patchDirLocked()+"/"+file.name, id, sum, release, orDefault(a.pluginWorkTime, pluginWorkTime))
	}
	return resp
}

// runPluginImport is the background import: activity check, staging copy
// and digest, archive and descriptor checks, version, load, registry.
func (a *Plugins) runPluginImport(p *process, reqID, src, fileID, want string, release func(), took time.Duration) {
	defer release()
	if !a.sleepDevice(p, took) {
		return
	}
	a.mu.Lock()
	fail := a.activityCheckLocked(p)
	a.mu.Unlock()
	if fail != nil {
		a.mu.Lock()
		a.finishPluginMutationLocked(p, reqID, fail, true)
		a.mu.Unlock()
		return
	}
	staging := "plugin_import_staging/plugin_import_" + newUUID() + ".zip"
	result, failed := a.importStaged(src, staging, fileID, want)
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.internal, staging) // the staging copy goes, whatever happened
	if !a.currentLocked(p) {
		return
	}
	a.finishPluginMutationLocked(p, reqID, result, failed)
}

// importStaged copies, hashes, validates and installs one archive.
func (a *Plugins) importStaged(src, staging, fileID, want string) (obj, bool) {
	st, err := a.phone.Stat(src)
	if err != nil || !st.Mode().IsRegular() {
		return pluginFailure(protocol.ErrUnsafeImportFile, "Plugin import file is no longer a regular file"), true
	}
	if st.Size() < 1 || st.Size() > 64*mib {
		return pluginFailure(protocol.ErrInvalidArchiveSize, "Plugin archive size must be between 1 byte and 64 MiB"), true
	}
	data, err := a.phone.ReadFile(src)
	if err != nil {
		return pluginFailure(protocol.ErrUnsafeImportFile, "Unable to read plugin import file"), true
	}
	a.mu.Lock()
	a.internal[staging] = data
	a.mu.Unlock()
	got := sha256.Sum256(data)
	if hex.EncodeToString(got[:]) != want {
		return pluginFailure(protocol.ErrSHA256Mismatch, "Plugin archive SHA-256 does not match"), true
	}
	desc, fail := validatePluginArchive(data)
	if fail != nil {
		return fail, true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := a.registry[desc.name]; cur != nil && desc.version <= cur.version {
		return pluginFailure(protocol.ErrVersionNotNewer, "Plugin version must be newer than the installed version"), true
	}
	e := &pluginEntry{name: desc.name, version: desc.version, hasCode: desc.jar != "", hasNative: len(desc.soList) > 0,
		hasAssets: desc.assetsZip != "", filter: desc.filter, dependencies: []string{}}
	a.registry[desc.name] = e
	a.internal["patch/"+desc.name+"/desc.json"] = desc.raw
	return newObj("success", true, "plugin", e.summary(), "sha256", want, "sizeBytes", int64(len(data)),
		"sourceFileId", fileID, "sourceFileRetained", true, "restartRequired", true,
		"activation", "restart_required_for_full_activation"), false
}

func (a *Plugins) pluginRemove(p *process, via transport, q params) obj {
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Plugin removal requires the ADB scheme transport")
	}
	if bad := checkRequestID(q); bad != nil {
		return bad
	}
	id := q["pluginId"]
	if id == "" {
		return e1(protocol.ErrMissingPluginID, "Parameter 'pluginId' is required")
	}
	if !protocol.ValidPrefixedHex(id, "plugin-", 64) {
		return e1(protocol.ErrInvalidPluginID, "Parameter 'pluginId' is invalid")
	}
	if q["confirmId"] != id {
		return e1(protocol.ErrConfirmationMismatch, "Parameter 'confirmId' must exactly match 'pluginId'")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	reqID := q["requestId"]
	resp, release := a.admitPluginMutationLocked(p, reqID, "remove", id, "An active SoloPi session prevents plugin removal")
	if release != nil {
		go a.runPluginRemove(p, reqID, id, release, orDefault(a.pluginWorkTime, pluginWorkTime))
	}
	return resp
}

func (a *Plugins) runPluginRemove(p *process, reqID, id string, release func(), took time.Duration) {
	defer release()
	if !a.sleepDevice(p, took) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.currentLocked(p) {
		return
	}
	if fail := a.activityCheckLocked(p); fail != nil {
		a.finishPluginMutationLocked(p, reqID, fail, true)
		return
	}
	var e *pluginEntry
	for _, x := range a.registry {
		if pluginID(x.name) == id {
			e = x
		}
	}
	if e == nil {
		a.finishPluginMutationLocked(p, reqID, pluginFailure(protocol.ErrPluginNotFound, "Plugin was not found"), true)
		return
	}
	if e.core {
		a.finishPluginMutationLocked(p, reqID, pluginFailure(protocol.ErrCorePluginProtected, "Core plugins cannot be removed"), true)
		return
	}
	var dependents []string
	for _, x := range a.registry {
		if slices.Contains(x.dependencies, e.name) {
			dependents = append(dependents, x.name)
		}
	}
	if len(dependents) > 0 {
		slices.Sort(dependents)
		f := pluginFailure(protocol.ErrPluginHasDependents, "Other plugins depend on this plugin")
		f.set("dependents", dependents)
		a.finishPluginMutationLocked(p, reqID, f, true)
		return
	}
	delete(a.registry, e.name)
	a.finishPluginMutationLocked(p, reqID, newObj("success", true, "pluginId", id, "name", e.name, "version", e.version,
		"removedFromRegistry", true, "filesRetained", true, "restartRequired", true,
		"runtimeEffect", "restart_required_for_full_removal"), false)
}
