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

// ParamRef names one step parameter of a case: the step by its stepId,
// the parameter by its key. A list of them says where a case's secrets are
// without holding any.
type ParamRef struct {
	StepID string `json:"stepId"`
	Key    string `json:"key"`
}

// EncryptedParams lists the parameters SoloPi keeps encrypted in c, a case
// in the form it is imported (after Normalize): every parameter of a step
// that does not say "encrypt": false, in step order, keys sorted. Their
// values are secrets the replay may echo back (an ASSERT failure quotes its
// expected text, running.log repeats it). Only the imported form carries
// the flags: the device's case snapshot (harness?type=case) decrypts every
// value and sets every flag false (docs/file-formats.md#encrypted-parameters).
func EncryptedParams(c *Case) []ParamRef {
	return paramRefs(c, func(s Step, _ string) bool { return s.Method.EncryptedOnDevice() })
}

// inputParams are the parameters that carry data entered into, or compared
// with, the app under test, by action: the text typed by the input actions,
// the expected content of the assertions and the value a variable is set
// to. Those are where credentials and personal data go. The others are
// control values (durations, counts, scroll distances, modes, screenshot
// names, gestures, conditions) that say how to replay, not what to type.
var inputParams = map[string][]string{
	"INPUT": {"text"}, "CLICK_AND_INPUT": {"text"}, "INPUT_SEARCH": {"text"},
	"KEYBOARD_INPUT": {"text"}, "INPUT_GLOBAL": {"text"},
	"ASSERT": {"assertInputContent"}, "ASSERT_TOAST": {"assertInputContent"},
	"LET": {"allocValue"}, "LET_NODE": {"allocValue"},
}

// InputParams lists the input-bearing parameters of c (see inputParams):
// what is treated as secret in a case whose encrypted parameters are not
// known, such as the device's decrypted snapshot of a case this host did
// not import.
func InputParams(c *Case) []ParamRef {
	return paramRefs(c, func(s Step, key string) bool {
		return slices.Contains(inputParams[strings.ToUpper(s.Method.ActionEnum)], key)
	})
}

func paramRefs(c *Case, pick func(Step, string) bool) []ParamRef {
	out := []ParamRef{}
	for _, s := range c.Steps {
		keys := make([]string, 0, len(s.Method.Params))
		for k := range s.Method.Params {
			if pick(s, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, ParamRef{StepID: s.StepID, Key: k})
		}
	}
	return out
}

// ParamValues returns the values of c's parameters at refs: the secrets
// to hide when c is the device's decrypted snapshot. Steps are matched by
// stepId; the list is deduplicated and sorted, empty values left out.
func ParamValues(c *Case, refs []ParamRef) []string {
	want := map[ParamRef]bool{}
	for _, r := range refs {
		want[r] = true
	}
	seen := map[string]bool{}
	out := []string{}
	for _, s := range c.Steps {
		for k, v := range s.Method.Params {
			if v == nil || *v == "" || seen[*v] || !want[ParamRef{StepID: s.StepID, Key: k}] {
				continue
			}
			seen[*v] = true
			out = append(out, *v)
		}
	}
	slices.Sort(out)
	return out
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
