package verify

import (
	"errors"

	"github.com/solopi-dev/solopi/casefile"
)

// CodeInvalidUTF8 refuses a requirement or plan that is not UTF-8 or holds
// a \u escape of a lone UTF-16 surrogate, as case files are refused.

// CheckEncoding refuses what a JSON decoder would accept and silently turn
// into U+FFFD: bytes that are not UTF-8 (a file saved in another
// encoding) and \u escapes of lone UTF-16 surrogates ("\ud800", which is
// no character). Both would otherwise compile, fingerprint and run text
// nobody wrote; solopi-ai fails on them with a traceback. The check is
// case-import's (casefile.CheckEncoding) without its duplicate-key rule:
// requirements keep Python's reading of a repeated key. The error has
// code (CodeInvalidUTF8, or the caller's own), the byte offset and the JSON
// path; what names the document in the message.
func CheckEncoding(data []byte, what, code string) error {
	var ce *casefile.Error
	if err := casefile.CheckEncoding(data); errors.As(err, &ce) {
		return invalid(code, "the "+what+" is refused: "+ce.Message, "offset", ce.Details["offset"], "jsonPath", ce.Details["jsonPath"])
	}
	return nil
}
