package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// deviceCase is the exact case a replay will run: the device's snapshot,
// bound to its database id and caseFingerprint.
type deviceCase struct {
	ID          int64
	Name        string
	Fingerprint string
	// Case is the snapshot parsed (steps inlined and decrypted by SoloPi).
	Case *casefile.Case
	// Object is the device's case object with operationLog parsed into an
	// object, as case-get prints it.
	Object map[string]any
}

// GetCase reads harness?type=case for name and checks that the snapshot is
// bound: same name, a positive id and a 64-hex fingerprint. Anything else
// is a protocol error (exit 4), raised before any mutation is sent.
func GetCase(ctx context.Context, d *device.Device, name string) (*deviceCase, error) {
	m, err := d.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCase, protocol.ParamCaseName, name))
	if err != nil {
		return nil, err
	}
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return nil, device.DeviceRefusal(m, "the device refused the case query").With("caseName", name)
	}
	obj, ok := m["case"].(map[string]any)
	if !ok {
		return nil, device.Recode(device.ContractError("the case answer has no case object", m), fault.CodeCaseSnapshotUnbound)
	}
	id, idOK := device.WireObject(obj).Integer("id")
	fp := device.WireObject(obj).Str("caseFingerprint")
	got := device.WireObject(obj).Str("caseName")
	if got != name || !idOK || id <= 0 || !protocol.ValidHex(fp, 64, false) {
		return nil, fault.New(fault.Transport, fault.CodeCaseSnapshotUnbound, "the device's case snapshot is not bound to a name, id and fingerprint").
			With("caseName", name).With("caseId", obj["id"]).With("caseFingerprint", obj["caseFingerprint"]).With("returnedCaseName", got)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("re-encode case snapshot: %w", err)
	}
	c, err := casefile.Parse(raw)
	if err != nil {
		e := caseError(err)
		e.Kind = fault.Transport
		return nil, e.With("caseName", name)
	}
	out := maps.Clone(obj)
	if s, ok := obj["operationLog"].(string); ok {
		var opLog map[string]any
		if err := canonjson.Unmarshal([]byte(s), &opLog); err != nil || opLog == nil {
			return nil, device.ContractError("the case operationLog is not a JSON object", nil).With("caseName", name)
		}
		delete(opLog, "storePath")
		out["operationLog"] = opLog
	}
	return &deviceCase{ID: id, Name: name, Fingerprint: fp, Case: c, Object: out}, nil
}

// redactParams returns a copy of a case object (as case-get prints it)
// with every step parameter value replaced by redact.Marker, and how
// many it replaced. The snapshot cannot say which values were encrypted
// (it decrypts them all), and SoloPi encrypts every parameter by default.
func redactParams(obj map[string]any) (map[string]any, int) {
	out := maps.Clone(obj)
	log, ok := obj["operationLog"].(map[string]any)
	steps, _ := log["steps"].([]any)
	if !ok || steps == nil {
		return out, 0
	}
	n := 0
	newSteps := make([]any, len(steps))
	for i, x := range steps {
		newSteps[i] = x
		st, ok := x.(map[string]any)
		method, _ := st["operationMethod"].(map[string]any)
		params, _ := method["operationParam"].(map[string]any)
		if !ok || params == nil {
			continue
		}
		red := make(map[string]any, len(params))
		for k, v := range params {
			if v == nil {
				red[k] = nil
				continue
			}
			red[k] = redact.Marker
			n++
		}
		m := maps.Clone(method)
		m["operationParam"] = red
		s := maps.Clone(st)
		s["operationMethod"] = m
		newSteps[i] = s
	}
	l := maps.Clone(log)
	l["steps"] = newSteps
	out["operationLog"] = l
	return out, n
}

// StepCount is the number of steps of the snapshot.
func (c *deviceCase) StepCount() int { return len(c.Case.Steps) }

// ListCases queries harness?type=cases and checks count == len(cases).
func ListCases(ctx context.Context, d *device.Device) (map[string]any, error) {
	m, err := d.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCases))
	if err != nil {
		return nil, err
	}
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return nil, device.DeviceRefusal(m, "the device refused the case list")
	}
	list, ok := m["cases"].([]any)
	n, nok := device.WireObject(m).Integer("count")
	if !ok || !nok || n != int64(len(list)) {
		return nil, device.ContractError("the case list count does not match its cases", m)
	}
	return m, nil
}

// caseReceipt is the single receipt slot of case-import or case-delete,
// read for reqID. The slot answers *_receipt_not_found while it holds no
// receipt or another request's.
func caseReceipt(status, reqID string) device.ReceiptQuery {
	return device.ReceiptQuery{Action: protocol.ActionHarness, ID: reqID, ForeignCode: fault.CodeReceiptMismatch,
		Params: device.P(protocol.ParamType, status, protocol.ParamRequestID, reqID)}
}

// firstReceipt: the first receipt with our requestId is final.
func firstReceipt(device.Receipt) (bool, error) { return true, nil }

// ImportOptions configure ImportCase.
type ImportOptions struct {
	Replace      bool
	Timeout      time.Duration // default 15 s
	PollInterval time.Duration // default 0.2 s
}

// importReport is the outcome of a case import, success or not: the
// receipt (when one arrived) and the cleanup of the staged file.
type importReport struct {
	RequestID  string
	RemotePath string
	Receipt    map[string]any
	Cleanup    StagingCleanup
}

// StagingCleanup is the removal of a staged import file, as case-import
// and run --file report it under cleanup. Its fields are in the
// alphabetical order of their JSON names (it used to be a map); Removed
// and Success are set only once removal was attempted.
type StagingCleanup struct {
	Attempted bool `json:"attempted"`
	// Error says why the removal could not be confirmed.
	Error string `json:"error,omitempty"`
	Path  string `json:"path,omitempty"`
	// Reason says why no removal was attempted.
	Reason  string `json:"reason,omitempty"`
	Removed *bool  `json:"removed,omitempty"`
	Success *bool  `json:"success,omitempty"`
}

// Done reports a staged file confirmed removed.
func (c StagingCleanup) Done() bool { return c.Success != nil && *c.Success }

// importDir is the device directory SoloPi imports cases from.
func importDir(d *device.Device) string {
	return "/sdcard/Android/data/" + d.Package() + "/files/harness-import"
}

// ImportCase pushes the normalised case under a controlled random name
// (<requestId>.json, SHA-256 checked), asks SoloPi to import it, and polls
// the receipt for that requestId. The staged file is always removed
// afterwards (SoloPi deletes it on read; we make sure, whatever happened),
// with a fresh context so an interrupt does not leave it behind.
func ImportCase(ctx context.Context, d *device.Device, c *casefile.Case, o ImportOptions) (*importReport, error) {
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	data, err := casefile.MarshalImportFile(c)
	if err != nil {
		return nil, caseError(err)
	}
	rep := &importReport{RequestID: device.NewRequestID()}
	dir := importDir(d)
	rep.RemotePath = dir + "/" + rep.RequestID + ".json"
	staged := false
	defer func() {
		if staged {
			rep.Cleanup = removeStaged(ctx, d, rep.RemotePath)
		} else {
			rep.Cleanup = StagingCleanup{Reason: "nothing_staged"}
		}
	}()
	_, stderr, code, err := d.Transport().Shell(ctx, device.ShellJoin("mkdir", "-p", dir))
	if err != nil {
		if ie := device.CtxErr(ctx, err); ie != nil {
			return rep, ie
		}
		return rep, fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while creating the import directory", err)
	}
	if code != 0 {
		return rep, fault.Newf(fault.Transport, fault.CodeImportStagingFailed, "mkdir %s failed: %s", dir, device.FirstLine(string(stderr)))
	}
	// From here on a partial push may have left a file: always clean up.
	staged = true
	if _, err := d.Push(ctx, bytes.NewReader(data), rep.RemotePath, 0o644); err != nil {
		return rep, err
	}
	if err := d.Mutate(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCaseImport,
		protocol.ParamPath, rep.RemotePath, protocol.ParamReplace, fmt.Sprint(o.Replace), protocol.ParamRequestID, rep.RequestID)); err != nil {
		return rep, err
	}
	last, err := device.AwaitReceipt(ctx, d, caseReceipt(protocol.HarnessCaseImportStatus, rep.RequestID),
		device.PollOptions{Timeout: o.Timeout, Interval: o.PollInterval}, firstReceipt)
	if errors.Is(err, device.ErrPollTimeout) {
		return rep, fault.New(fault.Timeout, fault.CodeImportTimeout, "SoloPi did not publish the import receipt in time; the import may still complete").
			With("requestId", rep.RequestID).With("lastResponse", map[string]any(last.Answer))
	}
	if err != nil {
		return rep, withResponse(err)
	}
	final := map[string]any(last.Object)
	rep.Receipt = final
	if ok, _ := device.WireObject(final).Flag("success"); !ok {
		return rep, device.DeviceRefusal(final, "SoloPi refused the case import")
	}
	imported, _ := device.WireObject(final).Flag("imported")
	id, idOK := device.WireObject(final).Integer("caseId")
	if !imported || !idOK || id <= 0 || device.WireObject(final).Str("caseName") != c.CaseName {
		return rep, device.ContractError("the import receipt says success but does not name the imported case", final)
	}
	return rep, nil
}

// withResponse names the answer a receipt error quotes as solopi-ai does
// (response) beside ours (lastResponse).
func withResponse(err error) error {
	if e, ok := err.(*fault.Error); ok {
		if r, ok := e.Details["lastResponse"]; ok {
			e.With("response", r)
		}
	}
	return err
}

// removeStaged deletes the staged import file and checks it is gone.
func removeStaged(ctx context.Context, d *device.Device, remote string) StagingCleanup {
	cctx, cancel := device.Cleanup(ctx, 15*time.Second)
	defer cancel()
	res := StagingCleanup{Attempted: true, Path: remote, Success: new(bool)}
	_, stderr, code, err := d.Transport().Shell(cctx, device.ShellJoin("rm", "-f", "--", remote))
	if err != nil || code != 0 {
		res.Error = "rm failed: " + firstNonEmpty(errString(err), device.FirstLine(string(stderr)))
		return res
	}
	_, _, code, err = d.Transport().Shell(cctx, device.ShellJoin("test", "!", "-e", remote))
	if err != nil {
		res.Error = "check failed: " + err.Error()
		return res
	}
	gone := code == 0
	res.Removed, res.Success = &gone, &gone
	return res
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// DeleteCase deletes the newest case named name (confirmCaseName = name)
// and polls the receipt for our requestId.
func DeleteCase(ctx context.Context, d *device.Device, name string, timeout, interval time.Duration) (map[string]any, string, error) {
	if strings.TrimSpace(name) == "" {
		return nil, "", fault.Usage(fault.CodeInvalidOption, "--case must name a SoloPi case")
	}
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	reqID := device.NewRequestID()
	if err := d.Mutate(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCaseDelete,
		protocol.ParamCaseName, name, protocol.ParamConfirmCaseName, name, protocol.ParamRequestID, reqID)); err != nil {
		return nil, reqID, err
	}
	last, err := device.AwaitReceipt(ctx, d, caseReceipt(protocol.HarnessCaseDeleteStatus, reqID),
		device.PollOptions{Timeout: timeout, Interval: interval}, firstReceipt)
	if errors.Is(err, device.ErrPollTimeout) {
		return nil, reqID, fault.New(fault.Timeout, fault.CodeDeleteTimeout, "SoloPi did not publish the delete receipt in time; the deletion may still complete").
			With("requestId", reqID).With("caseName", name).With("phase", "case-delete").With("lastResponse", map[string]any(last.Answer))
	}
	if err != nil {
		if e, ok := withResponse(err).(*fault.Error); ok && e.Kind != fault.Interrupted {
			e.With("requestId", reqID).With("caseName", name).With("phase", "case-delete")
		}
		return nil, reqID, err
	}
	final := map[string]any(last.Object)
	if ok, _ := device.WireObject(final).Flag("success"); !ok {
		return final, reqID, device.DeviceRefusal(final, "SoloPi refused to delete the case")
	}
	deleted, _ := device.WireObject(final).Flag("deleted")
	if !deleted || device.WireObject(final).Str("caseName") != name {
		return final, reqID, device.ContractError("the delete receipt says success but does not name the deleted case", final)
	}
	return final, reqID, nil
}
