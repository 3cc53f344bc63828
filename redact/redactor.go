package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MinLen is the shortest secret (in bytes) that is hidden inside longer
// text. A shorter one would match all over unrelated text (a one-digit
// value would take every digit out of every timestamp), destroying the
// evidence to hide a value that is guessable anyway. It is still hidden
// wherever it is a whole value: a JSON string equal to it.
const MinLen = 4

// Redactor hides secrets. Text replaces, with Marker, every known secret
// (in its plain and JSON-escaped spellings, longest first), every bearer
// credential and every verification owner token; Value also drops the
// values of sensitive keys from a JSON tree. A nil *Redactor knows no
// secret but still applies the fixed rules.
type Redactor struct {
	secrets  []string
	whole    map[string]bool   // every secret, for whole-value matches
	replacer *strings.Replacer // secrets of MinLen bytes or more, longest first
}

// New returns a redactor of secrets (empty ones are ignored). Each is also
// looked for as encoding/json spells it inside a JSON string, with and
// without HTML escaping; a caller whose text comes from another JSON
// writer adds that spelling as one more secret.
func New(secrets ...string) *Redactor {
	r := &Redactor{whole: map[string]bool{}}
	var long []string
	for _, s := range secrets {
		if s == "" || r.whole[s] {
			continue
		}
		r.secrets = append(r.secrets, s)
		r.whole[s] = true
		if len(s) >= MinLen {
			long = append(long, s, jsonSpelling(s, true), jsonSpelling(s, false))
		}
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
			pairs = append(pairs, s, Marker)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// With returns a redactor of r's secrets and these.
func (r *Redactor) With(secrets ...string) *Redactor {
	if r == nil {
		return New(secrets...)
	}
	return New(append(slices.Clone(r.secrets), secrets...)...)
}

// jsonSpelling is s inside a JSON string as encoding/json writes it.
func jsonSpelling(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s)
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// The fixed rules compile on first use, not at every process start.
var (
	ownerTokenPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`verification-[0-9a-f]{32}`) })
	bearerPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._~+/-]+=*`) })
)

// Text returns s with every secret hidden. s equal to a secret of any
// length becomes Marker.
func (r *Redactor) Text(s string) string {
	if r != nil {
		if r.whole[s] {
			return Marker
		}
		if r.replacer != nil {
			s = r.replacer.Replace(s)
		}
	}
	if strings.Contains(s, "verification-") {
		s = ownerTokenPattern().ReplaceAllString(s, Marker)
	}
	if containsFold(s, "bearer") {
		s = bearerPattern().ReplaceAllString(s, "Bearer "+Marker)
	}
	return s
}

// containsFold reports whether s contains the lowercase ASCII word w in any
// case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// Value returns a copy of a decoded JSON tree with every secret hidden
// (see Walk).
func (r *Redactor) Value(v any) any { return Walk(v, r.Text) }

// sensitiveKeys name values that are dropped wherever they appear in a
// tree, compared lowercased without '_' and '-'.
var sensitiveKeys = map[string]bool{
	"ownertoken": true, "ownertokenhash": true, "authorization": true, "cookie": true,
	"password": true, "apikey": true, "apisecret": true, "clientsecret": true,
}

func sensitive(key string) bool {
	k := strings.ToLower(key)
	if strings.ContainsAny(k, "_-") {
		k = strings.NewReplacer("_", "", "-", "").Replace(k)
	}
	return sensitiveKeys[k]
}

// Walk returns a copy of the decoded JSON tree v (maps, slices, strings,
// numbers) in which every string has passed through text and every
// sensitive key (an owner token, a password, an API key, an authorization
// or cookie header) is gone. Other keys are kept as they are: they are
// names, not data.
func Walk(v any, text func(string) string) any {
	switch x := v.(type) {
	case string:
		return text(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !sensitive(k) {
				out[k] = Walk(e, text)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Walk(e, text)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = text(e)
		}
		return out
	}
	return v
}
