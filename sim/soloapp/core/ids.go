package core

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
)

// NewUUID returns a random (version 4) UUID in its canonical text form.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ValidImportFileName is the app's rule for files in its import
// directory: an identifier of up to 127 characters followed by ".zip".
func ValidImportFileName(name string) bool {
	base, ok := strings.CutSuffix(name, ".zip")
	return ok && protocol.ValidID(base, 127)
}
