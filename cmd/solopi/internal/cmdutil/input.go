package cmdutil

import (
	"io"
	"os"

	"github.com/solopi-dev/solopi/fault"
)

// maxInputFile bounds a requirement, plan, matrix or decisions file read
// into memory.
const maxInputFile = 64 << 20

const codeFileUnreadable = "file_unreadable"

// ReadInput reads a user's input file of at most 64 MiB; what names it in
// errors ("plan", "--matrix").
func ReadInput(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, codeFileUnreadable, "cannot read the "+what+" file", err).With("file", path)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInputFile+1))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, codeFileUnreadable, "cannot read the "+what+" file", err).With("file", path)
	}
	if len(b) > maxInputFile {
		return nil, fault.Usagef(codeFileUnreadable, "the %s file is larger than 64 MiB", what).With("file", path)
	}
	return b, nil
}
