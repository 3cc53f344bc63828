package soloapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// caseRow is one row of SoloPi's RecordCaseInfo table. The steps live in a
// separate file (storePath) on the phone, so an in-place rewrite of that
// file changes the case snapshot without touching the row.
type caseRow struct {
	id                     int64
	name                   string
	desc                   *string
	pkg, label, recordMode string
	advance                *string
	priority               int
	gmtCreate, gmtModify   int64
	storePath              string
}

// caseSnapshot is the snapshot view of one case
// (docs/file-formats.md#case-snapshot): the wire object plus the decrypted
// steps the replay executes.
type caseSnapshot struct {
	row         caseRow
	steps       []casefile.Step // decrypted, encrypt=false
	fingerprint string
	wire        core.Obj
}

var errStoredCase = errors.New("stored case operation log cannot be loaded")

func (a *App) importDir() string { return core.NormPath(a.Cfg.ExternalFilesDir + "/harness-import") }

func (a *App) stepsDir() string { return core.NormPath(a.Cfg.ExternalFilesDir + "/steps") }

// newestCaseLocked returns the highest-id row with that name.
func (a *App) newestCaseLocked(name string) *caseRow {
	var best *caseRow
	for _, r := range a.cases {
		if r.name == name && (best == nil || r.id > best.id) {
			best = r
		}
	}
	return best
}

func (a *App) caseByIDLocked(id int64) *caseRow {
	for _, r := range a.cases {
		if r.id == id {
			return r
		}
	}
	return nil
}

// snapshotLocked loads the steps file, decrypts and inlines it, and
// computes the fingerprint.
func (a *App) snapshotLocked(r *caseRow) (*caseSnapshot, error) {
	data, err := a.Phone.ReadFile(r.storePath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errStoredCase, err)
	}
	var steps []casefile.Step
	if err := json.Unmarshal(data, &steps); err != nil {
		return nil, fmt.Errorf("%w: %w", errStoredCase, err)
	}
	seed := a.StringSetting(core.KeyAESKey)
	opLog, err := casefile.SnapshotOperationLog(steps, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errStoredCase, err)
	}
	fp := fingerprintOf(r, opLog)
	wire := core.NewObj("id", r.id, "caseName", r.name, "caseDesc", r.desc, "targetAppPackage", r.pkg,
		"targetAppLabel", r.label, "recordMode", r.recordMode, "advanceSettings", r.advance,
		"operationLog", opLog, "priority", r.priority, "gmtCreate", r.gmtCreate, "gmtModify", r.gmtModify,
		"caseFingerprint", fp)
	return &caseSnapshot{row: *r, steps: decryptSteps(steps, seed), fingerprint: fp, wire: wire}, nil
}

func (a *App) listCases() core.Obj {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	rows := slices.Clone(a.cases)
	slices.SortStableFunc(rows, func(x, y *caseRow) int {
		switch {
		case x.gmtModify > y.gmtModify:
			return -1
		case x.gmtModify < y.gmtModify:
			return 1
		}
		return 0
	})
	list := make([]core.Obj, 0, len(rows))
	for _, r := range rows {
		list = append(list, core.NewObj("id", r.id, "name", r.name, "description", r.desc,
			"targetAppPackage", r.pkg, "targetAppLabel", r.label, "recordMode", r.recordMode,
			"createdAt", r.gmtCreate, "modifiedAt", r.gmtModify))
	}
	return core.OK("count", len(list), "cases", list)
}

func (a *App) caseQuery(q core.Params) core.Obj {
	name := q["caseName"]
	if name == "" {
		return core.E1(protocol.ErrMissingCaseName, "Parameter 'caseName' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r := a.newestCaseLocked(name)
	if r == nil {
		return core.E1(protocol.ErrCaseNotFound, "Case not found: "+name)
	}
	snap, err := a.snapshotLocked(r)
	if err != nil {
		return core.E1(protocol.ErrInvalidStoredCase, "Stored case operation log cannot be loaded")
	}
	return core.OK("case", snap.wire)
}

// caseImport is harness?type=case-import
// (docs/device-protocol.md#case-import-and-delete). Every outcome, including
// the transport rejection, overwrites the single receipt slot.
func (a *App) caseImport(p *core.Process, via core.Transport, q core.Params) core.Obj {
	resp := a.caseImportOutcome(via, q)
	a.storeCaseReceipt(p, protocol.CaseImport(), &st(p).importReceipt, resp, q["requestId"])
	return resp
}

// storeCaseReceipt overwrites a single-slot receipt with a copy of resp
// carrying the request's requestId (∅ when missing). The outcome is
// classified through the receipt machine so only succeeded or failed
// receipts are ever stored.
func (a *App) storeCaseReceipt(p *core.Process, m *protocol.Machine, slot *core.Obj, resp core.Obj, requestID string) {
	ev := protocol.EvReceiptRejected
	if resp.Get("success") == true {
		ev = protocol.EvReceiptStored
	}
	if _, err := m.Step(m.Initial, ev); err != nil {
		return
	}
	stored := resp.Clone()
	if requestID == "" {
		stored.Del("requestId")
	} else {
		stored.Set("requestId", requestID)
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P == p {
		*slot = stored
	}
}

func (a *App) caseImportOutcome(via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrAdbRequired, "Case import is only available through the ADB scheme transport")
	}
	reqID := q["requestId"]
	if reqID == "" {
		return core.E1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	raw := q["path"]
	if raw == "" {
		return core.E1(protocol.ErrMissingPath, "Parameter 'path' is required")
	}
	p := core.NormPath(raw)
	if !strings.HasPrefix(p, a.importDir()+"/") {
		return core.E1(protocol.ErrInvalidImportPath, "Import path must be inside SoloPi harness storage")
	}
	st, err := a.Phone.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return core.E1(protocol.ErrCaseFileNotFound, "Case import file was not found")
	}
	data, readErr := a.Phone.ReadFile(p)
	// Deleted immediately, whatever happens next.
	_ = a.Phone.Remove(p)
	if readErr != nil || len(strings.TrimSpace(string(data))) == 0 {
		return core.E1(protocol.ErrEmptyCaseFile, "Case import file is empty or unreadable")
	}
	c, err := casefile.ParseAsDevice(data)
	if err != nil {
		return core.E1(protocol.ErrInvalidCaseJSON, "Case JSON cannot be parsed by SoloPi")
	}
	if msg := validateImportedCase(c); msg != "" {
		return core.E1(protocol.ErrInvalidCase, msg)
	}
	// Defaults of the device's insert (recordMode, label, canonical action
	// names); id and times are assigned below under the lock.
	c = casefile.ApplyDeviceImportDefaults(c, 0, 0)
	replace := strings.EqualFold(q["replace"], "true")

	a.Mu.Lock()
	defer a.Mu.Unlock()
	var same []*caseRow
	for _, r := range a.cases {
		if r.name == c.CaseName {
			same = append(same, r)
		}
	}
	if len(same) > 0 && !replace {
		return core.E1(protocol.ErrDuplicateCase, "Case already exists; pass --replace to overwrite it")
	}
	stepsJSON, err := json.Marshal(c.Steps)
	if err != nil {
		return core.E1(protocol.ErrStepStorageFailed, "SoloPi could not persist imported case steps")
	}
	store := a.stepsDir() + "/" + core.NewUUID()[:16]
	if err := a.Phone.MkdirAll(a.stepsDir()); err != nil {
		return core.E1(protocol.ErrStepStorageFailed, "SoloPi could not persist imported case steps")
	}
	if err := a.Phone.WriteFile(store, stepsJSON); err != nil {
		return core.E1(protocol.ErrStepStorageFailed, "SoloPi could not persist imported case steps")
	}
	now := a.NowMs()
	row := &caseRow{
		id: a.nextCaseID, name: c.CaseName, desc: &c.CaseDesc, pkg: c.TargetAppPackage,
		label: c.TargetAppLabel, recordMode: c.RecordMode, advance: &c.AdvanceSettings,
		priority: c.Priority, gmtCreate: now, gmtModify: now, storePath: store,
	}
	if row.recordMode == "" {
		row.recordMode = "local"
	}
	if row.label == "" {
		row.label = row.pkg
	}
	a.nextCaseID++
	a.cases = slices.DeleteFunc(a.cases, func(r *caseRow) bool { return r.name == c.CaseName })
	for _, r := range same {
		_ = a.Phone.Remove(r.storePath)
	}
	a.cases = append(a.cases, row)
	return core.OK("requestId", reqID, "imported", true, "caseName", row.name, "caseId", row.id,
		"replaced", len(same), "stepCount", len(c.Steps))
}

// caseDelete is harness?type=case-delete
// (docs/device-protocol.md#case-import-and-delete).
func (a *App) caseDelete(p *core.Process, via core.Transport, q core.Params) core.Obj {
	resp := a.caseDeleteOutcome(p, via, q)
	a.storeCaseReceipt(p, protocol.CaseDelete(), &st(p).deleteReceipt, resp, q["requestId"])
	return resp
}

func (a *App) caseDeleteOutcome(p *core.Process, via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrAdbRequired, "Case deletion is only available through the ADB scheme transport")
	}
	reqID := q["requestId"]
	if reqID == "" {
		return core.E1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	name := q["caseName"]
	if name == "" {
		return core.E1(protocol.ErrMissingCaseName, "Parameter 'caseName' is required")
	}
	if q["confirmCaseName"] != name {
		return core.E1(protocol.ErrConfirmationMismatch, "confirmCaseName must exactly match caseName")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if run := st(p).harness; run != nil && replayMachine.IsLive(run.state) && run.caseName == name {
		return core.E1(protocol.ErrCaseActive, "The case is currently running and cannot be deleted")
	}
	r := a.newestCaseLocked(name)
	if r == nil {
		return core.E1(protocol.ErrCaseNotFound, "Case not found: "+name)
	}
	a.cases = slices.DeleteFunc(a.cases, func(x *caseRow) bool { return x == r })
	_ = a.Phone.Remove(r.storePath)
	return core.OK("requestId", reqID, "deleted", true, "caseId", r.id, "caseName", name)
}

// TouchCase updates the newest case of that name's gmtModify, which changes
// its fingerprint (a DB edit after the host's preflight).
func (a *App) TouchCase(name string) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r := a.newestCaseLocked(name)
	if r == nil {
		return fmt.Errorf("soloapp: case %q not found", name)
	}
	now := a.NowMs()
	if now <= r.gmtModify {
		now = r.gmtModify + 1
	}
	r.gmtModify = now
	return nil
}

// RewriteCase edits the newest case of that name in place: the row keeps
// its id and the steps file keeps its path (an in-place rewrite after the
// host's preflight). mutate sees the stored (possibly encrypted) steps.
func (a *App) RewriteCase(name string, mutate func(c *casefile.Case)) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r := a.newestCaseLocked(name)
	if r == nil {
		return fmt.Errorf("soloapp: case %q not found", name)
	}
	data, err := a.Phone.ReadFile(r.storePath)
	if err != nil {
		return fmt.Errorf("soloapp: read steps of %q: %w", name, err)
	}
	var steps []casefile.Step
	if err := json.Unmarshal(data, &steps); err != nil {
		return fmt.Errorf("soloapp: parse steps of %q: %w", name, err)
	}
	id := r.id
	c := &casefile.Case{ID: &id, CaseName: r.name, TargetAppPackage: r.pkg, TargetAppLabel: r.label,
		RecordMode: r.recordMode, Priority: r.priority, GmtCreate: r.gmtCreate, GmtModify: r.gmtModify, Steps: steps}
	if r.desc != nil {
		c.CaseDesc = *r.desc
	}
	if r.advance != nil {
		c.AdvanceSettings = *r.advance
	}
	mutate(c)
	out, err := json.Marshal(c.Steps)
	if err != nil {
		return fmt.Errorf("soloapp: encode steps of %q: %w", name, err)
	}
	if err := a.Phone.WriteFile(r.storePath, out); err != nil {
		return fmt.Errorf("soloapp: write steps of %q: %w", name, err)
	}
	r.name, r.pkg, r.label, r.recordMode = c.CaseName, c.TargetAppPackage, c.TargetAppLabel, c.RecordMode
	r.desc, r.advance = &c.CaseDesc, &c.AdvanceSettings
	r.priority, r.gmtCreate, r.gmtModify = c.Priority, c.GmtCreate, c.GmtModify
	return nil
}

// CaseFingerprint returns the current fingerprint of the newest case with
// that name, as harness?type=case reports it.
func (a *App) CaseFingerprint(name string) (id int64, fingerprint string, err error) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r := a.newestCaseLocked(name)
	if r == nil {
		return 0, "", fmt.Errorf("soloapp: case %q not found", name)
	}
	snap, err := a.snapshotLocked(r)
	if err != nil {
		return 0, "", err
	}
	return r.id, snap.fingerprint, nil
}
