// Package lazyregexp is a regular expression compiled on first use. A
// package-level regexp.MustCompile runs at process start whether or not
// the program ever matches it; with dozens of them across the simulator,
// the reports and the planner, every solopi invocation (even `solopi
// version`) paid milliseconds for patterns it never used.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled once, when first matched.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns a lazily compiled expr; like regexp.MustCompile it panics
// (on first use) when expr does not compile, so patterns are checked by
// the tests that use them.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.get().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}
