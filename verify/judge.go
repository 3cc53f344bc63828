package verify

import (
	"slices"
)

// Judge is the Result Judge: a pure function from the plan and what the
// run recorded to the report. It walks the plan as the engine did:
//
//   - a scenario whose dependency did not pass is not run: every checkpoint
//     is not_tested (dependency_not_passed), cleanup is not required;
//   - preconditions must pass, or the test segments are skipped;
//   - test segments stop at the first one that neither passed nor ended
//     with the Agent saying done; unreached checkpoints are not_tested;
//   - a deterministic checkpoint is judged from where its replay stopped:
//     at its ASSERT step failed, after it passed, before it not reached;
//   - a dynamic checkpoint is judged by its oracle on the final
//     observation (an Agent's "done" is never a pass by itself);
//   - cleanup runs when declared and a test segment started or
//     preconditions exist; a cleanup replay that failed fails the
//     scenario, one that could not run leaves it not_tested.
//
// Scenario verdict: cleanup failed → failed; any checkpoint failed →
// failed; any not tested (a checkpoint, or the cleanup) → not_tested;
// else passed. An acceptance
// criterion and the overall verdict follow the same order (failed beats
// not_tested beats passed); a cleanup failure does not touch the criteria.
func Judge(plan *Plan, rec *RunRecord) *Report {
	j := &judge{plan: plan, rec: rec, ev: newRegistry(), status: map[string]string{}}
	var scenarios []ScenarioResult
	for _, id := range plan.ExecutionOrder {
		sr := j.scenario(plan.Scenario(id))
		j.status[id] = sr.Status
		scenarios = append(scenarios, sr)
	}
	overall := worst(func(yield func(string) bool) {
		for _, s := range scenarios {
			if !yield(s.Status) {
				return
			}
		}
	})
	return &Report{
		SchemaVersion:      reportSchema,
		ReportID:           rec.ReportID,
		RequirementID:      plan.Requirement.ID,
		PlanFingerprint:    plan.Fingerprint,
		OutcomeFingerprint: fingerprint(outcomeTree(plan.Fingerprint, overall, scenarios)),
		Status:             overall,
		Interrupted:        rec.Interrupted,
		StartedAt:          rec.StartedAt,
		FinishedAt:         rec.FinishedAt,
		AcceptanceCriteria: acResults(plan, scenarios),
		Scenarios:          scenarios,
		Evidence:           j.ev.entries,
	}
}

// ScenarioStatus is the verdict the judge gives one scenario from what has
// been recorded so far (the engine asks it to decide whether dependents
// run). statuses holds the verdicts of the scenarios before it.
func ScenarioStatus(plan *Plan, rec *RunRecord, sc *Scenario, statuses map[string]string) string {
	j := &judge{plan: plan, rec: rec, ev: newRegistry(), status: statuses}
	return j.scenario(sc).Status
}

// DependenciesPassed lists the dependencies of sc that did not pass.
func DependenciesPassed(sc *Scenario, statuses map[string]string) []string {
	var failed []string
	for _, d := range sc.DependsOn {
		if statuses[d] != Passed {
			failed = append(failed, d)
		}
	}
	return failed
}

// worst is failed if any status is failed, else not_tested if any is, else
// passed.
func worst(statuses func(func(string) bool)) string {
	out := Passed
	for s := range statuses {
		switch {
		case s == Failed:
			return Failed
		case s == NotTested:
			out = NotTested
		}
	}
	return out
}

type judge struct {
	plan   *Plan
	rec    *RunRecord
	ev     *registry
	status map[string]string
}

func (j *judge) outcome(sc *Scenario, seg *Segment) *SegmentOutcome {
	return j.rec.Outcomes[outcomeKey(sc.ID, seg.ID)]
}

// notRun is the reason for work that should have run and did not.
func (j *judge) notRun() string {
	if j.rec.Interrupted {
		return ReasonInterrupted
	}
	return ReasonCheckpointNotReached
}

// segmentRefs registers a segment's evidence; a segment that left none is
// given a missing_evidence note and forced to not_tested, in every phase
// (solopi-ai fails a cleanup without evidence): no verdict stands without
// evidence, a failure no more than a pass.
func (j *judge) segmentRefs(seg *Segment, o *SegmentOutcome) (refs []string, state string) {
	refs, state = j.ev.add(o.Evidence), o.State
	if len(refs) == 0 {
		refs = j.ev.note("missing_evidence", map[string]any{"segmentId": seg.ID, "phase": seg.Phase})
		state = NotTested
	}
	return refs, state
}

func (j *judge) scenario(sc *Scenario) ScenarioResult {
	res := ScenarioResult{ScenarioID: sc.ID, Route: sc.Route, Segments: []SegmentResult{}}
	if failed := DependenciesPassed(sc, j.status); len(failed) > 0 {
		refs := j.ev.note("dependency_result", map[string]any{"scenarioId": sc.ID, "dependencies": strs(failed)})
		for i := range sc.Checkpoints {
			res.Checkpoints = append(res.Checkpoints, baseCheckpoint(&sc.Checkpoints[i], refs, NotTested, reasonDependencyNotPassed))
		}
		res.Status = NotTested
		res.Failure = &failure{Category: reasonDependencyNotPassed, Dependencies: failed}
		res.Preconditions = phaseResult{Status: NotTested, EvidenceRefs: refs}
		res.Cleanup = phaseResult{Status: "not_required", EvidenceRefs: []string{}}
		return res
	}

	var pre, tests, cleanup []*Segment
	for i := range sc.Segments {
		seg := &sc.Segments[i]
		switch seg.Phase {
		case PhasePrecondition:
			pre = append(pre, seg)
		case PhaseTest:
			tests = append(tests, seg)
		case PhaseCleanup:
			cleanup = append(cleanup, seg)
		}
	}
	results := map[string]CheckpointResult{}
	preStatus, preRefs := Passed, []string{}
	stopReason := ""
	for _, seg := range pre {
		o := j.outcome(sc, seg)
		if o == nil {
			preStatus, stopReason = NotTested, j.notRun()
			break
		}
		refs, state := j.segmentRefs(seg, o)
		preRefs = append(preRefs, refs...)
		res.Segments = append(res.Segments, SegmentResult{SegmentID: seg.ID, Phase: seg.Phase, Route: routeDeterministic, State: state, EvidenceRefs: refs})
		if state != StatePassed {
			preStatus, stopReason = NotTested, reasonPreconditionFailed
			break
		}
	}
	testStarted := false
	if preStatus == Passed {
		for _, seg := range tests {
			o := j.outcome(sc, seg)
			if o == nil {
				stopReason = j.notRun()
				break
			}
			testStarted = true
			refs, state := j.segmentRefs(seg, o)
			res.Segments = append(res.Segments, SegmentResult{
				SegmentID: seg.ID, Phase: PhaseTest, Route: seg.Route, State: state,
				AgentDone: o.AgentDone, Reason: o.Reason, EvidenceRefs: refs,
			})
			for _, id := range seg.CheckpointIDs {
				cp := sc.Checkpoint(id)
				results[id] = j.checkpoint(cp, seg, o, state, refs)
			}
			if state != StatePassed && state != StateDone {
				// A reason of none ("") leaves unreached checkpoints at
				// checkpoint_not_reached.
				stopReason = o.Reason
				break
			}
		}
	}
	for i := range sc.Checkpoints {
		cp := &sc.Checkpoints[i]
		if _, ok := results[cp.ID]; ok {
			continue
		}
		reason := stopReason
		if reason == "" {
			reason = ReasonCheckpointNotReached
		}
		refs := j.ev.note("checkpoint_unreached", map[string]any{"scenarioId": sc.ID, "checkpointId": cp.ID, "reason": reason})
		results[cp.ID] = baseCheckpoint(cp, refs, NotTested, reason)
	}

	// A cleanup that ran and failed fails the scenario; one that could not
	// run or give a verdict (interrupted before it, the phone gone, the
	// import refused) leaves it not_tested: nothing says the app was left
	// clean, and nothing says it was not.
	cleanStatus, cleanReason, cleanRefs := "not_required", "", []string{}
	if len(cleanup) > 0 && (testStarted || len(pre) > 0) {
		cleanStatus = Passed
		for _, seg := range cleanup {
			o := j.outcome(sc, seg)
			state, reason := NotTested, j.notRun()
			if o != nil {
				var refs []string
				refs, state = j.segmentRefs(seg, o)
				reason = o.Reason
				if len(o.Evidence) == 0 {
					reason = reasonMissingEvidence
				}
				cleanRefs = append(cleanRefs, refs...)
				res.Segments = append(res.Segments, SegmentResult{SegmentID: seg.ID, Phase: PhaseCleanup, Route: routeDeterministic, State: state, EvidenceRefs: refs})
			}
			switch {
			case state == StatePassed:
			case state == StateFailed:
				cleanStatus = Failed
			case cleanStatus == Passed:
				cleanStatus, cleanReason = NotTested, reason
			}
		}
	}

	for i := range sc.Checkpoints {
		res.Checkpoints = append(res.Checkpoints, results[sc.Checkpoints[i].ID])
	}
	if len(pre) == 0 {
		preStatus = "not_required"
	}
	res.Preconditions = phaseResult{Status: preStatus, EvidenceRefs: preRefs}
	res.Cleanup = phaseResult{Status: cleanStatus, EvidenceRefs: cleanRefs}
	res.Status, res.Failure = scenarioVerdict(res.Checkpoints, cleanStatus, cleanReason)
	return res
}

func scenarioVerdict(cps []CheckpointResult, cleanup, cleanupReason string) (string, *failure) {
	if cleanup == Failed {
		return Failed, &failure{Category: CategoryCleanupFailure}
	}
	if i := slices.IndexFunc(cps, func(c CheckpointResult) bool { return c.Status == Failed }); i >= 0 {
		return Failed, &failure{Category: categoryOracleMismatch, CheckpointID: cps[i].CheckpointID}
	}
	if i := slices.IndexFunc(cps, func(c CheckpointResult) bool { return c.Status == NotTested }); i >= 0 {
		category := ReasonCheckpointNotReached
		switch r := cps[i].Reason; r {
		case reasonDependencyNotPassed, reasonPreconditionFailed, ReasonCheckpointNotReached, ReasonInterrupted:
			category = r
		}
		return NotTested, &failure{Category: category, CheckpointID: cps[i].CheckpointID, Reason: cps[i].Reason}
	}
	if cleanup == NotTested {
		category := CategoryCleanupNotTested
		if cleanupReason == ReasonInterrupted {
			category = ReasonInterrupted
		}
		return NotTested, &failure{Category: category, Reason: cleanupReason}
	}
	return Passed, nil
}

func baseCheckpoint(cp *checkpoint, refs []string, status, reason string) CheckpointResult {
	r := CheckpointResult{
		CheckpointID: cp.ID, AcceptanceCriteria: cp.AcceptanceCriteria, Oracle: cp.Oracle.tree(),
		EvidenceRefs: refs, Status: status, Reason: reason,
	}
	if cp.Oracle.Vision != nil {
		r.Judge = "vision"
	}
	return r
}

// checkpoint judges one checkpoint of an executed test segment.
func (j *judge) checkpoint(cp *checkpoint, seg *Segment, o *SegmentOutcome, state string, refs []string) CheckpointResult {
	if len(refs) == 0 {
		return baseCheckpoint(cp, refs, NotTested, reasonMissingEvidence)
	}
	if seg.Route == RouteDynamic {
		if state != StateDone && state != StatePassed {
			return baseCheckpoint(cp, refs, NotTested, o.Reason)
		}
		if cp.Oracle.Vision != nil {
			return j.vision(cp, o, refs)
		}
		ev := cp.Oracle.UI.Evaluate(o.Observation)
		r := baseCheckpoint(cp, refs, ev.Status, ev.Reason)
		r.Dynamic, r.Actual = true, ev.Actual
		return r
	}
	switch state {
	case StatePassed:
		if cp.Oracle.Vision != nil {
			return j.vision(cp, o, refs)
		}
		return baseCheckpoint(cp, refs, Passed, ReasonCompiledOraclePassed)
	case StateFailed:
	default:
		return baseCheckpoint(cp, refs, NotTested, o.Reason)
	}
	// The replay failed: where it stopped says what this checkpoint saw.
	anchor := cp.OracleStepID
	if cp.Oracle.Vision != nil {
		anchor = cp.AfterStep
	}
	failed, at := seg.Case.StepIndex(o.FailedStepID), seg.Case.StepIndex(anchor)
	if o.FailedStepID == "" || anchor == "" || failed < 0 || at < 0 {
		return baseCheckpoint(cp, refs, NotTested, reasonUnattributedFailure)
	}
	switch {
	case failed > at:
		if cp.Oracle.Vision != nil {
			return j.vision(cp, o, refs)
		}
		return baseCheckpoint(cp, refs, Passed, ReasonCompiledOraclePassed)
	case failed == at && cp.Oracle.UI != nil:
		return baseCheckpoint(cp, refs, Failed, ReasonOracleMismatch)
	}
	return baseCheckpoint(cp, refs, NotTested, ReasonCheckpointNotReached)
}

// vision takes the vision model's verdict of a reached checkpoint.
func (j *judge) vision(cp *checkpoint, o *SegmentOutcome, refs []string) CheckpointResult {
	v, ok := o.Vision[cp.ID]
	if !ok {
		return baseCheckpoint(cp, refs, NotTested, reasonVisionNotJudged)
	}
	all := append(slices.Clone(refs), j.ev.add(v.Evidence)...)
	reason := ReasonMatched
	switch v.Status {
	case Failed:
		reason = ReasonOracleMismatch
	case NotTested:
		reason = ReasonVisionUncertain
	}
	r := baseCheckpoint(cp, all, v.Status, reason)
	r.Detail = v.Reason
	return r
}

func acResults(plan *Plan, scenarios []ScenarioResult) []acResult {
	out := make([]acResult, 0, len(plan.Requirement.AcceptanceCriteria))
	for _, ac := range plan.Requirement.AcceptanceCriteria {
		r := acResult{AcceptanceCriterionID: ac.ID, CheckpointRefs: []string{}}
		var statuses []string
		for _, s := range scenarios {
			for _, c := range s.Checkpoints {
				if slices.Contains(c.AcceptanceCriteria, ac.ID) {
					r.CheckpointRefs = append(r.CheckpointRefs, s.ScenarioID+"/"+c.CheckpointID)
					statuses = append(statuses, c.Status)
				}
			}
		}
		r.Status = worst(slices.Values(statuses))
		out = append(out, r)
	}
	return out
}

// registry holds the report's evidence, deduplicated by content address:
// the same bytes from two segments are one entry (its path is the first
// file's), so a reference names content, not the segment that made it.
type registry struct {
	entries []evidenceEntry
	seen    map[string]bool
}

func newRegistry() *registry { return &registry{entries: []evidenceEntry{}, seen: map[string]bool{}} }

func (r *registry) add(items []Evidence) []string {
	refs := []string{}
	for _, e := range items {
		entry := evidenceEntry{Type: e.Type, Path: e.Path, SHA256: e.SHA256, Content: e.Content}
		if e.Path != "" {
			size := e.Size
			entry.Size = &size
		}
		if entry.SHA256 == "" {
			entry.SHA256 = fingerprint(map[string]any{"type": e.Type, "content": e.Content})
		}
		entry.ID = "evidence-" + entry.SHA256[:20]
		if !r.seen[entry.ID] {
			r.seen[entry.ID] = true
			r.entries = append(r.entries, entry)
		}
		refs = append(refs, entry.ID)
	}
	return refs
}

func (r *registry) note(typ string, content map[string]any) []string {
	return r.add([]Evidence{{Type: typ, Content: content}})
}
