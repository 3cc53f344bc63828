// Package layering holds the test that keeps the module's import graph
// pointing downward: cmd → managed → verify → features → device core →
// protocol, the simulator apart from the host, no feature importing
// another, and inside the command line the binary over command groups that
// import only cmdutil and libraries. The table in layering_test.go is the
// picture docs/architecture.md describes; a new package must be placed in
// it deliberately.
package layering
