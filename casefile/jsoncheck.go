package casefile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// CheckJSON refuses what a JSON decoder would accept and silently change,
// so that a case file means exactly one thing:
//
//   - bytes that are not UTF-8 (a decoder replaces them with U+FFFD, so a
//     Latin-1 or GBK file would import with its text destroyed):
//     invalid_utf8, with the byte offset;
//   - a \u escape of a lone UTF-16 surrogate (not a character; it also
//     becomes U+FFFD): invalid_utf8, with the byte offset and the JSON path;
//   - an object key given twice at any depth (a decoder keeps one of the
//     values without a word, and which one differs between Go, Python and
//     SoloPi's fastjson): duplicate_key, with the key and its JSON path.
//
// Syntax errors are left to the decoder that reads the document; CheckJSON
// reports nothing for them. Parse, ParseStep and SetRunningParams call it on
// their input and on the JSON documents that cases carry as strings
// (operationLog, advanceSettings); callers that look at a case file before
// parsing it (a schema check) call it first, so these errors win.
func CheckJSON(data []byte) error { return checkJSON(data, "$") }

// checkJSON is CheckJSON for a document found at JSON path doc.
func checkJSON(data []byte, doc string) error { return check(&jsonScanner{data: data, doc: doc}) }

// check runs the scanner over its document.
func check(sc *jsonScanner) error {
	data, doc := sc.data, sc.doc
	if off, ok := firstInvalidUTF8(data); ok {
		return newError(fault.CodeInvalidUTF8, "%s is not UTF-8: invalid byte 0x%02X at offset %d (save it as UTF-8)", docName(doc), data[off], off).
			with("offset", off).with("jsonPath", doc)
	}
	sc.space()
	if err := sc.value(0); err != nil && err != errSyntax {
		return err
	}
	return nil
}

func docName(doc string) string {
	if doc == "$" {
		return "the JSON document"
	}
	return doc
}

func firstInvalidUTF8(data []byte) (int, bool) {
	if utf8.Valid(data) {
		return 0, false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, true
		}
		i += size
	}
	return 0, false
}

// errSyntax stops the scan at the first thing that is not JSON; the decoder
// that reads the document reports it.
var errSyntax = errors.New("casefile: not JSON")

// maxDepth is encoding/json's nesting limit; deeper documents are syntax
// errors there, so the scan need not go further.
const maxDepth = 10000

// jsonScanner walks a document once, without building it: a token decoder
// allocates for every token and made the check cost more than the parse.
// Paths are kept as a stack of steps and only rendered for an error.
type jsonScanner struct {
	data []byte
	pos  int
	doc  string
	path []pathStep
	// duplicatesAllowed skips the duplicate-key rule (CheckEncoding).
	duplicatesAllowed bool
}

// pathStep is one step of a JSON path: an object member (its raw key text)
// or an array index.
type pathStep struct {
	key     []byte
	escaped bool
	index   int
	isIndex bool
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jsonScanner) value(depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	switch s.peek() {
	case '{':
		return s.object(depth)
	case '[':
		return s.array(depth)
	case '"':
		_, _, err := s.str()
		return err
	case 0:
		return errSyntax
	}
	// A number or a literal: the decoder has checked (or will check) it.
	for ; s.pos < len(s.data); s.pos++ {
		switch s.data[s.pos] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return nil
		}
	}
	return nil
}

// elements reads the members of an object or the elements of an array,
// from its opening byte to close, calling each for every one.
func (s *jsonScanner) elements(close byte, each func(i int) error) error {
	s.pos++
	s.space()
	if s.peek() == close {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := each(i); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case close:
			s.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

func (s *jsonScanner) object(depth int) error {
	var keys [][]byte // decoded keys seen in this object
	var set map[string]bool
	return s.elements('}', func(int) error {
		if s.peek() != '"' {
			return errSyntax
		}
		s.path = append(s.path, pathStep{})
		raw, escaped, err := s.str()
		s.path[len(s.path)-1] = pathStep{key: raw, escaped: escaped}
		if err != nil {
			return err
		}
		key := raw
		if escaped {
			key = []byte(unquote(raw))
		}
		dup := false
		if set != nil {
			dup = set[string(key)]
			set[string(key)] = true
		} else {
			dup = slices.ContainsFunc(keys, func(k []byte) bool { return bytes.Equal(k, key) })
			keys = append(keys, key)
			if len(keys) > 16 {
				set = make(map[string]bool, 2*len(keys))
				for _, k := range keys {
					set[string(k)] = true
				}
			}
		}
		if dup && !s.duplicatesAllowed {
			path := s.render()
			return newError(fault.CodeDuplicateKey, "key %q appears twice at %s", string(key), path).
				with("key", string(key)).with("jsonPath", path)
		}
		s.space()
		if s.peek() != ':' {
			return errSyntax
		}
		s.pos++
		s.space()
		if err := s.value(depth + 1); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		return nil
	})
}

func (s *jsonScanner) array(depth int) error {
	return s.elements(']', func(i int) error {
		s.path = append(s.path, pathStep{index: i, isIndex: true})
		if err := s.value(depth + 1); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		return nil
	})
}

// str reads a string literal and returns its raw content and whether it
// has escapes; a \u escape of a lone surrogate is an error at the current
// path (for a key, the key's own path).
func (s *jsonScanner) str() ([]byte, bool, error) {
	s.pos++
	start, escaped := s.pos, false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw := s.data[start:s.pos]
			s.pos++
			return raw, escaped, nil
		case c < 0x20:
			return nil, false, errSyntax
		case c != '\\':
			s.pos++
			continue
		}
		escaped = true
		if s.pos+1 >= len(s.data) {
			return nil, false, errSyntax
		}
		if s.data[s.pos+1] != 'u' {
			s.pos += 2
			continue
		}
		r1, ok := hex4(s.data[s.pos+2:])
		if !ok {
			return nil, false, errSyntax
		}
		if !utf16.IsSurrogate(r1) {
			s.pos += 6
			continue
		}
		if rest := s.data[s.pos+6:]; r1 < 0xDC00 && len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
			if r2, ok := hex4(rest[2:]); ok && utf16.DecodeRune(r1, r2) != utf8.RuneError {
				s.pos += 12
				continue
			}
		}
		if n := len(s.path); n > 0 && !s.path[n-1].isIndex && s.path[n-1].key == nil {
			// A key: name it by its decoded text (the surrogate as U+FFFD).
			end := bytes.IndexByte(s.data[s.pos:], '"')
			if end < 0 {
				return nil, false, errSyntax
			}
			s.path[n-1] = pathStep{key: s.data[start : s.pos+end], escaped: true}
		}
		path := s.render()
		return nil, false, newError(fault.CodeInvalidUTF8, "%s: the escape \\u%04X at offset %d of %s is a lone UTF-16 surrogate, not a character", path, r1, s.pos, docName(s.doc)).
			with("offset", s.pos).with("jsonPath", path)
	}
	return nil, false, errSyntax
}

// render writes the current path: the document's path, then .name,
// ["any key"] or [index] per step.
func (s *jsonScanner) render() string {
	var b strings.Builder
	b.WriteString(s.doc)
	for _, st := range s.path {
		if st.isIndex {
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
			continue
		}
		k := string(st.key)
		if st.escaped {
			k = unquote(st.key)
		}
		b.WriteString(member(k))
	}
	return b.String()
}

// unquote decodes the content of a string literal; a literal the decoder
// rejects is left as written.
func unquote(raw []byte) string {
	var out string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &out); err != nil {
		return string(raw)
	}
	return out
}

var identifier = lazyregexp.New(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// member is the path step to a key: .name, or ["any key"].
func member(k string) string {
	if identifier.MatchString(k) {
		return "." + k
	}
	b, _ := json.Marshal(k)
	return "[" + string(b) + "]"
}

func hex4(b []byte) (rune, bool) {
	var v [2]byte
	if len(b) < 4 {
		return 0, false
	}
	if _, err := hex.Decode(v[:], b[:4]); err != nil {
		return 0, false
	}
	return rune(v[0])<<8 | rune(v[1]), true
}
