package replaycmd

// The flags of the case commands; reading the files they name and
// writing the files they write is replay's (casefiles.go, localcases.go).

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/replay"
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

// emitCase prints a case-get, case-template or case-validate result: with
// its case, or, written to output, without.
func emitCase(l *replay.LocalOutput, output string) (cmdutil.Result, error) {
	m, err := l.Emit(output)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(m), nil
}
