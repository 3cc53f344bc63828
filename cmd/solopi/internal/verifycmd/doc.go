// Package verifycmd holds the requirement verification commands:
// verify-normalize, verify-compile, verify-validate and verify-run. The
// run on the phone is verify/onphone's (Verify), which a farm's shards run
// too.
package verifycmd
