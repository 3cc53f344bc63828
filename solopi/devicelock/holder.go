package devicelock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/redact"
)

// holderSchema identifies the record inside a lock file.
const holderSchema = "solopi.device-lock/v1"

// Holder is who holds a phone: written into the lock file by the holder,
// read by a process that finds the phone busy.
type Holder struct {
	Serial  string    `json:"serial"`
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// holderMax bounds what is read of a lock file.
const holderMax = 8 << 10

type holderFile struct {
	Schema string `json:"schema"`
	Holder
}

func writeHolder(f *os.File, h Holder) error {
	b, err := json.Marshal(holderFile{Schema: holderSchema, Holder: h})
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(b, '\n'), 0)
	return err
}

// readHolder reads the record of the process holding f's lock; nil when
// there is none yet (the holder has not written it) or it is not ours.
func readHolder(f *os.File) (*Holder, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, holderMax))
	if err != nil {
		return nil, err
	}
	return parseHolder(b)
}

// parseHolder reads a lock file's record; the file is written by another
// process and may be empty, half written or not ours.
func parseHolder(b []byte) (*Holder, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("the lock file holds no record")
	}
	if len(b) > holderMax {
		return nil, errors.New("the lock file record is too large")
	}
	var h holderFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the lock file record")
	}
	if h.Schema != holderSchema || h.PID <= 0 || !utf8.ValidString(h.Command) || !utf8.ValidString(h.Serial) {
		return nil, errors.New("the lock file record is not solopi's")
	}
	return &h.Holder, nil
}

// commandMax bounds the command line kept in a lock file.
const commandMax = 512

// secretWords mark a flag whose value must not be written: the command
// line is shown to other users of the host in a device_busy error.
var secretWords = []string{"token", "key", "secret", "password", "passwd", "auth", "credential", "cookie"}

func secretFlag(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// commandLine renders args for the holder record: the program's base name
// and its arguments, the value of every flag whose name looks secret
// (token, key, password, ...) replaced by redact.Marker, control
// characters dropped, cut to 512 bytes.
func commandLine(args []string) string {
	if len(args) == 0 {
		return ""
	}
	out := []string{filepath.Base(args[0])}
	hideNext := false
	for _, a := range args[1:] {
		switch {
		case hideNext && !strings.HasPrefix(a, "-"):
			a = redact.Marker
			hideNext = false
		case strings.HasPrefix(a, "-"):
			hideNext = false
			if name, _, found := strings.Cut(a, "="); found && secretFlag(name) {
				a = name + "=" + redact.Marker
			} else if !found && secretFlag(a) {
				hideNext = true
			}
		default:
			hideNext = false
		}
		out = append(out, a)
	}
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(strings.Join(out, " "), "\uFFFD"))
	if len(s) > commandMax {
		cut := commandMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// fileName is the lock file of serial: the serial with every byte outside
// [A-Za-z0-9._-] replaced by '_' (cut to 64 bytes), then the first 12 hex
// digits of its SHA-256, so that two serials never share a file and no
// serial ("..", "a/b", "host:5555") leaves the lock directory.
func fileName(serial string) string {
	var b strings.Builder
	for i := 0; i < len(serial) && b.Len() < 64; i++ {
		c := serial[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(serial))
	return "device-" + b.String() + "-" + hex.EncodeToString(sum[:6]) + ".lock"
}
