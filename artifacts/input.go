package artifacts

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
)

// The one reader of a user's input file (a requirement, a plan, a case,
// decisions, a CSV, a plugin archive, a token): a regular file, read whole
// up to a cap, refused with a clear error before anything else happens.

// maxInputBytes is an input file's default cap.
const maxInputBytes = 64 << 20

// Input says how one kind of input file is read and refused.
type Input struct {
	// What names the file in messages: "case file", "decisions file".
	What string
	// Code is the errorCode of every refusal when the input already has
	// one in its command's contract; without it each refusal has its own
	// (CodeInputUnreadable, CodeInputTooLarge, CodeInputNotRegular,
	// CodeInputInvalidUTF8). Either way the message says which it is.
	Code string
	// Field is the error detail that carries the path ("path" by default).
	Field string
	// Max is the size cap (MaxInputBytes by default).
	Max int64
	// UTF8 refuses bytes that are not UTF-8, for formats that are UTF-8 by
	// definition (JSON): a decoder would replace them without a word.
	UTF8 bool
	// NoSymlink refuses a symbolic link: what is read is the file named
	// (an archive pushed to a device). A file swapped between the check
	// and the open is refused either way.
	NoSymlink bool
}

// Read reads the file at path. Every refusal is an invalid-input error
// (exit 3) naming the path in Field.
func (in Input) Read(path string) ([]byte, error) {
	limit := in.Max
	if limit <= 0 {
		limit = maxInputBytes
	}
	// Stat before opening: opening a named pipe would wait for a writer.
	stat := os.Stat
	if in.NoSymlink {
		stat = os.Lstat
	}
	before, err := stat(path)
	if err != nil {
		return nil, in.fail(fault.CodeInputUnreadable, path, "cannot read the "+in.What, err)
	}
	if !before.Mode().IsRegular() {
		return nil, in.fail(fault.CodeInputNotRegular, path, "the "+in.What+" is not a regular file", nil)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, in.fail(fault.CodeInputUnreadable, path, "cannot read the "+in.What, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, in.fail(fault.CodeInputUnreadable, path, "cannot read the "+in.What, err)
	}
	if !os.SameFile(before, fi) {
		return nil, in.fail(fault.CodeInputNotRegular, path, "the "+in.What+" changed while it was opened", nil)
	}
	if fi.Size() > limit {
		return nil, in.tooLarge(path, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, in.fail(fault.CodeInputUnreadable, path, "cannot read the "+in.What, err)
	}
	if int64(len(b)) > limit {
		return nil, in.tooLarge(path, limit)
	}
	if in.UTF8 && !utf8.Valid(b) {
		off := invalidUTF8At(b)
		return nil, in.fail(fault.CodeInputInvalidUTF8, path, fmt.Sprintf("the %s is not UTF-8: invalid byte 0x%02X at offset %d (save it as UTF-8)", in.What, b[off], off), nil).
			With("offset", off)
	}
	return b, nil
}

func (in Input) tooLarge(path string, limit int64) *fault.Error {
	return in.fail(fault.CodeInputTooLarge, path, fmt.Sprintf("the %s is larger than %s", in.What, sizeText(limit)), nil).With("maximumBytes", limit)
}

// fail is a refusal of kind code (the input's own Code when it has one).
func (in Input) fail(code, path, msg string, cause error) *fault.Error {
	if in.Code != "" {
		code = in.Code
	}
	field := in.Field
	if field == "" {
		field = "path"
	}
	e := fault.Usage(code, msg).With(field, path)
	e.Err = cause
	return e
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// sizeText is a cap in words: "64 MiB", "4 KiB", "100 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
