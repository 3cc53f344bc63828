// Package docscheck holds the test that keeps docs/ true to the error codes
// the host declares: a script reads errorCode values from those pages, so
// a code the code can produce and the pages never mention is a bug.
// (protocol and outcome check their own tables against their pages.)
package docscheck
