package plugins

// plugin: list,

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/perf"
)

var pluginMachine = protocol.PluginMutation()

const (
	corePluginName     = "hulu_hotPatch"
	AnalyzerPluginName = "hulu_screenRecord"
	// pluginWorkTime is how long the background import/remove takes.
	pluginWorkTime = 300 * time.Millisecond
	mib            = 1 << 20
)

// Plugins is the plugin resolver and the plugin registry, which is
// installation state: it and the knobs survive Restart. Mutations refuse to
// run while a performance recording is live.
type Plugins struct {
	*core.App
	perf *perf.Perf
	// Registry is the installed plugins by name.
	Registry          map[string]*pluginEntry
	pluginActivityBug bool
	pluginWorkTime    time.Duration
	// Internal is the app's private storage (files/…): plugin staging
	// files and the managed patch store, invisible to the adb shell.
	Internal map[string][]byte
}

// pluginProc is the plugin state of one process: its mutation receipts.
type pluginProc struct{ receipts *core.ReceiptLRU }

var pluginSlot = core.NewSlot(func() *pluginProc { return &pluginProc{receipts: core.NewReceiptLRU(64)} })

func pluginSx(p *core.Process) *pluginProc { return pluginSlot.Of(p) }

// NewPlugins creates the registry with the built-in plugins.
func NewPlugins(core *core.App, perf *perf.Perf) *Plugins {
	pl := &Plugins{App: core, perf: perf, Internal: map[string][]byte{}, Registry: map[string]*pluginEntry{}}
	pl.Registry[corePluginName] = &pluginEntry{name: corePluginName, version: 1.0, core: true, builtIn: true,
		runtimeLoaded: true, hasCode: true}
	pl.Registry[AnalyzerPluginName] = defaultAnalyzerPlugin()
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
	return &pluginEntry{name: AnalyzerPluginName, version: 1.0, runtimeLoaded: true, hasCode: true, hasNative: true,
		filter: "com.alipay.ffmpegsdk", dependencies: []string{}}
}

// Restarted makes every registered plugin runtime-loaded (a new process
// loads the whole registry).
func (a *Plugins) Restarted() {
	for _, p := range a.Registry {
		p.runtimeLoaded = true
	}
}

func PluginID(name string) string { return "plugin-" + core.Sha256Hex("plugin\x00"+name) }

func ImportFileID(name string) string {
	return "plugin-import-" + core.Sha256Hex("plugin-import\x00"+name)
}

func (e *pluginEntry) summary() core.Obj {
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
	return core.NewObj("id", PluginID(e.name), "name", e.name, "version", e.version, "status", status, "source", source,
		"core", e.core, "removable", !e.core, "runtimeLoaded", e.runtimeLoaded, "hasCode", e.hasCode,
		"hasNativeLibraries", e.hasNative, "hasAssets", e.hasAssets, "filter", e.filter, "dependencies", deps,
		"catalogAvailable", false)
}

func (a *Plugins) patchDirLocked() string { return core.NormPath(a.SolopiDirLocked() + "/patch") }

// importFile is one candidate in <solopiDir>/patch.
type importFile struct {
	name    string
	size    int64
	modTime int64
}

// importFilesLocked lists the acceptable ZIPs, newest first.
func (a *Plugins) importFilesLocked() []importFile {
	entries, err := a.Phone.ReadDir(a.patchDirLocked())
	if err != nil {
		return nil
	}
	var out []importFile
	for _, e := range entries {
		if !e.Mode().IsRegular() || !core.ValidImportFileName(e.Name()) || e.Size() < 1 || e.Size() > 64*mib {
			continue
		}
		out = append(out, importFile{name: e.Name(), size: e.Size(), modTime: core.Millis(e.ModTime())})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].modTime != out[j].modTime {
			return out[i].modTime > out[j].modTime
		}
		return out[i].name < out[j].name
	})
	return out
}

func (a *Plugins) PluginResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	act, present := q["action"]
	switch {
	case !present || act == "":
		return core.E1(protocol.ErrMissingAction, "Parameter 'action' is required")
	case act == "list":
		return a.pluginList()
	case act == "mutationStatus":
		return a.MutationStatus(p, q, pluginSx(p).receipts)
	case act == "import" || act == "install":
		return a.pluginImport(p, via, q)
	case act == "remove":
		return a.pluginRemove(p, via, q)
	}
	return core.E1(protocol.ErrUnsupportedAction, "Unsupported plugin action: "+act)
}

func (a *Plugins) pluginList() core.Obj {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	names := make([]string, 0, len(a.Registry))
	for n := range a.Registry {
		names = append(names, n)
	}
	slices.Sort(names)
	plugins := make([]core.Obj, 0, len(names))
	for _, n := range names {
		plugins = append(plugins, a.Registry[n].summary())
	}
	files := a.importFilesLocked()
	truncated := len(files) > 100
	if truncated {
		files = files[:100]
	}
	list := make([]core.Obj, 0, len(files))
	for _, f := range files {
		list = append(list, core.NewObj("fileId", ImportFileID(f.name), "fileName", f.name, "sizeBytes", f.size,
			"modifiedAt", f.modTime, "sha256Required", true))
	}
	return core.OK("plugins", plugins, "total", len(plugins), "importDirectory", "patch", "importPath", a.patchDirLocked(),
		"pathAvailable", true, "importFiles", list, "importFilesTruncated", truncated, "mutationTransport", "adb")
}

// admitPluginMutationLocked applies the shared conflict, idempotency, busy
// and maintenance rules. It returns the answer to send back, or the latch
// release func when the mutation is accepted.
func (a *Plugins) admitPluginMutationLocked(p *core.Process, reqID, action, subject string, inUse string) (core.Obj, func()) {
	store := pluginSx(p).receipts
	if r, found := store.Get(reqID); found {
		if r.Get("action") != action || r.Get("subject") != subject {
			return core.E1(protocol.ErrRequestIDConflict, "The requestId is already associated with another mutation"), nil
		}
		return r.Clone(), nil
	}
	busy := false
	store.Each(func(_ string, r core.Obj) { busy = busy || r.Get("state") == string(protocol.MutationInProgress) })
	if busy {
		return core.E1(protocol.ErrMutationBusy, "Another plugin mutation is still in progress"), nil
	}
	release, err := a.BeginMaintenanceLocked(p)
	if err != nil {
		return core.E1(protocol.ErrPluginInUse, inUse), nil
	}
	st, _ := pluginMachine.Step(pluginMachine.Initial, protocol.EvMutationAccept)
	r := core.OK("accepted", true, "requestId", reqID, "action", action, "subject", subject, "state", string(st),
		"requestedAt", a.NowMs())
	store.Put(reqID, r, "")
	return r.Clone(), release
}

// finishPluginMutation merges the outcome into the receipt (if it still
// exists in this process).
func (a *Plugins) finishPluginMutationLocked(p *core.Process, reqID string, fields core.Obj, failed bool) {
	r, found := pluginSx(p).receipts.M[reqID]
	if !found {
		return
	}
	ev := protocol.EvMutationComplete
	if failed {
		ev = protocol.EvMutationFail
	}
	st, err := pluginMachine.Step(protocol.State(r.Get("state").(string)), ev)
	if err != nil {
		return
	}
	r = r.Clone()
	for _, e := range fields {
		r.Set(e.K, e.V)
	}
	r.Set("state", string(st))
	r.Set("completedAt", a.NowMs())
	pluginSx(p).receipts.M[reqID] = r
}

func pluginFailure(code, msg string) core.Obj {
	return core.NewObj("success", false, "errorCode", code, "error", msg)
}

// activityCheckLocked is the first step of both mutations: the plugin resolver asks
// the performance resolver whether a recording is active. The real app asks
// the display resolver, which does not handle mode=status
// (docs/device-protocol.md#known-device-quirks).
func (a *Plugins) activityCheckLocked(p *core.Process) core.Obj {
	if a.pluginActivityBug {
		return pluginFailure(protocol.ErrActivityStatusUnavailable, "Unable to verify that the related activity is idle")
	}
	if a.perf.RecordingLiveLocked(p) {
		return pluginFailure(protocol.ErrPluginInUse, "An active SoloPi session prevents plugin installation")
	}
	return nil
}

func (a *Plugins) pluginImport(p *core.Process, via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Plugin installation requires the ADB scheme transport")
	}
	if q.Has("url") {
		return core.E1(protocol.ErrURLNotAllowed, "Plugin URLs are not accepted by this protocol")
	}
	if bad := core.CheckRequestID(q); bad != nil {
		return bad
	}
	sum := q["sha256"]
	if sum == "" {
		return core.E1(protocol.ErrMissingSHA256, "Parameter 'sha256' is required")
	}
	if !protocol.ValidHex(sum, 64, true) {
		return core.E1(protocol.ErrInvalidSHA256, "Parameter 'sha256' must be 64 hexadecimal characters")
	}
	sum = strings.ToLower(sum)
	name, fileID := q["fileName"], q["fileId"]
	if name == "" && fileID == "" {
		return core.E1(protocol.ErrMissingImportSelector, "Parameter 'fileName' or 'fileId' is required")
	}
	if name != "" && !core.ValidImportFileName(name) {
		return core.E1(protocol.ErrInvalidFileName, "Parameter 'fileName' is invalid")
	}
	if fileID != "" && !protocol.ValidPrefixedHex(fileID, "plugin-import-", 64) {
		return core.E1(protocol.ErrInvalidFileID, "Parameter 'fileId' is invalid")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	var file *importFile
	for _, f := range a.importFilesLocked() {
		if (name == "" || f.name == name) && (fileID == "" || ImportFileID(f.name) == fileID) {
			file = &f
			break
		}
	}
	if file == nil {
		return core.E1(protocol.ErrImportFileNotFound, "Plugin import file was not found")
	}
	id := ImportFileID(file.name)
	reqID := q["requestId"]
	resp, release := a.admitPluginMutationLocked(p, reqID, "import", id+":"+sum, "An active SoloPi session prevents plugin installation")
	if release != nil {
		go a.runPluginImport(p, reqID, a.patchDirLocked()+"/"+file.name, id, sum, release, core.OrDefault(a.pluginWorkTime, pluginWorkTime))
	}
	return resp
}

// runPluginImport is the background import: activity check, staging copy
// and digest, archive and descriptor checks, version, load, registry.
func (a *Plugins) runPluginImport(p *core.Process, reqID, src, fileID, want string, release func(), took time.Duration) {
	defer release()
	if !a.SleepDevice(p, took) {
		return
	}
	a.Mu.Lock()
	fail := a.activityCheckLocked(p)
	a.Mu.Unlock()
	if fail != nil {
		a.Mu.Lock()
		a.finishPluginMutationLocked(p, reqID, fail, true)
		a.Mu.Unlock()
		return
	}
	staging := "plugin_import_staging/plugin_import_" + core.NewUUID() + ".zip"
	result, failed := a.importStaged(src, staging, fileID, want)
	a.Mu.Lock()
	defer a.Mu.Unlock()
	delete(a.Internal, staging) // the staging copy goes, whatever happened
	if !a.CurrentLocked(p) {
		return
	}
	a.finishPluginMutationLocked(p, reqID, result, failed)
}

// importStaged copies, hashes, validates and installs one archive.
func (a *Plugins) importStaged(src, staging, fileID, want string) (core.Obj, bool) {
	st, err := a.Phone.Stat(src)
	if err != nil || !st.Mode().IsRegular() {
		return pluginFailure(protocol.ErrUnsafeImportFile, "Plugin import file is no longer a regular file"), true
	}
	if st.Size() < 1 || st.Size() > 64*mib {
		return pluginFailure(protocol.ErrInvalidArchiveSize, "Plugin archive size must be between 1 byte and 64 MiB"), true
	}
	data, err := a.Phone.ReadFile(src)
	if err != nil {
		return pluginFailure(protocol.ErrUnsafeImportFile, "Unable to read plugin import file"), true
	}
	a.Mu.Lock()
	a.Internal[staging] = data
	a.Mu.Unlock()
	got := sha256.Sum256(data)
	if hex.EncodeToString(got[:]) != want {
		return pluginFailure(protocol.ErrSHA256Mismatch, "Plugin archive SHA-256 does not match"), true
	}
	desc, fail := ValidatePluginArchive(data)
	if fail != nil {
		return fail, true
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if cur := a.Registry[desc.name]; cur != nil && desc.version <= cur.version {
		return pluginFailure(protocol.ErrVersionNotNewer, "Plugin version must be newer than the installed version"), true
	}
	e := &pluginEntry{name: desc.name, version: desc.version, hasCode: desc.jar != "", hasNative: len(desc.soList) > 0,
		hasAssets: desc.assetsZip != "", filter: desc.filter, dependencies: []string{}}
	a.Registry[desc.name] = e
	a.Internal["patch/"+desc.name+"/desc.json"] = desc.raw
	return core.NewObj("success", true, "plugin", e.summary(), "sha256", want, "sizeBytes", int64(len(data)),
		"sourceFileId", fileID, "sourceFileRetained", true, "restartRequired", true,
		"activation", "restart_required_for_full_activation"), false
}

func (a *Plugins) pluginRemove(p *core.Process, via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Plugin removal requires the ADB scheme transport")
	}
	if bad := core.CheckRequestID(q); bad != nil {
		return bad
	}
	id := q["pluginId"]
	if id == "" {
		return core.E1(protocol.ErrMissingPluginID, "Parameter 'pluginId' is required")
	}
	if !protocol.ValidPrefixedHex(id, "plugin-", 64) {
		return core.E1(protocol.ErrInvalidPluginID, "Parameter 'pluginId' is invalid")
	}
	if q["confirmId"] != id {
		return core.E1(protocol.ErrConfirmationMismatch, "Parameter 'confirmId' must exactly match 'pluginId'")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	reqID := q["requestId"]
	resp, release := a.admitPluginMutationLocked(p, reqID, "remove", id, "An active SoloPi session prevents plugin removal")
	if release != nil {
		go a.runPluginRemove(p, reqID, id, release, core.OrDefault(a.pluginWorkTime, pluginWorkTime))
	}
	return resp
}

func (a *Plugins) runPluginRemove(p *core.Process, reqID, id string, release func(), took time.Duration) {
	defer release()
	if !a.SleepDevice(p, took) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if !a.CurrentLocked(p) {
		return
	}
	if fail := a.activityCheckLocked(p); fail != nil {
		a.finishPluginMutationLocked(p, reqID, fail, true)
		return
	}
	var e *pluginEntry
	for _, x := range a.Registry {
		if PluginID(x.name) == id {
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
	for _, x := range a.Registry {
		if slices.Contains(x.dependencies, e.name) {
			dependents = append(dependents, x.name)
		}
	}
	if len(dependents) > 0 {
		slices.Sort(dependents)
		f := pluginFailure(protocol.ErrPluginHasDependents, "Other plugins depend on this plugin")
		f.Set("dependents", dependents)
		a.finishPluginMutationLocked(p, reqID, f, true)
		return
	}
	delete(a.Registry, e.name)
	a.finishPluginMutationLocked(p, reqID, core.NewObj("success", true, "pluginId", id, "name", e.name, "version", e.version,
		"removedFromRegistry", true, "filesRetained", true, "restartRequired", true,
		"runtimeEffect", "restart_required_for_full_removal"), false)
}
