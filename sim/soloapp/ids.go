package soloapp

import (
	"crypto/rand"
	"fmt"
	"regexp"
)

// newUUID returns a random (version 4) UUID in its canonical text form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// requestIDPattern is the device's rule for replay requestIds
// (docs/device-protocol.md#identifiers).
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// fingerprintPattern is a lowercase SHA-256 hex digest.
var fingerprintPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
