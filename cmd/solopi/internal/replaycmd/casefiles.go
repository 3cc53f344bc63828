package replaycmd

// Local case files: reading and checking a case or step file, and the
// output rules of the commands that write one.

import (
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// Error codes of the local case commands.
const (
	codeCaseFileUnreadable = "case_file_unreadable"
	CodeSchemaViolation    = "case_schema_violation"
	CodeOutputIsSource     = "output_is_source"
	codeStagingCleanup     = "staging_cleanup_failed"
	maxCaseFileBytes       = 16 << 20
)

// caseFileFlag binds --file, the case file a command reads.
func caseFileFlag(into *string) cli.Flag {
	return &cli.StringFlag{Name: "file", Destination: into, Usage: "SoloPi case JSON (exported or authoring form)", Required: true}
}

// confirmFlag binds --confirm-high-risk.
func confirmFlag(into *bool) cli.Flag {
	return &cli.BoolFlag{Name: "confirm-high-risk", Destination: into, Usage: "accept CLEAR_DATA, KILL_PROCESS and JUMP_TO_PAGE steps"}
}

// replacedOutputFlags bind --output and --overwrite of case-get,
// case-template and case-validate, which write where solopi-ai writes: an
// existing file is replaced (atomically, never through a symlink);
// --overwrite is accepted and changes nothing.
func replacedOutputFlags(output *string, overwrite *bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Destination: output, Usage: "write the case to this file (an existing file is replaced atomically; a symlink is refused)"},
		&cli.BoolFlag{Name: "overwrite", Destination: overwrite, Usage: "accepted for compatibility: an existing --output file is always replaced"},
	}
}

// caseFileError maps a casefile error to exit 3 with its stable code.
func caseFileError(err error) error {
	if e := replay.CaseFileError(err); e != nil {
		return e
	}
	return err
}

// readLocalInput reads a case file (at most 16 MiB).
func readLocalInput(path, what string) ([]byte, error) {
	return artifacts.Input{What: what, Code: codeCaseFileUnreadable, Max: maxCaseFileBytes}.Read(path)
}

// readCaseFile reads, schema-checks and parses a case file.
func readCaseFile(path string) (*casefile.Case, error) {
	b, err := readLocalInput(path, "case file")
	if err != nil {
		return nil, err
	}
	// Undecodable bytes and duplicate keys first: a decoder would silently
	// change what such a file means before the shape check sees it.
	if err := casefile.CheckJSON(b); err != nil {
		return nil, caseFileError(err)
	}
	if err := checkCaseSchema(b); err != nil {
		return nil, err
	}
	c, err := casefile.Parse(b)
	if err != nil {
		return nil, caseFileError(err)
	}
	return c, nil
}

// checkCaseSchema checks a case document against the shape rules of
// casefile's case schema (operationLog strings included) and reports up to
// 20 violations with their JSON pointers.
func checkCaseSchema(doc []byte) error {
	v, err := canonjson.Decode(doc)
	if err != nil {
		return fault.Wrap(fault.Invalid, casefile.CodeInvalidCaseJSON, "the case file is not JSON", err)
	}
	violations := casefile.CheckShape(v)
	if len(violations) == 0 {
		return nil
	}
	return fault.Usage(CodeSchemaViolation, "the case file does not match the SoloPi case schema").
		With("violations", violations[:min(len(violations), 20)])
}

func readStepFile(path string) (casefile.Step, error) {
	b, err := readLocalInput(path, "step file")
	if err != nil {
		return casefile.Step{}, err
	}
	st, err := casefile.ParseStep(b)
	if err != nil {
		return casefile.Step{}, caseFileError(err)
	}
	return st, nil
}

// checkCaseOutput enforces the output rules of local case writes: a
// different file from the source (also through links), then the output
// policy (not a symlink, absent unless overwrite, an existing directory).
func checkCaseOutput(output, source string, overwrite bool) error {
	if output == "" {
		return fault.Usage(artifacts.CodeInvalidOutput, "--output must not be empty")
	}
	if source != "" {
		oa, err1 := filepath.Abs(output)
		sa, err2 := filepath.Abs(source)
		if err1 == nil && err2 == nil && oa == sa {
			return fault.Usage(CodeOutputIsSource, "--output must differ from the source file").With("output", output)
		}
		if oi, err := os.Stat(output); err == nil {
			if si, err := os.Stat(source); err == nil && os.SameFile(oi, si) {
				return fault.Usage(CodeOutputIsSource, "--output is the source file under another name").With("output", output)
			}
		}
	}
	_, err := caseOutput(overwrite).CheckFile(output)
	return err
}

// caseOutput is the policy of case-get, case-template and case-validate
// --output files.
func caseOutput(overwrite bool) artifacts.Output {
	return artifacts.Output{Mode: artifacts.ModeOf(overwrite)}
}

// writeCaseOutput publishes data at path under the case output policy.
func writeCaseOutput(path string, data []byte, overwrite bool) (string, error) {
	fr, err := caseOutput(overwrite).WriteFile(path, data)
	return fr.Path, err
}

// decodeCaseJSON turns bytes into a generic value for output (integers exact).
func decodeCaseJSON(b []byte) any {
	v, _ := canonjson.Decode(b)
	return v
}
