// Package verifycmd holds the requirement verification commands:
// verify-normalize, verify-compile, verify-validate and verify-run. It
// exports the on-phone run (VerifyOnPhone, RunBudgets) because a managed
// worker runs exactly verify-run's code for each shard.
package verifycmd
