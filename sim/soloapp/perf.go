package soloapp

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
)

var perfMachine = protocol.Performance()

// e2 is the untyped error envelope of performance and performance display.
func e2(msg string) obj { return newObj("success", false, "error", msg) }

// perfSession is the process-wide performance recording slot.
type perfSession struct {
	providerLease
	outputPath string
}

// Perf is the performance resolver pair and its installation-level fault
// knobs (they survive Restart).
type Perf struct {
	*appCore
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
func (a *Perf) RecordingLiveLocked(p *process) bool {
	s := perfSx(p).perf
	return s != nil && perfMachine.IsLive(s.state)
}

// ProviderLeasedLocked reports whether the DisplayProvider's protocol lease
// is held (a RuntimeSessionGuard session).
func (a *Perf) ProviderLeasedLocked(p *process) bool { return perfSx(p).providerOwner != "" }

var perfSlot = NewSlot(func() *perfProc { return &perfProc{} })

func perfSx(p *process) *perfProc { return perfSlot.Of(p) }

// performance dispatches both resolvers of the action (display first).
func (a *Perf) performance(ctx context.Context, p *process, via transport, q params) obj {
	if q["mode"] == "display" {
		return a.perfDisplay(p, via, q)
	}
	switch m := q["mode"]; m {
	case "":
		return e2("Parameter 'mode' is required")
	case "listItems":
		return a.perfListItems()
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.perfSnapshotLocked(p)
	case "current":
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.providerNotReady {
			return e2("Performance display service is not ready")
		}
		o := a.perfSnapshotLocked(p)
		o.set("sampledAt", a.nowMs())
		o.set("values", a.currentValuesLocked(p))
		return o
	case "normal":
		act := q["action"]
		if act != "start" && act != "stop" {
			return e2("Unsupported performance action: " + javaString(q, "action"))
		}
		if via != viaAdb {
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

func (a *Perf) perfListItems() obj {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.providerNotReady {
		return e2("Performance display service is not ready")
	}
	en := a.englishLocked()
	var items []obj
	for _, it := range perfItems() {
		o := newObj("key", it.key, "name", it.name(en), "permissions", slices.Clone(it.permissions), "tip", "")
		if it.trigger != "" {
			o.set("trigger", it.trigger)
		}
		items = append(items, o)
	}
	return ok("items", items, "total", len(items))
}

// recordsRootLocked is <solopiDir>/records (canonical).
func (a *appCore) recordsRootLocked() string { return a.solopiDirLocked() + "/records" }

// providerRunningLocked lists the display names running in the provider,
// whoever owns them (the manual floating window included).
func (a *Perf) providerRunningLocked(p *process) []string {
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

func (a *Perf) perfSnapshotLocked(p *process) obj {
	s := perfSx(p).perf
	o := ok("kind", "performance")
	if s == nil {
		o = append(o, newObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "stopRetryable", false, "items", []string{})...)
	} else {
		o.set("sessionId", s.id)
		o.set("state", string(s.state))
		o.set("recording", s.state == protocol.SessionRecording)
		o.set("active", perfMachine.IsLive(s.state))
		o.set("terminal", perfMachine.IsTerminal(s.state))
		o.set("stopRetryable", s.state == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress)
		if s.target != "" {
			o.set("targetPackage", s.target)
		}
		o.set("items", slices.Clone(s.items))
		s.setTimes(&o, a.nowMs())
	}
	o.set("recordsRoot", shellForm(a.recordsRootLocked()))
	if s != nil {
		if s.outputPath != "" {
			o.set("outputPath", s.outputPath)
		}
		if s.err != "" {
			o.set("error", s.err)
		}
	}
	o.set("runningItems", a.providerRunningLocked(p))
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
func (a *Perf) valuesForLocked(keys []string, target string, startMs, atMs int64) obj {
	en := a.englishLocked()
	out := obj{}
	for _, k := range keys {
		it, found := lookupItem(k)
		if !found {
			continue
		}
		if v := itemValue(it.key, procOf(target), en, startMs, atMs); v != "" {
			out.set(it.name(en), v)
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
func (a *Perf) currentValuesLocked(p *process) obj {
	now := a.nowMs()
	sx := perfSx(p)
	if s := sx.perf; s != nil && s.leaseHeld {
		return a.valuesForLocked(s.items, s.target, s.startedAt, now)
	}
	out := obj{}
	if a.manualWindow {
		out = append(out, a.valuesForLocked([]string{"CPU"}, "", now, now)...)
	}
	if d := sx.display; d != nil && d.leaseHeld {
		for _, e := range a.valuesForLocked(d.items, d.target, d.startedAt, now) {
			out.set(e.k, e.v)
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
	need := []string{PermADB, PermPowerSave}
	for _, k := range keys {
		it, _ := lookupItem(k)
		for _, perm := range it.permissions {
			switch {
			case perm == "adb":
				need = append(need, PermADB)
			case perm == "android.settings.ACCESSIBILITY_SETTINGS":
				need = append(need, PermAccessibility)
			}
		}
	}
	return a.missingPermissionsLocked(dedupe(need)...)
}

// preflightLocked runs the synchronous start checks shared by recording
// and display; it returns the visible failure text or "".
func (a *Perf) perfPreflightLocked(p *process, items []string, target, busyMsg string) string {
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
	if t := procOf(target); t != "" && !slices.ContainsFunc(a.appListLocked(), func(x AppInfo) bool { return x.Package == t }) {
		return "Target application is not installed: " + t
	}
	return ""
}

// acquireProviderLocked takes the DisplayProvider's protocol lease; false
// when anything runs or plugin maintenance blocks new sessions.
func (a *Perf) acquireProviderLocked(p *process, owner string) bool {
	if perfSx(p).providerOwner != "" || len(a.providerRunningLocked(p)) > 0 || p.maintenanceLocked() {
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

func (a *Perf) perfStart(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		sid = newUUID()
	} else if !protocol.ValidID(sid, 116) {
		return e2("Invalid performance sessionId")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := perfSx(p).perf; cur != nil && perfMachine.IsLive(cur.state) {
		return append(e2("A performance recording is already active"), kv{"performance", a.perfSnapshotLocked(p)})
	}
	s := &perfSession{providerLease: providerLease{sessionClock: sessionClock{state: perfMachine.Initial}, id: sid, target: q["targetApp"], items: parseItems(q["items"])}}
	a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvStart, "")
	perfSx(p).perf = s
	if msg := a.perfPreflightLocked(p, s.items, s.target, "Another performance display session is already running"); msg != "" {
		a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvError, msg)
		return a.perfSnapshotLocked(p)
	}
	dialog := a.permissionDialogLocked()
	go a.perfGranted(p, s, dialog)
	return a.perfSnapshotLocked(p)
}

// perfGranted is the permission callback of a recording start.
func (a *Perf) perfGranted(p *process, s *perfSession, dialog time.Duration) {
	if !a.sleepDevice(p, dialog) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if perfSx(p).perf != s || !a.currentLocked(p) {
		return
	}
	a.grantLeaseLocked(p, perfLease, &s.providerLease)
}

func (a *Perf) perfStop(p *process, q params) obj {
	sid := q["sessionId"]
	a.mu.Lock()
	defer a.mu.Unlock()
	s := perfSx(p).perf
	if sid == "" {
		return append(e2("Parameter 'sessionId' is required"), kv{"performance", a.perfSnapshotLocked(p)})
	}
	if s == nil || s.id != sid {
		return append(e2("Performance sessionId does not match"), kv{"performance", a.perfSnapshotLocked(p)})
	}
	switch {
	case s.state == protocol.SessionStarting:
		s.cancelRequested = true
		a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvStop, "Performance start cancellation is waiting for the permission request")
	case s.state == protocol.SessionRecording:
		a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvStop, "")
		a.perfCleanupLocked(p, s)
	case s.state == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress:
		a.perfCleanupLocked(p, s)
	case s.state == protocol.SessionStopping && s.stopInProgress:
		return append(e2("Performance stop is already in progress"), kv{"performance", a.perfSnapshotLocked(p)})
	default:
		return append(e2("There is no active performance recording"), kv{"performance", a.perfSnapshotLocked(p)})
	}
	return a.perfSnapshotLocked(p)
}

// perfCleanupLocked releases the provider lease (or, with the fault knob,
// leaves the cleanup incomplete and the stop retryable) and then persists
// the CSVs in the background.
func (a *Perf) perfCleanupLocked(p *process, s *perfSession) {
	if a.cleanupPendingLocked(perfLease, &s.providerLease) {
		return
	}
	s.stopInProgress = true
	s.err = ""
	releaseLeaseLocked(p, perfLease, &s.providerLease)
	end := a.nowMs()
	root := a.recordsRootLocked()
	charset := a.stringSetting(keyOutputCharset)
	en := a.englishLocked()
	go func() {
		// Saving runs on a background thread; give it a little device time.
		if !a.sleepDevice(p, 100*time.Millisecond) {
			return
		}
		out, err := a.savePerfRecords(root, s, end, charset, en)
		a.mu.Lock()
		defer a.mu.Unlock()
		if perfSx(p).perf != s || !a.currentLocked(p) {
			return
		}
		s.stopInProgress = false
		if err != nil {
			a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvError, "Unable to persist performance recording: "+err.Error())
			return
		}
		s.outputPath = shellForm(out)
		a.stepClockLocked(perfMachine, &s.sessionClock, protocol.EvStopped, "")
	}()
}

var errNoRecords = errors.New("No performance records were collected")

// savePerfRecords writes one CSV per series into a temporary folder and
// renames it to performance-<sid> (saveToFileStrict).
func (a *Perf) savePerfRecords(root string, s *perfSession, endMs int64, charset string, english bool) (string, error) {
	final := root + "/performance-" + s.id
	if _, err := a.phone.Stat(final); err == nil {
		return "", errors.New("Performance record folder already exists")
	}
	var series []perfSeries
	for _, k := range s.items {
		series = append(series, seriesFor(k, procOf(s.target), english)...)
	}
	if len(series) == 0 {
		return "", errNoRecords
	}
	tmp := fmt.Sprintf("%s/.performance-%s.tmp-%s", root, s.id, newUUID())
	if err := a.phone.MkdirAll(tmp); err != nil {
		return "", fmt.Errorf("create %s: %w", tmp, err)
	}
	for _, se := range series {
		name := csvFileName(se, s.startedAt, endMs)
		data := encodeCharset(csvContent(se, s.startedAt, endMs), charset)
		if err := a.phone.WriteFile(tmp+"/"+name, data); err != nil {
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
	if r, found := a.phone.(renamer); found {
		if err := r.Rename(from, to); err != nil {
			return fmt.Errorf("rename %s: %w", path.Base(from), err)
		}
		return nil
	}
	entries, err := a.phone.ReadDir(from)
	if err != nil {
		return fmt.Errorf("list %s: %w", from, err)
	}
	if err := a.phone.MkdirAll(to); err != nil {
		return fmt.Errorf("create %s: %w", to, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := a.phone.ReadFile(from + "/" + e.Name())
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if err := a.phone.WriteFile(to+"/"+e.Name(), data); err != nil {
			return fmt.Errorf("write %s: %w", e.Name(), err)
		}
		_ = a.phone.Remove(from + "/" + e.Name())
	}
	if err := a.phone.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", from, err)
	}
	return nil
}
