package casefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
)

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

// MinSecretLen is the shortest secret (in bytes) that is redacted inside
// longer text. A shorter one would match all over unrelated text (a one-digit
// value would take every digit out of every timestamp and message), which
// destroys the evidence while hiding a value that is guessable anyway. It is
// still redacted wherever it is a whole value: a JSON string or a case
// parameter equal to it.
const MinSecretLen = 4

// EncryptedParamPlaintexts returns the values of c's encrypted step
// parameters as the device will use them: decrypted with seed (the device's
// KEY_AES_KEY, DefaultSeed unless the user changed it), or as stored when a
// value does not decrypt, which is what SoloPi then uses
// (docs/file-formats.md#encrypted-parameters). A step is encrypted unless it
// says "encrypt": false. These are the values a replay may echo back (an
// ASSERT failure quotes the expected text, running.log repeats it), so they
// are what a Redactor must hide. The list is deduplicated, empty values
// left out.
//
// Only a case in its stored form carries the flags: the device's case
// snapshot (harness?type=case) decrypts every value and sets every flag
// false, so it yields nothing here.
func EncryptedParamPlaintexts(c *Case, seed string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range c.Steps {
		if !s.Method.EncryptedOnDevice() {
			continue
		}
		for _, v := range s.Method.Params {
			if v == nil {
				continue
			}
			plain := DecryptOrRaw(seed, *v)
			if plain != "" && !seen[plain] {
				seen[plain] = true
				out = append(out, plain)
			}
		}
	}
	slices.Sort(out)
	return out
}

// RedactEncryptedParams returns a copy of c in which every value of an
// encrypted step parameter is Redacted (case-get without --show-secrets),
// and how many values it replaced. c is not modified.
func RedactEncryptedParams(c *Case) (*Case, int) {
	out := c.Clone()
	n := 0
	for i := range out.Steps {
		m := &out.Steps[i].Method
		if !m.EncryptedOnDevice() {
			continue
		}
		for k, v := range m.Params {
			if v != nil {
				m.Params[k] = Str(Redacted)
				n++
			}
		}
	}
	return out, n
}

// Redactor hides known secrets in text and JSON. The zero value and a nil
// *Redactor hide nothing, so callers need no special case.
type Redactor struct {
	whole    map[string]bool   // every secret, for whole-value matches
	replacer *strings.Replacer // secrets of MinSecretLen bytes or more, longest first
}

// NewRedactor builds a Redactor for secrets (empty ones are ignored). Each
// secret is also looked for in its JSON-escaped spellings, so it is found in
// logs and messages that print JSON.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{whole: map[string]bool{}}
	var long []string
	for _, s := range secrets {
		if s == "" || r.whole[s] {
			continue
		}
		r.whole[s] = true
		if len(s) < MinSecretLen {
			continue
		}
		long = append(long, s, jsonEscaped(s), goJSONEscaped(s))
	}
	// Longest first: strings.Replacer tries the old strings in argument
	// order at each position, so a secret that contains another one is
	// replaced whole.
	slices.Sort(long)
	long = slices.Compact(long)
	slices.SortStableFunc(long, func(a, b string) int { return len(b) - len(a) })
	if len(long) > 0 {
		pairs := make([]string, 0, 2*len(long))
		for _, s := range long {
			pairs = append(pairs, s, Redacted)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// jsonEscaped is s inside a JSON string as SoloPi (fastjson) writes it.
func jsonEscaped(s string) string {
	var b bytes.Buffer
	protocol.WriteJSONString(&b, s)
	return b.String()[1 : b.Len()-1]
}

// goJSONEscaped is s inside a JSON string as encoding/json writes it (it
// also escapes <, > and &).
func goJSONEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// Empty reports whether r hides nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.whole) == 0 }

// Redact returns s with every secret of at least MinSecretLen bytes
// replaced by Redacted, longest first; s equal to any secret becomes
// Redacted.
func (r *Redactor) Redact(s string) string {
	if r.Empty() {
		return s
	}
	if r.whole[s] {
		return Redacted
	}
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// RedactValue returns a copy of a decoded JSON tree (maps, slices,
// strings, numbers, ...) with every string value passed through Redact.
// Object keys are kept: they are names, not data.
func (r *Redactor) RedactValue(v any) any {
	if r.Empty() {
		return v
	}
	switch x := v.(type) {
	case string:
		return r.Redact(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.RedactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.RedactValue(e)
		}
		return out
	}
	return v
}

// ErrNotJSON is returned by RedactJSON for a document that is not JSON.
var ErrNotJSON = errors.New("casefile: cannot redact: not a JSON document")

// RedactJSON passes every string value of a JSON document through Redact
// and keeps everything else byte for byte (key order, spacing, numbers), so
// a redacted result.json differs from the original only inside strings.
func (r *Redactor) RedactJSON(data []byte) ([]byte, error) {
	if !json.Valid(data) {
		return nil, ErrNotJSON
	}
	if r.Empty() {
		return bytes.Clone(data), nil
	}
	var out bytes.Buffer
	out.Grow(len(data))
	for i := 0; i < len(data); {
		if data[i] != '"' {
			out.WriteByte(data[i])
			i++
			continue
		}
		end := i + 1
		for data[end] != '"' {
			if data[end] == '\\' {
				end++
			}
			end++
		}
		end++ // past the closing quote
		lit := data[i:end]
		i = end
		if isKey(data[end:]) {
			out.Write(lit)
			continue
		}
		var s string
		if err := json.Unmarshal(lit, &s); err != nil {
			return nil, ErrNotJSON
		}
		if red := r.Redact(s); red != s {
			protocol.WriteJSONString(&out, red)
		} else {
			out.Write(lit)
		}
	}
	return out.Bytes(), nil
}

// isKey reports whether the string literal just read is an object key: the
// next non-space byte is a colon.
func isKey(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}
