package execution

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"sync"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
)

// Ports are one phone as the engine reaches it: its replays and its Agent
// sessions. Serial names it in the events of a run on several phones.
type Ports struct {
	Serial string
	Runner CaseRunner
	Agent  AgentSession
	// Screen records the phone's screen (Engine.Video); nil when it
	// cannot.
	Screen video.Device
}

// Engine runs a validated plan on phones through their ports and judges the
// result.
type Engine struct {
	// Phones are the phones to run on: with one, the scenarios run in the
	// plan's execution order; with more, independent scenarios run on
	// different phones at once (a scenario starts once every scenario it
	// depends on has its verdict), which the verdict does not depend on.
	Phones []Ports
	// Provider decides explore steps live; nil uses Decisions (static).
	Provider  DecisionProvider
	Decisions decisions
	// Vision judges vision checkpoints; nil leaves them not_tested
	// (vision_not_judged).
	Vision VisionJudge
	// RestartApp is passed to test and precondition replays (nil: the
	// run's default); cleanup never restarts the app.
	RestartApp *bool
	Clock      clock.Clock
	// Random fills bytes for report IDs and owner tokens (crypto/rand
	// when nil; tests make it deterministic).
	Random func([]byte)
	// Observe, when set, is told when each segment starts and finishes
	// (a terminal's status line shows it).
	Observe func(SegmentProgress)
	// Video records every phone's screen for the run (video.go): off
	// (or empty) records nothing.
	Video        video.Mode
	VideoOptions video.Options
}

// SegmentProgress is one segment starting (State "") or finishing.
type SegmentProgress struct {
	// Index counts the segments started so far; Total is the plan's
	// segment count (segments a skipped scenario never runs are never
	// started, so a run can end below Total).
	Index, Total          int
	ScenarioID, SegmentID string
	Phase, Route          string
	State, Reason         string
}

// runOutput is a finished (or interrupted) run.
type runOutput struct {
	// Report is the verdict as judged; report.json is it with the owner
	// tokens and the requirement's secrets hidden, and so is everything
	// rendered from it (redact).
	Report     *verify.Report
	ReportPath string
	EventsPath string
	PlanPath   string
	// Timeline is timeline.json's content, TimelinePath its path.
	Timeline     *Timeline
	TimelinePath string
	redact       func(string) string
}

// Run executes plan and writes its evidence under dir, which must not
// exist: plan.json, events.jsonl, segments/…, report.json. The report is
// the Judge's verdict on what was recorded. When ctx is cancelled
// (SIGINT/SIGTERM) the active replay or Agent session is cancelled through
// its port, nothing further starts, and a partial report marked
// interrupted is still written. The error is for what prevents a report
// (the directory exists, a file cannot be written).
func (e *Engine) Run(ctx context.Context, plan *verify.Plan, dir string) (*runOutput, error) {
	e.Clock = clock.Or(e.Clock)
	a, err := createArtifactDir(dir)
	if err != nil {
		return nil, err
	}
	out := &runOutput{
		PlanPath:     filepath.Join(a.root(), "plan.json"),
		EventsPath:   filepath.Join(a.root(), "events.jsonl"),
		ReportPath:   filepath.Join(a.root(), "report.json"),
		TimelinePath: filepath.Join(a.root(), TimelineFile),
	}
	// The requirement's secrets, like the owner tokens, stay out of every
	// file, the plan's copy included.
	if len(e.Phones) == 0 {
		return nil, fault.New(fault.Internal, fault.CodeInternalError, "the verification engine was given no phone")
	}
	r := &run{e: e, plan: plan, a: a, ev: &events{a: a, path: out.EventsPath, clock: e.Clock}, secrets: plan.Secrets(),
		shared: &shared{}, p: e.Phones[0]}
	a.addSecret(r.secrets...)
	if _, err := a.writeJSON(out.PlanPath, plan.Tree(), "plan"); err != nil {
		return nil, err
	}
	rec := &verify.RunRecord{ReportID: "verification-run-" + e.hex(16), StartedAt: e.Clock.Now().UnixMilli()}
	r.rec = rec
	if err := r.ev.append("verification_started", map[string]any{"requirementId": plan.Requirement.ID, "planFingerprint": plan.Fingerprint}); err != nil {
		return nil, err
	}
	recs := r.startVideos(ctx)
	if err := r.walk(ctx); err != nil {
		r.stopVideos(ctx, recs, false)
		return nil, err
	}
	rec.FinishedAt = e.Clock.Now().UnixMilli()
	report := verify.Judge(plan, rec)
	videos := r.stopVideos(ctx, recs, report.Status == verify.Passed && !rec.Interrupted)
	report.Artifacts = &verify.ReportArtifacts{Plan: out.PlanPath, Events: out.EventsPath}
	fin := map[string]any{"reportId": report.ReportID, "status": report.Status, "outcomeFingerprint": report.OutcomeFingerprint}
	if rec.Interrupted {
		fin["interrupted"] = true
	}
	if err := r.ev.append("verification_finished", fin); err != nil {
		return nil, err
	}
	if _, err := a.writeJSON(out.ReportPath, report, "report"); err != nil {
		return nil, err
	}
	out.Timeline = r.timeline(videos)
	out.Timeline.redact(a.redact)
	if _, err := a.writeJSON(out.TimelinePath, out.Timeline, "timeline"); err != nil {
		return nil, err
	}
	if err := r.videoManifest(report.ReportID); err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot write the evidence manifest", err)
	}
	// The evidence is made durable once, now that the set is complete
	// (a manifest's write did it already): the verdict printed is never
	// one whose report a crash could lose.
	if err := a.dir.Sync(); err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot make the evidence durable", err)
	}
	out.Report, out.redact = report, a.redact
	return out, nil
}

func (e *Engine) hex(n int) string {
	b := make([]byte, n)
	if e.Random != nil {
		e.Random(b)
	} else {
		_, _ = rand.Read(b)
	}
	return hex.EncodeToString(b)
}

// run is one execution of a plan, seen from one phone: p is the phone its
// segments go to; every other field is the run's own, shared by the
// phones of a run on several.
type run struct {
	e       *Engine
	plan    *verify.Plan
	a       *artifactDir
	ev      *events
	rec     *verify.RunRecord
	secrets []string
	*shared
	p Ports
}

// shared is what the phones of one run change together.
type shared struct {
	mu       sync.Mutex
	started  int               // segments started, for Observe
	segments []SegmentTimeline // the segments that ran (timeline.go)
}

// interrupted is whether the run was interrupted.
func (r *run) interrupted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec.Interrupted
}

func (r *run) setInterrupted() {
	r.mu.Lock()
	r.rec.Interrupted = true
	r.mu.Unlock()
}

// observe tells Engine.Observe about a segment.
func (r *run) observe(sc *verify.Scenario, seg *verify.Segment, o *verify.SegmentOutcome) {
	if r.e.Observe == nil {
		return
	}
	total := 0
	for _, s := range r.plan.Scenarios {
		total += len(s.Segments)
	}
	r.mu.Lock()
	p := SegmentProgress{Index: r.started, Total: total, ScenarioID: sc.ID, SegmentID: seg.ID, Phase: seg.Phase, Route: seg.Route}
	if o != nil {
		p.State, p.Reason = o.State, o.Reason
	}
	r.e.Observe(p)
	r.mu.Unlock()
}

// walk runs the scenarios in execution order with the judge's rules on
// what runs: a scenario whose dependency did not pass runs nothing;
// preconditions gate the test segments; test segments stop at the first
// that neither passed nor ended done; cleanup runs when a test segment
// started or preconditions exist.
func (r *run) walk(ctx context.Context) error {
	if len(r.e.Phones) > 1 {
		return r.walkPhones(ctx)
	}
	statuses := map[string]string{}
	for _, id := range r.plan.ExecutionOrder {
		sc := r.plan.Scenario(id)
		if len(verify.DependenciesPassed(sc, statuses)) == 0 {
			if err := r.scenario(ctx, sc); err != nil {
				return err
			}
		}
		statuses[id] = verify.ScenarioStatus(r.plan, r.rec, sc, statuses)
		if r.interrupted() {
			return nil
		}
	}
	return nil
}

func (r *run) scenario(ctx context.Context, sc *verify.Scenario) error {
	hasPre, preOK, err := r.phase(ctx, sc, verify.PhasePrecondition, func(o *verify.SegmentOutcome) bool {
		return o.State == verify.StatePassed && len(o.Evidence) > 0
	})
	if err != nil || r.interrupted() {
		return err
	}
	testStarted := false
	if preOK {
		testStarted, _, err = r.phase(ctx, sc, verify.PhaseTest, func(o *verify.SegmentOutcome) bool {
			return (o.State == verify.StatePassed || o.State == verify.StateDone) && len(o.Evidence) > 0
		})
		if err != nil || r.interrupted() {
			return err
		}
	}
	if !testStarted && !hasPre {
		return nil
	}
	_, _, err = r.phase(ctx, sc, verify.PhaseCleanup, func(*verify.SegmentOutcome) bool { return true })
	return err
}

// phase runs the scenario's segments of one phase in order while
// keepGoing accepts each outcome. It reports whether any segment ran and
// whether every one was accepted.
func (r *run) phase(ctx context.Context, sc *verify.Scenario, phase string, keepGoing func(*verify.SegmentOutcome) bool) (ran, ok bool, err error) {
	for i := range sc.Segments {
		seg := &sc.Segments[i]
		if seg.Phase != phase {
			continue
		}
		ran = true
		o, err := r.segment(ctx, sc, seg)
		if err != nil || r.interrupted() {
			return ran, false, err
		}
		if !keepGoing(o) {
			return ran, false, nil
		}
	}
	return ran, true, nil
}

// segment runs one segment between its started and finished events and
// records its outcome. An interrupt during it marks the run interrupted.
func (r *run) segment(ctx context.Context, sc *verify.Scenario, seg *verify.Segment) (*verify.SegmentOutcome, error) {
	if ctx.Err() != nil {
		// Interrupted between segments: nothing new starts.
		r.setInterrupted()
		return nil, nil
	}
	base := map[string]any{"scenarioId": sc.ID, "segmentId": seg.ID, "phase": seg.Phase, "route": seg.Route}
	if len(r.e.Phones) > 1 {
		base["serial"] = r.p.Serial
	}
	if err := r.ev.append("segment_started", base); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.started++
	r.mu.Unlock()
	r.observe(sc, seg, nil)
	var o *verify.SegmentOutcome
	var err error
	tr := &segmentTrace{startedAt: r.e.Clock.Now().UnixMilli()}
	if seg.Deterministic() {
		o, err = r.fixed(ctx, sc, seg, tr)
	} else {
		o, err = r.dynamic(ctx, sc, seg, tr)
	}
	if err != nil && !fault.IsInterrupt(err) {
		return nil, err
	}
	if fault.IsInterrupt(err) {
		o.State, o.Reason = verify.NotTested, verify.ReasonInterrupted
	}
	if err != nil || ctx.Err() != nil {
		// A segment that finished before the interrupt was noticed keeps
		// its verdict; the run stops after it either way.
		r.setInterrupted()
	}
	o.SegmentID = seg.ID
	r.recordSegment(sc, seg, o, tr, r.e.Clock.Now().UnixMilli())
	r.mu.Lock()
	r.rec.Record(sc.ID, o)
	r.mu.Unlock()
	fin := map[string]any{"state": o.State, "reason": nil, "agentDone": o.AgentDone}
	if o.Reason != "" {
		fin["reason"] = o.Reason
	}
	for k, v := range base {
		fin[k] = v
	}
	if err := r.ev.append("segment_finished", fin); err != nil {
		return nil, err
	}
	r.observe(sc, seg, o)
	return o, nil
}
