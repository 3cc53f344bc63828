package replay

// Where a case's secrets are. SoloPi's case snapshot (harness?type=case)
// decrypts every parameter and says encrypt:false everywhere, so a run
// cannot tell from the device which values its author marked secret.
// case-import knows (it imports the flags) and leaves a small record of
// the positions, never the values, keyed by the device's fingerprint of
// the imported case; a run finds it by the fingerprint it reads back and
// redacts exactly the values at those positions. Without a record the
// input-bearing parameters are treated as secret
// (docs/file-formats.md#encrypted-parameters).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// secretsRecordSchema identifies a secrets record file.
const secretsRecordSchema = "solopi.case-secrets/v1"

// Bases of a run's redaction (the payload's redaction.basis).
const (
	redactionImportRecord    = "import_record"
	redactionCaller          = "caller"
	redactionInputParameters = "input_parameters"
)

// secretsRecord says which parameters of one imported case are encrypted.
// It holds positions only: it is not a secret itself.
type secretsRecord struct {
	Schema          string              `json:"schema"`
	CaseName        string              `json:"caseName"`
	CaseID          int64               `json:"caseId"`
	CaseFingerprint string              `json:"caseFingerprint"`
	EncryptedParams []casefile.ParamRef `json:"encryptedParams"`
}

// SecretsStore keeps records in one directory (the user's cache,
// solopi/cases), one file per imported case version named by its
// fingerprint. The zero value stores nothing and finds nothing.
type SecretsStore struct {
	Dir string
	// Clock dates the records' use (nil: the system clock; file times
	// are wall-clock times).
	Clock clock.Clock
}

// DefaultSecretsStore is the store under os.UserCacheDir (XDG_CACHE_HOME
// on Linux); without a cache directory it is the zero store.
func DefaultSecretsStore() SecretsStore {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return SecretsStore{}
	}
	return SecretsStore{Dir: filepath.Join(dir, "solopi", "cases")}
}

func (s SecretsStore) path(fingerprint string) (string, bool) {
	if s.Dir == "" || !protocol.ValidHex(fingerprint, 64, false) {
		return "", false
	}
	return filepath.Join(s.Dir, fingerprint+".json"), true
}

// Save writes r atomically (directory 0700, file 0600) and returns its path.
func (s SecretsStore) Save(r secretsRecord) (string, error) {
	p, ok := s.path(r.CaseFingerprint)
	if !ok {
		return "", errors.New("no cache directory for the secrets record")
	}
	r.Schema = secretsRecordSchema
	if r.EncryptedParams == nil {
		r.EncryptedParams = []casefile.ParamRef{}
	}
	b, err := artifacts.MarshalIndent(r)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", s.Dir, err)
	}
	fr, err := artifacts.Output{Mode: artifacts.Replace, Perm: 0o600}.WriteFile(p, b)
	if err == nil {
		s.prune(clock.Or(s.Clock).Now())
	}
	return fr.Path, err
}

// secretsRecordMaxIdle is how long a record no run has used is kept: every
// import leaves one (each import is a new fingerprint), a run refreshes
// the one it uses.
const secretsRecordMaxIdle = 90 * 24 * time.Hour

// prune removes records not written or used for secretsRecordMaxIdle.
// Only files named like records are considered.
func (s SecretsStore) prune(now time.Time) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".json") || !protocol.ValidHex(strings.TrimSuffix(name, ".json"), 64, false) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > secretsRecordMaxIdle {
			os.Remove(filepath.Join(s.Dir, name))
		}
	}
}

// Load finds the record of the case name with fingerprint. A missing,
// unreadable or foreign file is no record.
func (s SecretsStore) Load(name, fingerprint string) (*secretsRecord, bool) {
	p, ok := s.path(fingerprint)
	if !ok {
		return nil, false
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4<<20 {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var r secretsRecord
	if json.Unmarshal(b, &r) != nil || r.Schema != secretsRecordSchema || r.CaseName != name || r.CaseFingerprint != fingerprint {
		return nil, false
	}
	now := clock.Or(s.Clock).Now()
	os.Chtimes(p, now, now) // in use: not pruned
	return &r, true
}

// redaction is how a run found its secrets.
type redaction struct {
	// Basis is import_record (the exact positions case-import recorded) or
	// input_parameters (no record: the input-bearing parameters).
	Basis string `json:"basis"`
	// Values is how many distinct secret values are hidden.
	Values int `json:"values"`
	r      *redact.Redactor
}

// Redactor is the redactor of the run (nil-safe).
func (r *redaction) Redactor() *redact.Redactor {
	if r == nil {
		return nil
	}
	return r.r
}

// caseRedaction builds the redaction of a case snapshot: the recorded
// positions when this host imported that exact version, else the
// input-bearing parameters.
func caseRedaction(store SecretsStore, known *[]casefile.ParamRef, ci *deviceCase) *redaction {
	basis, values := caseSecrets(store, known, ci)
	return &redaction{Basis: basis, Values: len(values), r: redact.New(withDeviceSpellings(values)...)}
}

// caseSecrets are the secret values of a case snapshot and how they were
// found (see caseRedaction).
func caseSecrets(store SecretsStore, known *[]casefile.ParamRef, ci *deviceCase) (string, []string) {
	basis, refs := redactionInputParameters, casefile.InputParams(ci.Case)
	if known != nil {
		basis, refs = redactionCaller, *known
	} else if rec, ok := store.Load(ci.Name, ci.Fingerprint); ok {
		basis, refs = redactionImportRecord, rec.EncryptedParams
	}
	return basis, casefile.ParamValues(ci.Case, refs)
}

// withDeviceSpellings adds to values how SoloPi's JSON writer spells each
// one inside a string (docs/device-protocol.md#json-on-the-wire), so that a
// value the device quotes in its own JSON files is found as it is written
// there. Short values are hidden only whole, so they need no spelling.
func withDeviceSpellings(values []string) []string {
	out := slices.Clone(values)
	var b bytes.Buffer
	for _, v := range values {
		if len(v) < redact.MinLen {
			continue
		}
		b.Reset()
		protocol.WriteJSONString(&b, v)
		if spelled := b.String()[1 : b.Len()-1]; spelled != v {
			out = append(out, spelled)
		}
	}
	return out
}

// recordSecrets leaves the record of a case just imported: n is the case
// as it was imported, caseID the receipt's id, refs its secret positions.
// The device's snapshot of that case gives the fingerprint a run will
// read; a snapshot of another case (a newer import of the same name) is
// refused.
func recordSecrets(ctx context.Context, d *device.Device, store SecretsStore, n *casefile.Case, caseID int64, refs []casefile.ParamRef) (string, error) {
	ci, err := GetCase(ctx, d, n.CaseName)
	if err != nil {
		return "", err
	}
	if ci.ID != caseID {
		return "", fmt.Errorf("the device's case %q is now id %d, not the imported %d", n.CaseName, ci.ID, caseID)
	}
	return store.Save(secretsRecord{CaseName: n.CaseName, CaseID: caseID, CaseFingerprint: ci.Fingerprint, EncryptedParams: refs})
}

// importSecrets are the secret positions of a case being imported: its
// encrypted parameters and, when the file is an export of a device case
// (case-get --output writes its caseFingerprint), those of the case it was
// exported from: its record on this computer, else the input-bearing
// parameters, as a run of that case redacts them. An export holds every
// value decrypted and says encrypt:false (SoloPi's read-back does), so a
// re-imported export keeps its secrets only this way.
func importSecrets(store SecretsStore, p *preparedImport) []casefile.ParamRef {
	refs := casefile.EncryptedParams(p.Case)
	fp := p.Source.CaseFingerprint
	if fp == "" {
		return refs
	}
	inherited := casefile.InputParams(p.Case)
	if rec, ok := store.Load(p.Source.CaseName, fp); ok {
		inherited = rec.EncryptedParams
	}
	have := map[casefile.ParamRef]bool{}
	for _, s := range p.Case.Steps {
		for k := range s.Method.Params {
			have[casefile.ParamRef{StepID: s.StepID, Key: k}] = true
		}
	}
	for _, r := range inherited {
		if have[r] && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}

// ImportRedaction is case-import's redaction: how many secret positions
// the record holds and where it is, or why it could not be written
// (fields in the alphabetical order of their JSON names).
type ImportRedaction struct {
	EncryptedParams int    `json:"encryptedParams"`
	Record          string `json:"record,omitempty"`
	RecordError     string `json:"recordError,omitempty"`
}

// RecordImportSecrets leaves the record of an imported case (ImportSecrets'
// positions, never values) for the runs of this case on this computer, and
// reports it as case-import prints it under redaction. A failure is
// reported, not fatal: the import itself succeeded.
func RecordImportSecrets(ctx context.Context, d *device.Device, store SecretsStore, p *preparedImport, receipt map[string]any) ImportRedaction {
	refs := importSecrets(store, p)
	out := ImportRedaction{EncryptedParams: len(refs)}
	id, _ := device.WireObject(receipt).Integer("caseId")
	path, err := recordSecrets(ctx, d, store, p.Case, id, refs)
	if err != nil {
		out.RecordError = err.Error()
		return out
	}
	out.Record = path
	return out
}

// RedactSnapshot hides the case's secrets in a replay snapshot that
// status, result or cancel prints: the device's messages quote decrypted
// values (a failing ASSERT's exceptionMessage). Only a snapshot carrying
// such text costs the case query; when the case cannot be read (deleted
// since) the snapshot is returned as it is.
func RedactSnapshot(ctx context.Context, d *device.Device, store SecretsStore, obj map[string]any) map[string]any {
	if !quotesText(obj) {
		return obj
	}
	ci, err := GetCase(ctx, d, device.WireObject(obj).Str("caseName"))
	if err != nil {
		return obj
	}
	red, _ := caseRedaction(store, nil, ci).Redactor().Value(obj).(map[string]any)
	return red
}

// quotesText reports a snapshot with device text that may quote a
// parameter: its error or a result's exceptionMessage.
func quotesText(obj map[string]any) bool {
	if device.WireObject(obj).Str("error") != "" {
		return true
	}
	list, _ := obj["results"].([]any)
	for _, x := range list {
		if r, ok := x.(map[string]any); ok && device.WireObject(r).Str("exceptionMessage") != "" {
			return true
		}
	}
	return false
}
