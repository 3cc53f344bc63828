// Package verify turns acceptance requirements into verdicts.
//
// A QA engineer writes a requirement (solopi.ai.requirement/v1): acceptance
// criteria, scenarios of typed steps, checkpoints with oracles, cleanup.
// Normalize checks its shape; Compile resolves bindings and reusable flows,
// orders scenarios by their dependencies, and cuts each scenario into
// segments: runs of stable operations become compiled SoloPi cases (with an
// ASSERT step after each checkpoint's step), each explore step becomes a
// budgeted Agent segment. The plan (solopi.ai.verification-plan/v1) is
// fingerprinted over canonical JSON so that the same requirement gives the
// same planFingerprint, compiled case names and segment IDs as SoloPi's own
// host CLI. Validate re-checks a plan before it runs.
//
// Package execution runs a plan on a phone and records what each segment
// did; Judge, a pure function of the plan and those outcomes, gives the
// verdict of every checkpoint, scenario, acceptance criterion and the whole
// run. An Agent saying "done" only ends its exploration: the oracles
// decide.
//
// The format, the rules and where we differ from solopi-ai are described in
// docs/verification.md.
package verify
