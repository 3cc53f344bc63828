package replay

// The run's performance session (RunOptions.Perf): a SoloPi performance
// recording started just before the replay and stopped by its exact
// sessionId on every ending; its CSVs are pulled into perf/ of the
// evidence and analysed there. Without budgets it never changes the
// verdict (its faults are the output's "perf" object); with budgets
// (RunOptions.PerfBudget) a passed replay fails when one is exceeded and is
// not_tested when one could not be measured.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// artifactPerfDir is the recording's directory in the evidence.
const artifactPerfDir = "perf"

// perfStopWait bounds the stop (and its retries) after the run; it runs
// after an interrupt too, on a context of its own.
const perfStopWait = 30 * time.Second

// perfInterruptedPull bounds the pull after an interrupt (the session is
// stopped first, whatever the pull then has time for).
const perfInterruptedPull = 5 * time.Second

// PerfSessions is SoloPi's performance recording as a run drives it.
// sessions.PerfRecorder implements it and the command layer passes it in:
// replay and sessions are features of one layer, neither imports the other.
type PerfSessions interface {
	// Start starts recording items on target ("" for the whole device)
	// and returns the sessionId once the device records.
	Start(ctx context.Context, d *device.Device, target string, items []string, interval time.Duration) (string, error)
	// Stop stops exactly sessionID; the result is its stopped snapshot.
	Stop(ctx context.Context, d *device.Device, sessionID string, timeout, interval time.Duration) (map[string]any, error)
	// Pull copies what the stop saved into sub/ of dir.
	Pull(ctx context.Context, d *device.Device, stopped map[string]any, sessionID string, dir *artifacts.Dir, sub string) ([]artifacts.FileEntry, error)
}

// perfRun is what became of the run's performance session.
type perfRun struct {
	items     []string
	target    string // the package measured, "-" for the whole device
	sessionID string
	stopped   bool
	// stop is the stop's snapshot: where the device saved the CSVs.
	stop     map[string]any
	files    []artifacts.FileEntry
	dir      string // the evidence's perf/ (absolute), once pulled
	analysis *perfstats.PerfAnalysis
	checks   []perfstats.BudgetCheck
	verdict  string // the budgets' verdict; empty without budgets
	errs     []string
}

func (p *perfRun) fail(what string, err error) { p.errs = append(p.errs, what+": "+errText(err)) }

// checkPerf is the local rule of --perf and --perf-budget.
func (o *RunOptions) checkPerf(evidence bool) error {
	if len(o.PerfBudget) > 0 && len(o.Perf) == 0 {
		return fault.Usage(fault.CodeInvalidOption, "--perf-budget needs --perf (the budgets judge the recording)")
	}
	if len(o.Perf) == 0 {
		return nil
	}
	if !evidence {
		return fault.Usage(fault.CodeInvalidOption, "--perf needs --artifacts (the recording is evidence)")
	}
	if o.NoWait {
		return fault.Usage(fault.CodeInvalidOption, "--perf cannot be used with --no-wait (the recording ends with the run)")
	}
	var missing []string
	for _, it := range perfstats.BudgetItems(o.PerfBudget) {
		if !slices.Contains(o.Perf, it) {
			missing = append(missing, it)
		}
	}
	if len(missing) > 0 {
		return fault.Usagef(fault.CodeInvalidOption, "--perf-budget judges items --perf does not record: add %s to --perf", strings.Join(missing, ",")).
			With("missingItems", missing)
	}
	if o.PerfSessions == nil {
		return fault.New(fault.Internal, fault.CodeInternalError, "RunOptions.Perf needs PerfSessions")
	}
	return nil
}

// startPerf starts the recording when one was asked for, on the target
// the replay uses (--target-package, else the case's app, else the whole
// device). A recording that cannot start is reported and the run goes on
// without it; an interrupt during the start ends the run (the start has
// stopped what it began).
func (rs *runState) startPerf(ctx context.Context) error {
	if len(rs.o.Perf) == 0 {
		return nil
	}
	target := rs.o.TargetPackage
	if target == "" && rs.caseInfo != nil && rs.caseInfo.Case != nil {
		target = rs.caseInfo.Case.TargetAppPackage
	}
	p := &perfRun{items: rs.o.Perf, target: target}
	if target == "" {
		p.target = "-"
	}
	rs.perf = p
	rs.o.Progress.Report(device.Event{Phase: "perf", Message: "starting the performance recording (" + strings.Join(p.items, ",") + ")", Case: rs.o.CaseName})
	id, err := rs.o.PerfSessions.Start(ctx, rs.d, target, p.items, rs.perfPoll())
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		p.fail("the performance recording did not start", err)
		return nil
	}
	p.sessionID = id
	return nil
}

// perfPoll polls the session as the replay is polled (its status is a
// local request on the device): perf-start's half-second pauses would add
// up to a second to every run.
func (rs *runState) perfPoll() time.Duration { return min(replayPoll, rs.o.PollInterval) }

// stopPerf stops exactly our recording (once), on a context of its own:
// it runs after timeouts and interrupts too.
func (rs *runState) stopPerf(ctx context.Context) {
	p := rs.perf
	if p == nil || p.sessionID == "" || p.stopped || p.stop != nil {
		return
	}
	cctx, cancel := device.Cleanup(ctx, perfStopWait+5*time.Second)
	defer cancel()
	saved, err := rs.o.PerfSessions.Stop(cctx, rs.d, p.sessionID, perfStopWait, rs.perfPoll())
	p.stop = map[string]any{}
	if err != nil {
		p.fail("the performance recording did not stop", err)
		return
	}
	p.stopped = true
	p.stop = saved
}

// perfEvidence pulls the saved recording into perf/, analyses it there
// (analysis.json, charts/) and holds the budgets against it. verdict is
// the replay's; the result is the run's: a passed replay fails on an
// exceeded budget and is not_tested when a budget was not measured.
func (rs *runState) perfEvidence(ctx context.Context, dir *artifacts.Dir, verdict *fault.Error) *fault.Error {
	p := rs.perf
	if p == nil {
		return verdict
	}
	if p.stopped {
		wait := perfStopWait
		if ctx.Err() != nil {
			// Interrupted: the user waits; what arrives in time is kept.
			wait = perfInterruptedPull
		}
		cctx, cancel := device.Cleanup(ctx, wait)
		files, err := rs.o.PerfSessions.Pull(cctx, rs.d, p.stop, p.sessionID, dir, artifactPerfDir)
		cancel()
		p.files = files
		if err != nil {
			p.fail("pulling the performance recording failed", err)
		} else {
			p.dir, _ = dir.Abs(artifactPerfDir)
			rs.analysePerf(ctx, dir)
		}
	}
	return rs.perfVerdict(verdict)
}

func (rs *runState) analysePerf(ctx context.Context, dir *artifacts.Dir) {
	p := rs.perf
	a, err := perfstats.AnalyzePerformance(context.WithoutCancel(ctx), perfstats.PerfAnalyzeOptions{Input: p.dir})
	if err != nil {
		p.fail("analysing the performance recording failed", err)
		return
	}
	if len(rs.o.PerfBudget) > 0 {
		p.checks = a.CheckBudgets(rs.o.PerfBudget)
		p.verdict = a.Assess(p.checks)
	}
	if err := a.WriteEvidence(dir, artifactPerfDir); err != nil {
		p.fail("writing the performance analysis failed", err)
	}
	p.analysis = a
}

// perfVerdict is the run's failure once the budgets are judged.
func (rs *runState) perfVerdict(verdict *fault.Error) *fault.Error {
	p := rs.perf
	if p == nil || len(rs.o.PerfBudget) == 0 {
		return verdict
	}
	if p.checks == nil {
		// Nothing was recorded or analysed: no budget was measured.
		p.verdict = perfstats.BudgetNotTested
		for _, b := range rs.o.PerfBudget {
			p.checks = append(p.checks, perfstats.BudgetCheck{Budget: b, Status: perfstats.BudgetNotTested, Reason: "the performance recording is missing"})
		}
	}
	if verdict != nil {
		return verdict
	}
	var exceeded, untested []map[string]any
	var texts []string
	for _, c := range p.checks {
		entry := map[string]any{"budget": c.Text, "metric": c.Metric, "stat": c.Stat, "limit": c.Limit}
		if c.Value != nil {
			entry["value"] = *c.Value
		}
		switch c.Status {
		case perfstats.BudgetExceeded:
			exceeded = append(exceeded, entry)
			texts = append(texts, c.Describe())
		case perfstats.BudgetNotTested:
			untested = append(untested, entry)
		}
	}
	switch {
	case len(exceeded) > 0:
		return fault.New(fault.Failed, fault.CodePerfBudgetExceeded, "performance budget exceeded: "+strings.Join(texts, "; ")).With("exceededBudgets", exceeded)
	case len(untested) > 0:
		msg := "a performance budget could not be measured, so the run is not tested"
		if len(p.errs) > 0 {
			msg += " (" + p.errs[0] + ")"
		}
		return fault.New(fault.Transport, fault.CodePerfNotMeasured, msg).With("unmeasuredBudgets", untested)
	}
	return nil
}

// perfReport is the output's "perf" object. Metrics is a pointer so that
// an analysis without metrics prints "metrics":[] and a run without an
// analysis prints no key.
type perfReport struct {
	Analysis  string                     `json:"analysis,omitempty"`
	Budgets   []perfstats.BudgetCheck    `json:"budgets,omitempty"`
	Directory string                     `json:"directory,omitempty"`
	Errors    []string                   `json:"errors,omitempty"`
	Files     []artifacts.FileEntry      `json:"files"`
	Items     []string                   `json:"items"`
	Metrics   *[]perfstats.MetricFigures `json:"metrics,omitempty"`
	SessionID string                     `json:"sessionId,omitempty"`
	Stopped   bool                       `json:"stopped"`
	Target    string                     `json:"target"`
	Verdict   string                     `json:"verdict,omitempty"`
}

// report renders the session, redacted: its errors quote the device.
func (p *perfRun) report(red *redact.Redactor) *perfReport {
	r := &perfReport{Items: redactTexts(red, p.items), Target: red.Text(p.target), Stopped: p.stopped,
		SessionID: red.Text(p.sessionID), Files: p.files, Errors: redactTexts(red, p.errs)}
	if r.Files == nil {
		r.Files = []artifacts.FileEntry{}
	}
	if p.dir != "" {
		r.Directory = red.Text(p.dir)
		if p.analysis != nil {
			r.Analysis = red.Text(filepath.Join(p.dir, perfstats.AnalysisFile))
		}
	}
	if p.analysis != nil {
		m := p.analysis.Summaries()
		r.Metrics = &m
	}
	if p.verdict != "" {
		r.Verdict, r.Budgets = red.Text(p.verdict), p.checks
	}
	return r
}
