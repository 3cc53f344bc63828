// Package pyre runs Python 3.11 regular expressions (re, on str) in Go:
// Compile accepts exactly the patterns CPython 3.11's re.compile accepts
// (refusing the others with Python's own error message), and Search
// answers as re.search does.
//
// A pattern is parsed by a recursive-descent parser written from the
// re module's documented syntax and from Python's observed answers
// (testdata/vectors.json.gz), checked as Python checks it once parsed,
// and emitted as a regexp2 (backtracking,
// .NET syntax) pattern in which every character class, case-insensitive
// literal, anchor and word boundary is spelled out as explicit code point
// sets computed from CPython 3.11's own Unicode 14.0 data (tables_gen.go),
// so neither regexp2's nor Go's Unicode tables decide anything.
package pyre

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dlclark/regexp2"
)

// Error kinds: what Python raises for the pattern, or Unsupported for a
// pattern Python accepts that this package cannot evaluate exactly.
const (
	kindSyntax      = "re.error"
	kindOverflow    = "OverflowError"
	kindValue       = "ValueError"
	kindUnsupported = "unsupported"
)

// ErrUnsupported is wrapped by an Error of kind KindUnsupported.
var ErrUnsupported = errors.New("a Python 3.11 construct this evaluator does not support")

// Error is a pattern Compile refuses. Its Error() is Python's str() of
// the exception (with " at position N" and, for a multi-line pattern, the
// line and column).
type Error struct {
	Kind    string
	Msg     string
	Pos     int // -1: none
	pattern []rune
}

func (e *Error) Error() string {
	if e.Pos < 0 || e.pattern == nil {
		return e.Msg
	}
	msg := fmt.Sprintf("%s at position %d", e.Msg, e.Pos)
	if !slices.Contains(e.pattern, '\n') {
		return msg
	}
	line, last := 1, -1
	for i := 0; i < e.Pos && i < len(e.pattern); i++ {
		if e.pattern[i] == '\n' {
			line, last = line+1, i
		}
	}
	return fmt.Sprintf("%s (line %d, column %d)", msg, line, e.Pos-last)
}

func (e *Error) Unwrap() error {
	if e.Kind == kindUnsupported {
		return ErrUnsupported
	}
	return nil
}

// Regexp is a compiled pattern.
type Regexp struct {
	prog *regexp2.Regexp
}

// Compile compiles a Python 3.11 str pattern (no flags argument: inline
// flags only). Every error is an *Error. timeout bounds each Search.
func Compile(pattern string, timeout time.Duration) (*Regexp, error) {
	tree, err := parseTree(pattern)
	if err != nil {
		return nil, err
	}
	src, err := tree.emit()
	if err != nil {
		return nil, err
	}
	prog, err := regexp2.Compile(src, regexp2.None)
	if err != nil {
		// The emitter writes only what regexp2 parses; this is a bug here,
		// reported as a pattern we cannot evaluate rather than a verdict.
		return nil, &Error{Kind: kindUnsupported, Msg: "internal: the translated pattern does not compile: " + err.Error(), Pos: -1}
	}
	prog.MatchTimeout = timeout
	return &Regexp{prog: prog}, nil
}

// Search reports whether the pattern matches anywhere in s, as
// re.search(pattern, s) does. An error means the evaluation ran out of
// time (a catastrophically backtracking pattern): no answer.
func (r *Regexp) Search(s string) (bool, error) {
	return r.prog.MatchString(s)
}

// tree is a parsed pattern: its top item and what the parser learnt
// (the global flags, the groups by number).
type tree struct {
	top *node
	p   *parser
}

func parseTree(pattern string) (t *tree, err error) {
	src := []rune(pattern)
	defer func() {
		if e, ok := err.(*Error); ok && e.Pos >= 0 {
			e.pattern = src
		}
	}()
	defer catch(&err)
	top, p := parse(src)
	return &tree{top: top, p: p}, nil
}

func (t *tree) emit() (src string, err error) {
	defer catch(&err)
	checkStaleGroups(t.top)
	e := &emitter{widths: &widths{byNum: t.p.byNum}}
	if f := t.startFilter(); f != nil {
		e.b.WriteString("(?=")
		e.set(f)
		e.b.WriteByte(')')
	}
	e.node(t.top)
	return e.b.String(), nil
}

// catch turns the parser's and the emitter's panics into their error. Any
// other panic is a bug here; it still refuses the pattern rather than
// crash the command (FuzzPattern fails on it).
func catch(err *error) {
	switch r := recover().(type) {
	case nil:
	case *Error:
		*err = r
	default:
		*err = &Error{Kind: kindUnsupported, Msg: fmt.Sprintf("internal: %v", r), Pos: -1}
	}
}

// Anchored reports whether pattern is valid and constrains both ends of
// the text: its first item is ^ or \A and its last $ or \Z (not under
// MULTILINE, where they are line anchors), looking into groups and
// requiring every alternative of a branch to be anchored.
func Anchored(pattern string) bool {
	t, err := parseTree(pattern)
	if err != nil {
		return false
	}
	if _, err := t.emit(); err != nil {
		return false
	}
	return anchoredAt(t.top, true) && anchoredAt(t.top, false)
}

// anchoredAt reports whether n is anchored at its start (or end).
func anchoredAt(n *node, start bool) bool {
	switch n.kind {
	case kAnchor:
		multi := n.fl&flagMultiline != 0
		if start {
			return n.anchor == aStartText || n.anchor == aStart && !multi
		}
		return n.anchor == aEndText || n.anchor == aEnd && !multi
	case kCat:
		// An empty group, (?:), is no item.
		subs := slices.DeleteFunc(slices.Clone(n.subs), func(s *node) bool { return s.kind == kCat && len(s.subs) == 0 })
		if len(subs) == 0 {
			return false
		}
		if start {
			return anchoredAt(subs[0], start)
		}
		return anchoredAt(subs[len(subs)-1], start)
	case kGroup, kAtomic:
		return anchoredAt(n.subs[0], start)
	case kAlt:
		for _, a := range n.subs {
			if !anchoredAt(a, start) {
				return false
			}
		}
		return true
	}
	return false
}
