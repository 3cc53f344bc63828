package perf

// The performance resolver pair (docs/device-protocol.md#session-types):
// PerformanceDisplaySchemeResolver handles mode=display (perfdisplay.go),
// PerformanceSchemeResolver the rest: listItems, status, current and the
// mode=normal recording. Both answer untyped E2 errors. Recording and display
// share one DisplayProvider, which grants one protocol lease at a time and
// only when no display item runs at all.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var perfMachine = protocol.Performance()

// e2 is the untyped error envelope of performance and performance display.
func e2(msg string) core.Obj { return core.NewObj("success", false, "error", msg) }

// perfSession is the process-wide performance recording slot.
type perfSession struct {
	providerLease
	outputPath string
}

// Perf is the performance resolver pair and its installation-level fault
// knobs (they survive Restart).
type Perf struct {
	*core.App
	cleanupIncomplete int
	providerNotReady  bool
	manualWindow      bool
}

// perfProc is the performance state of one process.
type perfProc struct {
	perf    *perfSession
	display *displaySession
	// providerOwner is the DisplayProvider's single protocol lease
	// (docs/device-protocol.md#concurrency-and-ownership):
	// "performance:<sid>" or "display:<sid>", "" when free.
	providerOwner string
}

// RecordingLiveLocked reports whether a performance recording of p is live
// (history refuses to delete records meanwhile).
func (a *Perf) RecordingLiveLocked(p *core.Process) bool {
	s := perfSx(p).perf
	return s != nil && perfMachine.IsLive(s.State)
}

// ProviderLeasedLocked reports whether the DisplayProvider's protocol lease
// is held (a RuntimeSessionGuard session).
func (a *Perf) ProviderLeasedLocked(p *core.Process) bool { return perfSx(p).providerOwner != "" }

var perfSlot = core.NewSlot(func() *perfProc { return &perfProc{} })

func perfSx(p *core.Process) *perfProc { return perfSlot.Of(p) }

// Performance dispatches both resolvers of the action (display first).
func (a *Perf) Performance(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	if q["mode"] == "display" {
		return a.perfDisplay(p, via, q)
	}
	switch m := q["mode"]; m {
	case "":
		return e2("Parameter 'mode' is required")
	case "listItems":
		return a.perfListItems()
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.perfSnapshotLocked(p)
	case "current":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		if a.providerNotReady {
			return e2("Performance display service is not ready")
		}
		o := a.perfSnapshotLocked(p)
		o.Set("sampledAt", a.NowMs())
		o.Set("values", a.currentValuesLocked(p))
		return o
	case "normal":
		act := q["action"]
		if act != "start" && act != "stop" {
			return e2("Unsupported performance action: " + core.JavaString(q, "action"))
		}
		if via != core.ViaAdb {
			return e2("Performance start and stop require the ADB Scheme transport")
		}
		if act == "start" {
			return a.perfStart(p, q)
		}
		return a.perfStop(p, q)
	default:
		return e2("Unsupported performance mode: " + m)
	}
}

func (a *Perf) perfListItems() core.Obj {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.providerNotReady {
		return e2("Performance display service is not ready")
	}
	en := a.englishLocked()
	var items []core.Obj
	for _, it := range perfItems() {
		o := core.NewObj("key", it.key, "name", it.name(en), "permissions", slices.Clone(it.permissions), "tip", "")
		if it.trigger != "" {
			o.Set("trigger", it.trigger)
		}
		items = append(items, o)
	}
	return core.OK("items", items, "total", len(items))
}

// providerRunningLocked lists the display names running in the provider,
// whoever owns them (the manual floating window included).
func (a *Perf) providerRunningLocked(p *core.Process) []string {
	var out []string
	if a.manualWindow {
		it, _ := lookupItem("CPU")
		out = append(out, it.name(a.englishLocked()))
	}
	sx := perfSx(p)
	switch {
	case sx.perf != nil && sx.perf.leaseHeld:
		out = append(out, sx.perf.names...)
	case sx.display != nil && sx.display.leaseHeld:
		out = append(out, sx.display.names...)
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	out := []string{}
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func (a *Perf) perfSnapshotLocked(p *core.Process) core.Obj {
	s := perfSx(p).perf
	o := core.OK("kind", "performance")
	if s == nil {
		o = append(o, core.NewObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "stopRetryable", false, "items", []string{})...)
	} else {
		s.setSessionFields(&o, perfMachine, "recording", protocol.SessionRecording)
		s.SetTimes(&o, a.NowMs())
	}
	o.Set("recordsRoot", core.ShellForm(a.RecordsRootLocked()))
	if s != nil {
		if s.outputPath != "" {
			o.Set("outputPath", s.outputPath)
		}
		if s.Err != "" {
			o.Set("error", s.Err)
		}
	}
	o.Set("runningItems", a.providerRunningLocked(p))
	return o
}

// itemValue is one display item's current text (the floating window's
// line): its series values with units; "" when it records nothing.
func itemValue(key, target string, english bool, startMs, atMs int64) string {
	var parts []string
	for _, s := range seriesFor(key, target, english) {
		parts = append(parts, javaFloat(sampleValue(s, startMs, atMs))+s.unit)
	}
	return strings.Join(parts, "/")
}

// valuesFor maps display names to current texts for the given item keys.
func (a *Perf) valuesForLocked(keys []string, target string, startMs, atMs int64) core.Obj {
	en := a.englishLocked()
	out := core.Obj{}
	for _, k := range keys {
		it, found := lookupItem(k)
		if !found {
			continue
		}
		if v := itemValue(it.key, procOf(target), en, startMs, atMs); v != "" {
			out.Set(it.name(en), v)
		}
	}
	return out
}

// procOf is the process a target selects ("-" and "" mean global).
func procOf(target string) string {
	if target == "-" {
		return ""
	}
	return target
}

// currentValuesLocked is perf?mode=current's values: the recording lease's
// cache when a recording owns the provider, else every running item.
func (a *Perf) currentValuesLocked(p *core.Process) core.Obj {
	now := a.NowMs()
	sx := perfSx(p)
	if s := sx.perf; s != nil && s.leaseHeld {
		return a.valuesForLocked(s.items, s.target, s.StartedAt, now)
	}
	out := core.Obj{}
	if a.manualWindow {
		out = append(out, a.valuesForLocked([]string{"CPU"}, "", now, now)...)
	}
	if d := sx.display; d != nil && d.leaseHeld {
		for _, e := range a.valuesForLocked(d.items, d.target, d.StartedAt, now) {
			out.Set(e.K, e.V)
		}
	}
	return out
}

// parseItems splits the items parameter: trimmed, empties dropped,
// duplicates removed, order kept; known names map to their keys.
func parseItems(raw string) []string {
	out := []string{}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if it, found := lookupItem(part); found {
			part = it.key
		}
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out
}

// itemPermissionsMissing returns the denied permissions among the items'
// own plus adb and powerSave (toast hints need nothing).
func (a *Perf) itemPermissionsMissingLocked(keys []string) []string {
	need := []string{core.PermADB, core.PermPowerSave}
	for _, k := range keys {
		it, _ := lookupItem(k)
		for _, perm := range it.permissions {
			switch {
			case perm == "adb":
				need = append(need, core.PermADB)
			case perm == "android.settings.ACCESSIBILITY_SETTINGS":
				need = append(need, core.PermAccessibility)
			}
		}
	}
	return a.MissingPermissionsLocked(dedupe(need)...)
}

// preflightLocked runs the synchronous start checks shared by recording
// and display; it returns the visible failure text or "".
func (a *Perf) perfPreflightLocked(p *core.Process, items []string, target, busyMsg string) string {
	if len(items) == 0 {
		return "Parameter 'items' is required"
	}
	if a.providerNotReady {
		return "Performance display service is not ready"
	}
	var unknown []string
	for _, k := range items {
		if _, found := lookupItem(k); !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return "Unsupported performance item(s): " + strings.Join(unknown, ",")
	}
	if len(a.providerRunningLocked(p)) > 0 {
		return busyMsg
	}
	if t := procOf(target); t != "" && !slices.ContainsFunc(a.AppListLocked(), func(x core.AppInfo) bool { return x.Package == t }) {
		return "Target application is not installed: " + t
	}
	return ""
}

// acquireProviderLocked takes the DisplayProvider's protocol lease; false
// when anything runs or plugin maintenance blocks new sessions.
func (a *Perf) acquireProviderLocked(p *core.Process, owner string) bool {
	if perfSx(p).providerOwner != "" || len(a.providerRunningLocked(p)) > 0 || p.MaintenanceLocked() {
		return false
	}
	perfSx(p).providerOwner = owner
	return true
}

func itemNames(keys []string, english bool) []string {
	var out []string
	for _, k := range keys {
		if it, found := lookupItem(k); found {
			out = append(out, it.name(english))
		}
	}
	return dedupe(out)
}

func (a *Perf) perfStart(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		sid = core.NewUUID()
	} else if !protocol.ValidID(sid, 116) {
		return e2("Invalid performance sessionId")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if cur := perfSx(p).perf; cur != nil && perfMachine.IsLive(cur.State) {
		return append(e2("A performance recording is already active"), core.KV{K: "performance", V: a.perfSnapshotLocked(p)})
	}
	s := &perfSession{providerLease: providerLease{SessionClock: core.SessionClock{State: perfMachine.Initial}, id: sid, target: q["targetApp"], items: parseItems(q["items"])}}
	a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvStart, "")
	perfSx(p).perf = s
	if msg := a.perfPreflightLocked(p, s.items, s.target, "Another performance display session is already running"); msg != "" {
		a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvError, msg)
		return a.perfSnapshotLocked(p)
	}
	dialog := a.PermissionDialogLocked()
	go a.perfGranted(p, s, dialog)
	return a.perfSnapshotLocked(p)
}

// perfGranted is the permission callback of a recording start.
func (a *Perf) perfGranted(p *core.Process, s *perfSession, dialog time.Duration) {
	if !a.SleepDevice(p, dialog) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if perfSx(p).perf != s || !a.CurrentLocked(p) {
		return
	}
	a.grantLeaseLocked(p, perfLease, &s.providerLease)
}

func (a *Perf) perfStop(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := perfSx(p).perf
	if sid == "" {
		return append(e2("Parameter 'sessionId' is required"), core.KV{K: "performance", V: a.perfSnapshotLocked(p)})
	}
	if s == nil || s.id != sid {
		return append(e2("Performance sessionId does not match"), core.KV{K: "performance", V: a.perfSnapshotLocked(p)})
	}
	switch {
	case s.State == protocol.SessionStarting:
		s.cancelRequested = true
		a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvStop, "Performance start cancellation is waiting for the permission request")
	case s.State == protocol.SessionRecording:
		a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvStop, "")
		a.perfCleanupLocked(p, s)
	case s.State == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress:
		a.perfCleanupLocked(p, s)
	case s.State == protocol.SessionStopping && s.stopInProgress:
		return append(e2("Performance stop is already in progress"), core.KV{K: "performance", V: a.perfSnapshotLocked(p)})
	default:
		return append(e2("There is no active performance recording"), core.KV{K: "performance", V: a.perfSnapshotLocked(p)})
	}
	return a.perfSnapshotLocked(p)
}

// perfCleanupLocked releases the provider lease (or, with the fault knob,
// leaves the cleanup incomplete and the stop retryable) and then persists
// the CSVs in the background.
func (a *Perf) perfCleanupLocked(p *core.Process, s *perfSession) {
	if a.cleanupPendingLocked(perfLease, &s.providerLease) {
		return
	}
	s.stopInProgress = true
	s.Err = ""
	releaseLeaseLocked(p, perfLease, &s.providerLease)
	end := a.NowMs()
	root := a.RecordsRootLocked()
	charset := a.StringSetting(core.KeyOutputCharset)
	en := a.englishLocked()
	go func() {
		// Saving runs on a background thread; give it a little device time.
		if !a.SleepDevice(p, 100*time.Millisecond) {
			return
		}
		out, err := a.savePerfRecords(root, s, end, charset, en)
		a.Mu.Lock()
		defer a.Mu.Unlock()
		if perfSx(p).perf != s || !a.CurrentLocked(p) {
			return
		}
		s.stopInProgress = false
		if err != nil {
			a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvError, "Unable to persist performance recording: "+err.Error())
			return
		}
		s.outputPath = core.ShellForm(out)
		a.StepClockLocked(perfMachine, &s.SessionClock, protocol.EvStopped, "")
	}()
}

var errNoRecords = errors.New("No performance records were collected")

// savePerfRecords writes one CSV per series into a temporary folder and
// renames it to performance-<sid> (saveToFileStrict).
func (a *Perf) savePerfRecords(root string, s *perfSession, endMs int64, charset string, english bool) (string, error) {
	final := root + "/performance-" + s.id
	if _, err := a.Phone.Stat(final); err == nil {
		return "", errors.New("Performance record folder already exists")
	}
	var series []perfSeries
	for _, k := range s.items {
		series = append(series, seriesFor(k, procOf(s.target), english)...)
	}
	if len(series) == 0 {
		return "", errNoRecords
	}
	tmp := fmt.Sprintf("%s/.performance-%s.tmp-%s", root, s.id, core.NewUUID())
	if err := a.Phone.MkdirAll(tmp); err != nil {
		return "", fmt.Errorf("create %s: %w", tmp, err)
	}
	for _, se := range series {
		name := csvFileName(se, s.StartedAt, endMs)
		data := encodeCharset(csvContent(se, s.StartedAt, endMs), charset)
		if err := a.Phone.WriteFile(tmp+"/"+name, data); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err := a.renameDir(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}

// renamer is implemented by phones with an atomic rename (the simulator's
// FS has one); others get a copy-then-delete fallback.
type renamer interface {
	Rename(oldPath, newPath string) error
}

func (a *Perf) renameDir(from, to string) error {
	if r, found := a.Phone.(renamer); found {
		if err := r.Rename(from, to); err != nil {
			return fmt.Errorf("rename %s: %w", path.Base(from), err)
		}
		return nil
	}
	entries, err := a.Phone.ReadDir(from)
	if err != nil {
		return fmt.Errorf("list %s: %w", from, err)
	}
	if err := a.Phone.MkdirAll(to); err != nil {
		return fmt.Errorf("create %s: %w", to, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := a.Phone.ReadFile(from + "/" + e.Name())
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if err := a.Phone.WriteFile(to+"/"+e.Name(), data); err != nil {
			return fmt.Errorf("write %s: %w", e.Name(), err)
		}
		_ = a.Phone.Remove(from + "/" + e.Name())
	}
	if err := a.Phone.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", from, err)
	}
	return nil
}
