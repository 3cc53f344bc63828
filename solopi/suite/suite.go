// Package suite runs a suite of cases across phones: one dynamic queue in
// this process hands each free phone the next case, the longest (by the
// history's median duration) first; every phone passes the readiness
// checks before its first case, and one that fails them is left out with
// its reason; a phone that drops mid-suite is retired and its case goes
// back to the queue. Test failures are retried on their own budget
// (Retries), infrastructure failures on another (InfraRetries), and never
// count as each other: a case that fails and then passes is flaky. Every
// attempt keeps its own evidence directory; an interrupt cancels exactly
// the running replays and keeps what finished. The result is a
// suitereport.Report, the model a farm task fills too.
package suite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicelock"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// DefaultInfraRetries is the CLI's default --infra-retries.
const DefaultInfraRetries = 2

// Item is one case of the suite.
type Item struct {
	// Name is the case's name on the phones (unique in the suite).
	Name string
	// Case is the local case, normalised (casefile.Normalize); it is
	// imported on a phone that does not hold it (Options.Reimport,
	// Options.Replace). Nil: the case is already on the phones under Name.
	Case *casefile.Case
	// File is where Case came from (reported only).
	File string
}

// Phone is one phone offered to the suite.
type Phone struct {
	Serial string
	// Open opens the phone's channel (a session: SoloPi answers, its
	// versions are checked). It is called once, after the phone's lock is
	// taken; a failure leaves the phone out.
	Open func(ctx context.Context) (*device.Device, error)
}

// Event is a step of the suite, for a progress display.
type Event struct {
	Serial  string
	Case    string
	Attempt int
	// Phase is ready, left-out, import, start, finish or retired.
	Phase   string
	Verdict suitereport.Verdict
	Message string
}

// Options configure Run.
type Options struct {
	// Name names the suite (the JUnit root; default "solopi").
	Name   string
	Items  []Item
	Phones []Phone
	// Retries reruns a case that failed, on any free phone.
	Retries int
	// InfraRetries reruns a case whose attempt failed for infrastructure
	// reasons (DefaultInfraRetries is the CLI's default).
	InfraRetries int
	// ShardAll runs every case on every phone (a compatibility matrix);
	// its retries stay on that phone.
	ShardAll    bool
	FailOnFlaky bool
	// Reimport imports every case file even when the phone holds the same
	// case; Replace imports it over a different case of the same name
	// (otherwise case_name_conflict).
	Reimport, Replace bool
	// Seed decrypts encrypted parameters as the phones do, for the content
	// fingerprint (default paramcrypt.DefaultSeed).
	Seed string
	// Run is the template of every attempt (timeouts, target package,
	// evidence, secrets); CaseName, ArtifactsDir, CaseFingerprint and, for
	// a case file, Encrypted are set per attempt. Its Progress is called
	// from every phone's worker at once.
	Run    replay.RunOptions
	Import replay.ImportOptions
	// ArtifactsRoot receives the evidence: ROOT/batch-<id>/<case>/attempt-<n>/
	// (with ShardAll <case>/<serial>/attempt-<n>/) and suite.json.
	ArtifactsRoot string
	// History, when set, orders the queue by median duration and receives
	// one row per attempt.
	History *history.Store
	// Locker, when set, takes each phone's lock; nil when the caller holds
	// the locks. A busy phone is left out while others are free; when all
	// are busy the suite waits up to DeviceWait for one.
	Locker     *devicelock.Locker
	DeviceWait time.Duration
	// Clock dates the timeline (nil: the real clock).
	Clock clock.Clock
	// BatchID names the batch (default a new id).
	BatchID  string
	Progress func(Event)
	// Observe, when set, receives every replay an attempt ran, with the
	// index of its case in the report and the attempt's number (the CLI
	// prints the last one's payload and renders its report.html). It is
	// called from every phone's worker at once.
	Observe func(caseIndex, attempt int, rep *replay.RunReport)
}

// ReportFile is the report's file in the batch directory.
const ReportFile = suitereport.File

// Validate checks what needs no phone.
func Validate(o Options) error {
	if len(o.Items) == 0 {
		return fault.Usage(fault.CodeNoCases, "the suite names no case (--case, --file or --dir)")
	}
	seen := map[string]bool{}
	for i, it := range o.Items {
		if strings.TrimSpace(it.Name) == "" {
			return fault.Usagef(fault.CodeInvalidOption, "case %d has an empty name", i+1)
		}
		if it.Case != nil && it.Case.CaseName != it.Name {
			return fault.Usagef(fault.CodeInvalidOption, "case %d is named %q but its file names %q", i+1, it.Name, it.Case.CaseName)
		}
		if seen[it.Name] {
			return fault.Usagef(fault.CodeDuplicateCaseName, "the suite names the case %q twice; case names identify results and must be unique", it.Name).With("caseName", it.Name)
		}
		seen[it.Name] = true
	}
	if len(o.Phones) == 0 {
		return fault.Usage(fault.CodeNoDevices, "the suite names no phone")
	}
	serials := map[string]bool{}
	for _, p := range o.Phones {
		if p.Serial == "" || p.Open == nil {
			return fault.Usage(fault.CodeNoDevices, "a phone of the suite has no serial or no way to open it")
		}
		if serials[p.Serial] {
			return fault.Usagef(fault.CodeInvalidOption, "the phone %s is named twice", p.Serial)
		}
		serials[p.Serial] = true
	}
	if o.Retries < 0 || o.InfraRetries < 0 {
		return fault.Usage(fault.CodeInvalidOption, "retries cannot be negative")
	}
	ro := o.Run
	ro.CaseName = o.Items[0].Name
	if err := ro.ValidateSubRun(o.ArtifactsRoot != ""); err != nil {
		return err
	}
	if o.ArtifactsRoot != "" {
		if err := artifacts.Check(o.ArtifactsRoot, artifacts.EvidenceOverwrite); err != nil {
			return err
		}
	}
	return nil
}

// runner is one Run.
type runner struct {
	o      Options
	clk    clock.Clock
	seed   string
	batch  string // ArtifactsRoot/batch-<id>, "" without evidence
	mu     sync.Mutex
	report *suitereport.Report
	// dirs are the cases' evidence directory names (unique).
	dirs []string
	// fps are the case files' content fingerprints.
	fps []string
}

// Run runs the suite. It returns an error only when nothing could run
// (bad options, no usable phone, a case name conflict); otherwise the
// report says what happened, and Report.Failure is its outcome.
func Run(ctx context.Context, o Options) (*suitereport.Report, error) {
	if err := Validate(o); err != nil {
		return nil, err
	}
	r := &runner{o: o, clk: clock.Or(o.Clock), seed: o.Seed}
	if r.seed == "" {
		r.seed = paramcrypt.DefaultSeed
	}
	id := o.BatchID
	if id == "" {
		id = device.NewRequestID()
	}
	name := o.Name
	if name == "" {
		name = "solopi"
	}
	r.report = &suitereport.Report{BatchID: id, Name: name, StartedAt: r.clk.Now(),
		Options: suitereport.Options{Retries: o.Retries, InfraRetries: o.InfraRetries, ShardAll: o.ShardAll, FailOnFlaky: o.FailOnFlaky}}
	if err := r.prepareEvidence(); err != nil {
		return nil, err
	}
	if err := r.fingerprints(); err != nil {
		return nil, err
	}
	phones, err := r.setUp(ctx)
	defer func() {
		for _, p := range phones {
			p.close()
		}
	}()
	if err != nil {
		return nil, err
	}
	q := r.newQueue(ctx, phones)
	var wg sync.WaitGroup
	for _, p := range phones {
		if !p.usable {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, q, p)
		}()
	}
	wg.Wait()
	q.close()
	return r.finish(ctx, q), nil
}

// prepareEvidence names the batch directory and each case's directory.
func (r *runner) prepareEvidence() error {
	seen := map[string]bool{}
	for _, it := range r.o.Items {
		base := artifacts.SanitizeName(it.Name)
		d := base
		for n := 2; seen[strings.ToLower(d)]; n++ {
			d = fmt.Sprintf("%s-%d", base, n)
		}
		seen[strings.ToLower(d)] = true
		r.dirs = append(r.dirs, d)
	}
	if r.o.ArtifactsRoot == "" {
		return nil
	}
	root, err := filepath.Abs(filepath.Join(r.o.ArtifactsRoot, "batch-"+r.report.BatchID))
	if err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "the artifacts root cannot be made absolute", err)
	}
	if err := artifacts.Check(root, artifacts.EvidenceExclusive); err != nil {
		return err
	}
	r.batch = root
	r.report.ArtifactsDir = root
	return nil
}

// fingerprints computes each case file's content fingerprint.
func (r *runner) fingerprints() error {
	r.fps = make([]string, len(r.o.Items))
	for i, it := range r.o.Items {
		if it.Case == nil {
			continue
		}
		fp, err := casefile.ContentFingerprint(it.Case, r.seed)
		if err != nil {
			if e := replay.CaseFileError(err); e != nil {
				return e.With("caseName", it.Name)
			}
			return fault.Wrap(fault.Invalid, fault.CodeInvalidCase, err.Error(), err).With("caseName", it.Name)
		}
		r.fps[i] = fp
	}
	return nil
}

func (r *runner) progress(e Event) {
	if r.o.Progress != nil {
		r.o.Progress(e)
	}
}

// finish completes the report: unreached cases are skipped (interrupted)
// or error (no phone could take them), the verdicts and counts derived,
// suite.json written.
func (r *runner) finish(ctx context.Context, q *queue) *suitereport.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.report
	for _, j := range q.jobs {
		c := &rep.Cases[j.index]
		if j.reason != nil && c.Reason == nil {
			c.Reason = j.reason
			c.Verdict = suitereport.Error
		}
		// Not finished, or its last attempt cancelled: the interrupt
		// stopped it (an interrupt after the last case changes nothing).
		cut := !j.done || len(c.Attempts) > 0 && c.Attempts[len(c.Attempts)-1].Verdict == suitereport.Cancelled
		if cut && ctx.Err() != nil {
			rep.Interrupted = true
			if c.Reason == nil {
				c.Reason = interrupted
			}
		}
	}
	rep.Finish(r.clk.Now())
	if r.batch != "" {
		if err := rep.WriteFile(r.batch); err != nil {
			rep.Warnings = append(rep.Warnings, ReportFile+": "+fault.From(err).Message)
		}
	}
	return rep
}
