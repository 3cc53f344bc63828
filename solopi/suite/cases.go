package suite

import (
	"context"
	"fmt"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// binding is what one phone holds of one item.
type binding struct {
	// absent: the phone holds no case of that name (a case named only:
	// this phone cannot run it).
	absent bool
	// fingerprint is the device's caseFingerprint runs are bound to; ""
	// until the phone holds the right version (a case file to import).
	fingerprint string
	// content is the content fingerprint of the phone's version.
	content string
	// replace: the import must replace the phone's case of that name.
	replace bool
	// conflict: the phone holds another case under the name (found
	// mid-suite; the phone does not run the item).
	conflict bool
	// stale: the phone no longer honoured the binding (case_changed); the
	// next attempt there checks the case again.
	stale bool
}

// check reads the phone's case of item i and decides what its runs need:
// a case file the phone holds with the same content is bound to it (unless
// Reimport); one it lacks, or holds differently with Replace, is imported
// at its first attempt there; a different case under the name without
// Replace is a case_name_conflict.
func (r *runner) check(ctx context.Context, p *phone, i int) error {
	it := r.o.Items[i]
	b := &p.cases[i]
	*b = binding{}
	dc, err := replay.GetCase(ctx, p.d, it.Name)
	switch {
	case isNotFound(err):
		b.absent = it.Case == nil
		return nil
	case err != nil:
		return err
	}
	content, err := casefile.ContentFingerprint(dc.Case, r.seed)
	if err != nil {
		return fault.Wrap(fault.Transport, fault.CodeCaseSnapshotUnbound, "the phone's case cannot be fingerprinted", err).With("caseName", it.Name)
	}
	b.content = content
	switch {
	case it.Case == nil:
		b.fingerprint = dc.Fingerprint
	case content != r.fps[i] && !r.o.Replace:
		b.conflict = true
		return fault.Newf(fault.Failed, fault.CodeCaseNameConflict, "the phone %s holds another case named %q than the file %s", p.serial, it.Name, it.File).
			With("serial", p.serial).With("caseName", it.Name).With("file", it.File).
			With("deviceCaseFingerprint", dc.Fingerprint).With("phoneContentFingerprint", content).With("fileContentFingerprint", r.fps[i]).
			WithUserAction("Rename the case in the file, delete the phone's case (case-delete), or pass --replace to import the file over it.")
	case content != r.fps[i] || r.o.Reimport:
		b.replace = true
	default:
		b.fingerprint = dc.Fingerprint
	}
	return nil
}

// ensure makes the phone hold item i's version and returns the
// caseFingerprint to bind the run to: a case file is imported when its
// binding says so, and read back to check the phone now holds its
// content. A binding lost mid-suite (the case changed on the phone) is
// checked again first.
func (r *runner) ensure(ctx context.Context, p *phone, i int) (string, error) {
	b := &p.cases[i]
	if b.stale {
		if err := r.check(ctx, p, i); err != nil {
			return "", err
		}
	}
	if b.fingerprint != "" {
		return b.fingerprint, nil
	}
	it := r.o.Items[i]
	if it.Case == nil {
		return "", fault.Newf(fault.Failed, protocol.ErrCaseNotFound, "the phone holds no case named %q", it.Name)
	}
	r.progress(Event{Serial: p.serial, Case: it.Name, Phase: "import", Message: it.File})
	imp := r.o.Import
	imp.Replace = b.replace || !b.absent
	rep, err := replay.ImportCase(ctx, p.d, it.Case, imp)
	if err != nil {
		e := fault.From(err).With("caseName", it.Name)
		if rep != nil {
			e.With("requestId", rep.RequestID)
		}
		return "", e
	}
	dc, err := replay.GetCase(ctx, p.d, it.Name)
	if err != nil {
		return "", err
	}
	content, err := casefile.ContentFingerprint(dc.Case, r.seed)
	if err != nil || content != r.fps[i] {
		return "", fault.New(fault.Transport, fault.CodeCaseChanged, fmt.Sprintf("the phone's case %q is not the imported file after the import", it.Name)).
			With("caseName", it.Name).With("deviceCaseFingerprint", dc.Fingerprint)
	}
	*b = binding{fingerprint: dc.Fingerprint, content: content}
	return b.fingerprint, nil
}

// forget drops a binding the phone no longer honours (case_changed): the
// next attempt there checks the case again.
func (p *phone) forget(i int) {
	p.cases[i] = binding{stale: true}
}

// runs reports whether the phone may run item i: it holds a case named
// only, and no other case under a case file's name.
func (b binding) runs() bool { return !b.absent && !b.conflict }
