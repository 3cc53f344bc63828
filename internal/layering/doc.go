// Package layering holds the test that keeps the module's import graph
// pointing downward: cmd → features → device core → protocol, the
// simulator apart from the host, and no feature importing another. The
// table in layering_test.go is the picture docs/architecture.md describes;
// a new package must be placed in it deliberately.
package layering
