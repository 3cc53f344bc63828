package devicelock

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseHolder: a lock file is written by another process; whatever it
// holds, reading it never panics and yields a well-formed holder or none.
func FuzzParseHolder(f *testing.F) {
	f.Add([]byte(`{"schema":"solopi.device-lock/v1","serial":"sim-0001","pid":42,"command":"solopi run","since":"2025-01-02T03:04:05Z"}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"schema":"solopi.device-lock/v1","pid":-1}`))
	f.Add([]byte(`{"schema":"solopi.device-lock/v1","pid":1}{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHolder(b)
		if err != nil {
			if h != nil {
				t.Fatal("a holder with an error")
			}
			return
		}
		if h.PID <= 0 || !utf8.ValidString(h.Command) || !utf8.ValidString(h.Serial) {
			t.Fatalf("bad holder accepted: %+v", h)
		}
	})
}
