package oracle

import (
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/oracle/pyre"
)

// matchTimeout bounds one regular-expression evaluation. Python's re has no
// limit, so a catastrophic pattern would hang solopi-ai; a backtracking
// engine on our side gives up and the checkpoint is not_tested instead.
const matchTimeout = 2 * time.Second

// pattern is a compiled `matches` expression: Python 3.11's re.search on
// str, exactly (package pyre).
type pattern struct {
	source string
	re     *pyre.Regexp
}

// errPattern is returned (wrapped) for a pattern Python 3.11's re rejects,
// with Python's message.
var errPattern = errors.New("invalid regular expression")

// ErrUnsupportedPattern is returned (wrapped) for a pattern Python accepts
// that the evaluator cannot run exactly as Python would; it is refused
// rather than judged differently.
var ErrUnsupportedPattern = errors.New("regular expression not supported")

// CompilePattern compiles a Python re pattern.
func CompilePattern(src string) (*pattern, error) {
	re, err := pyre.Compile(src, matchTimeout)
	if errors.Is(err, pyre.ErrUnsupported) {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedPattern, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPattern, err)
	}
	return &pattern{source: src, re: re}, nil
}

// Search reports whether the pattern matches anywhere in s (Python
// re.search), the semantics a host-judged checkpoint uses. An error (the
// evaluation ran out of MatchTimeout) is no answer: the caller judges the
// checkpoint not_tested.
func (p *pattern) Search(s string) (bool, error) {
	ok, err := p.re.Search(s)
	if err != nil {
		return false, fmt.Errorf("evaluate %q: %w", p.source, err)
	}
	return ok, nil
}

// Anchored reports whether a pattern constrains both ends of the string
// (^ or \A first, $ or \Z last, not under MULTILINE, every top-level
// alternative anchored), read from the parsed pattern. Only an anchored
// pattern means the same under Java's String.matches (full match, what a
// compiled ASSERT runs on the phone) and Python's re.search (what the host
// uses for a dynamic checkpoint).
func Anchored(src string) bool { return pyre.Anchored(src) }
