package replaycmd

import (
	"context"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/solopi/suite"
)

// runCaseFile is `run --file CASE.json`: the file read and normalised
// before the device is touched, then made present on the device in that
// version, and the run bound to it.
func runCaseFile(ctx context.Context, d cmdutil.DeviceDeps, o replay.RunOptions, v *runFlagValues, s *suiteFlagValues) (cmdutil.Result, error) {
	items, err := s.items(nil, v.confirm)
	if err != nil {
		return cmdutil.Result{}, err
	}
	it := items[0]
	want, err := casefile.ContentFingerprint(it.Case, paramcrypt.DefaultSeed)
	if err != nil {
		if e := replay.CaseFileError(err); e != nil {
			return cmdutil.Result{}, e.With("file", it.File)
		}
		return cmdutil.Result{}, fault.Wrap(fault.Invalid, fault.CodeInvalidCase, err.Error(), err).With("file", it.File)
	}
	o.CaseName = it.Name
	enc := casefile.EncryptedParams(it.Case)
	o.Encrypted = &enc
	return runOne(ctx, d, o, v.junit, func(dev *device.Device) (string, *caseFileBinding, error) {
		return bindCaseFile(ctx, dev, it, want, s)
	})
}

// caseFileBinding is the run's "caseFile" object: the file, and what was
// done to make the device hold its case.
type caseFileBinding struct {
	Action string `json:"action"`
	// Cleanup is the import's cleanup of its staged file, as ImportCase
	// reports it; only when the file was imported.
	Cleanup            any    `json:"cleanup,omitempty"`
	ContentFingerprint string `json:"contentFingerprint"`
	ImportRequestID    string `json:"importRequestId,omitempty"`
	Path               string `json:"path"`
}

// bindCaseFile makes the device hold the file's case and returns the
// caseFingerprint to bind the run to, with what was done: bound (the
// device held that version), imported (it held none), reimported
// (--reimport) or replaced (--replace over a different case). A different
// case under the name without --replace is case_name_conflict; nothing
// was changed.
func bindCaseFile(ctx context.Context, d *device.Device, it suite.Item, want string, s *suiteFlagValues) (string, *caseFileBinding, error) {
	info := &caseFileBinding{Path: it.File, ContentFingerprint: want}
	dc, err := replay.GetCase(ctx, d, it.Name)
	replace := false
	switch {
	case fault.CodeOf(err) == protocol.ErrCaseNotFound:
		info.Action = "imported"
	case err != nil:
		return "", nil, err
	default:
		have, err := casefile.ContentFingerprint(dc.Case, paramcrypt.DefaultSeed)
		if err != nil {
			return "", nil, fault.Wrap(fault.Transport, fault.CodeCaseSnapshotUnbound, "the device's case cannot be fingerprinted", err).With("caseName", it.Name)
		}
		switch {
		case have == want && !s.reimport:
			info.Action = "bound"
			return dc.Fingerprint, info, nil
		case have != want && !s.replace:
			return "", nil, fault.Newf(fault.Failed, fault.CodeCaseNameConflict, "the device holds another case named %q than the file %s", it.Name, it.File).
				With("caseName", it.Name).With("file", it.File).With("deviceCaseFingerprint", dc.Fingerprint).
				With("phoneContentFingerprint", have).With("fileContentFingerprint", want).
				WithUserAction("Rename the case in the file, delete the device's case (case-delete), or pass --replace to import the file over it.")
		case have == want:
			info.Action = "reimported"
		default:
			info.Action = "replaced"
		}
		replace = true
	}
	rep, err := replay.ImportCase(ctx, d, it.Case, replay.ImportOptions{Replace: replace, Timeout: s.importTimeout})
	if err != nil {
		e := fault.From(err).With("caseName", it.Name).With("file", it.File)
		if rep != nil {
			e.With("requestId", rep.RequestID).With("cleanup", rep.Cleanup)
		}
		return "", nil, e
	}
	info.ImportRequestID, info.Cleanup = rep.RequestID, rep.Cleanup
	dc, err = replay.GetCase(ctx, d, it.Name)
	if err != nil {
		return "", nil, err
	}
	if have, err := casefile.ContentFingerprint(dc.Case, paramcrypt.DefaultSeed); err != nil || have != want {
		return "", nil, fault.Newf(fault.Transport, fault.CodeCaseChanged, "the device's case %q is not the imported file after the import", it.Name).
			With("caseName", it.Name).With("deviceCaseFingerprint", dc.Fingerprint)
	}
	return dc.Fingerprint, info, nil
}
