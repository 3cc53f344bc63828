package replay

// Local case files: reading a case, step or running-params file, and the
// output rules of the commands that write one. The error objects carry
// solopi-ai's fields (file, reason, line, column, source, output) beside
// ours (path, errorCode).

import (
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
)

// Error codes of the local case files.
const (
	// maxCaseFileBytes bounds every local case, step or params file.
	maxCaseFileBytes = 16 << 20
)

// readLocalInput reads a bounded local file (artifacts.Input); what names
// it in messages. A refusal names the file as solopi-ai does (file, and
// the cause as reason) beside ours (path).
func readLocalInput(path, what string) ([]byte, error) {
	b, err := artifacts.Input{What: what, Code: fault.CodeCaseFileUnreadable, Max: maxCaseFileBytes}.Read(path)
	if err != nil {
		e := fault.From(err).With("file", path)
		reason := e.Message
		if e.Err != nil {
			reason = e.Err.Error()
		}
		return nil, e.With("reason", reason)
	}
	return b, nil
}

// fileError maps a casefile error about the file at path to exit 3 with
// the file named as solopi-ai names it.
func fileError(err error, path string) error {
	e := CaseFileError(err)
	if e == nil {
		return err
	}
	return e.With("file", path)
}

// readCaseFile reads a case file the way every local case command does
// (casefile.Load: UTF-8, duplicate keys, one JSON document, the schema's
// shape, then the case itself).
func readCaseFile(path string) (*casefile.Case, error) {
	b, err := readLocalInput(path, "case file")
	if err != nil {
		return nil, err
	}
	c, err := casefile.Load(b)
	if err != nil {
		return nil, fileError(err, path)
	}
	return c, nil
}

// ReadStepFile reads the one step of case-step-add and case-step-update.
func ReadStepFile(path string) (casefile.Step, error) {
	b, err := readLocalInput(path, "step file")
	if err != nil {
		return casefile.Step{}, err
	}
	st, err := casefile.ParseStep(b)
	if err != nil {
		return casefile.Step{}, fileError(err, path)
	}
	return st, nil
}

// setRunningParamsFile is case-validate --running-params-file: c with the
// file's document as advanceSettings.runningParam.
func setRunningParamsFile(c *casefile.Case, path string) (*casefile.Case, error) {
	b, err := readLocalInput(path, "running params file")
	if err != nil {
		return nil, err
	}
	out, err := casefile.SetRunningParams(c, b)
	if err != nil {
		return nil, fileError(err, path)
	}
	return out, nil
}

// caseOutput is the policy of every file a case command writes: missing
// parent directories are created, as solopi-ai creates them; the mode
// (exclusive or replace) is the caller's.
func caseOutput(overwrite bool) artifacts.Output {
	return artifacts.Output{Mode: artifacts.ModeOf(overwrite), MakeParents: true}
}

// CheckCaseOutput enforces the output rules of local case writes before
// anything is read or sent: a different file from the source (also through
// links), then the output policy (not a symlink, absent unless overwrite).
func CheckCaseOutput(output, source string, overwrite bool) error {
	if output == "" {
		return fault.Usage(fault.CodeInvalidOutputPath, "--output must not be empty").With("output", output)
	}
	if source != "" {
		oa, err1 := filepath.Abs(output)
		sa, err2 := filepath.Abs(source)
		same := err1 == nil && err2 == nil && oa == sa
		if oi, err := os.Stat(output); err == nil && !same {
			if si, err := os.Stat(source); err == nil && os.SameFile(oi, si) {
				same = true
			}
		}
		if same {
			return fault.Usage(fault.CodeOutputIsSource, "--output must be another file than the source").With("output", oa).With("source", sa)
		}
	}
	_, err := caseOutput(overwrite).CheckFile(output)
	return outputError(err, output)
}

// writeCaseOutput publishes data at path under the case output policy
// (perm 0 is the default 0644; 0600 for a file holding secrets).
func writeCaseOutput(path string, data []byte, overwrite bool, perm os.FileMode) (artifacts.FileResult, error) {
	o := caseOutput(overwrite)
	o.Perm = perm
	fr, err := o.WriteFile(path, data)
	return fr, outputError(err, path)
}

// outputError adds solopi-ai's names of an output error's fields: file
// (the path as given) and reason (the cause).
func outputError(err error, path string) error {
	if err == nil {
		return nil
	}
	e := fault.From(err)
	e.With("file", path)
	if e.Err != nil {
		e.With("reason", e.Err.Error())
	}
	if _, ok := e.Details["output"]; !ok {
		e.With("output", path)
	}
	return e
}
