package replaycmd

// run and run-batch as a suite across phones (solopi/suite): case files
// and directories beside case names, every connected phone or a list of
// them, retries, flaky verdicts, per-phone JUnit and the results history.
// Without any of the suite's flags both commands keep solopi-ai's
// behaviour (run.go, batch.go).

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/solopi/suite"
	"github.com/solopi-dev/solopi/suitereport"
)

// suiteFlagValues are the suite's flags of run and run-batch.
type suiteFlagValues struct {
	files, dirs          cli.StringSlice
	reimport, replace    bool
	devices              string
	shardAll             bool
	retries              int
	infraRetries         int
	failOnFlaky          bool
	history              string
	noHistory            bool
	importTimeout, ipoll time.Duration
}

// suiteFlagNames are the flags that make run or run-batch a suite.
var suiteFlagNames = []string{"file", "dir", "devices", "shard-all", "retries", "infra-retries", "fail-on-flaky", "history"}

func (s *suiteFlagValues) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "file", Destination: &s.files, Usage: "a case file to run (repeatable): validated and normalised locally, imported when the phone lacks that version"},
		&cli.StringSliceFlag{Name: "dir", Destination: &s.dirs, Usage: "run every *.json case file under this directory, in path order (repeatable)"},
		&cli.BoolFlag{Name: "reimport", Destination: &s.reimport, Usage: "import every case file even when the phone holds the same case"},
		&cli.BoolFlag{Name: "replace", Destination: &s.replace, Usage: "import a case file over a different case of the same name on the phone (otherwise case_name_conflict)"},
		cmdutil.DevicesFlag(&s.devices, "all, or S1,S2,…: run the suite across these phones, each taking the next case when free (default: the selected device)"),
		&cli.BoolFlag{Name: "shard-all", Destination: &s.shardAll, Usage: "run every case on every phone (a compatibility matrix)"},
		&cli.IntFlag{Name: "retries", Destination: &s.retries, Usage: "rerun a failed case up to N times, on any free phone; a failure then a pass is flaky"},
		&cli.IntFlag{Name: "infra-retries", Destination: &s.infraRetries, Value: suite.DefaultInfraRetries, Usage: "rerun a case whose attempt failed for infrastructure reasons (phone, adb, lease) up to N times"},
		&cli.BoolFlag{Name: "fail-on-flaky", Destination: &s.failOnFlaky, Usage: "exit 2 when a case was flaky"},
		&cli.StringFlag{Name: "history", Destination: &s.history, Usage: "the results history (SQLite; default $XDG_DATA_HOME/solopi/history.sqlite)"},
		&cli.BoolFlag{Name: "no-history", Destination: &s.noHistory, Usage: "do not read or append the results history"},
		cmdutil.Seconds("import-timeout", "seconds to wait for each case file's import receipt", 15, &s.importTimeout),
	}
}

// wanted reports whether the command line asks for a suite.
func (s *suiteFlagValues) wanted(g *cmdutil.Globals) bool {
	for _, n := range suiteFlagNames {
		if g.Changed(n) {
			return true
		}
	}
	return false
}

// items are the suite's cases: the names first (--case, then
// --cases-file), then --file in order, then each --dir's files in path
// order. Every file is read and normalised before any phone is touched.
func (s *suiteFlagValues) items(names []string, confirm bool) ([]suite.Item, error) {
	var out []suite.Item
	for _, n := range names {
		out = append(out, suite.Item{Name: n})
	}
	files := append([]string(nil), s.files.Value()...)
	for _, d := range s.dirs.Value() {
		more, err := caseFilesUnder(d)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	for _, f := range files {
		p, err := replay.PrepareImport(f, confirm)
		if err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		out = append(out, suite.Item{Name: p.Case.CaseName, Case: p.Case, File: abs})
	}
	return out, nil
}

// caseFilesUnder lists the *.json regular files under dir, in path order
// (symbolic links are not followed).
func caseFilesUnder(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		e := fault.Usagef(fault.CodeCaseDirUnreadable, "--dir %s is not a readable directory", dir).With("path", dir)
		if err != nil {
			e = fault.Wrap(fault.Invalid, fault.CodeCaseDirUnreadable, "--dir "+dir+" is not a readable directory", err).With("path", dir)
		}
		return nil, e
	}
	var out []string
	err = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() && strings.EqualFold(filepath.Ext(p), ".json") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeCaseDirUnreadable, "--dir "+dir+" cannot be read", err).With("path", dir)
	}
	if len(out) == 0 {
		return nil, fault.Usagef(fault.CodeNoCases, "--dir %s holds no *.json case file", dir).With("path", dir)
	}
	sort.Strings(out)
	return out, nil
}

// serials are the phones --devices names.
func (s *suiteFlagValues) serials(ctx context.Context, g *cmdutil.Globals) ([]string, error) {
	return g.DeviceSerials(ctx, s.devices, g.Changed("devices"))
}

// openHistory opens the results history: a named file must open; the
// default one that cannot is a warning, and the suite runs without.
func (s *suiteFlagValues) openHistory(ctx context.Context, g *cmdutil.Globals) (*history.Store, string, error) {
	if s.noHistory {
		return nil, "", nil
	}
	path := s.history
	named := path != ""
	if !named {
		p, err := history.DefaultPath(g.Env.Getenv)
		if err != nil {
			return nil, "history: " + fault.From(err).Message, nil
		}
		path = p
	}
	st, err := history.Open(ctx, path, history.Options{})
	if err != nil {
		if named {
			return nil, "", err
		}
		return nil, "history: " + fault.From(err).Message, nil
	}
	return st, "", nil
}

// suiteRun is one run of a suite by run or run-batch.
type suiteRun struct {
	name  string
	v     *runFlagValues
	s     *suiteFlagValues
	names []string
}

// runSuite checks everything local, then runs the suite across the phones
// and prints the batch object: solopi-ai's fields, then devices[], each
// result's device, verdict and attempts[], the counts.
func runSuite(ctx context.Context, d cmdutil.DeviceDeps, sr suiteRun) (cmdutil.Result, error) {
	g, v, s := d.G, sr.v, sr.s
	ro, err := v.options(g)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if ro.NoWait {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--no-wait cannot be used with a suite (case files, --devices, retries)")
	}
	if s.infraRetries < 0 || s.retries < 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--retries and --infra-retries cannot be negative")
	}
	items, err := s.items(sr.names, v.confirm)
	if err != nil {
		return cmdutil.Result{}, err
	}
	root := ro.ArtifactsDir
	ro.ArtifactsDir, ro.Overwrite, ro.Progress = "", false, nil
	o := suite.Options{Name: sr.name, Items: items, Retries: s.retries, InfraRetries: s.infraRetries, ShardAll: s.shardAll,
		FailOnFlaky: s.failOnFlaky, Reimport: s.reimport, Replace: s.replace, Run: ro,
		Import: replay.ImportOptions{Timeout: s.importTimeout}, ArtifactsRoot: root}
	// Validate what needs no phone with a placeholder phone list.
	probe := o
	probe.Phones = []suite.Phone{{Serial: "-", Open: func(context.Context) (*device.Device, error) { return nil, nil }}}
	if err := suite.Validate(probe); err != nil {
		return cmdutil.Result{}, err
	}
	if v.junit != "" {
		if _, err := artifacts.JUnitOutput(v.overwrite).CheckFile(v.junit); err != nil {
			return cmdutil.Result{}, err
		}
	}
	wait, err := g.DeviceWait()
	if err != nil {
		return cmdutil.Result{}, err
	}
	serials, err := s.serials(ctx, g)
	if err != nil {
		return cmdutil.Result{}, err
	}
	for _, serial := range serials {
		o.Phones = append(o.Phones, suite.Phone{Serial: serial, Open: func(ctx context.Context) (*device.Device, error) {
			return d.OpenPhone(ctx, serial)
		}})
	}
	if o.Locker, err = g.Locker(); err != nil {
		return cmdutil.Result{}, err
	}
	o.DeviceWait = wait
	store, warning, err := s.openHistory(ctx, g)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if store != nil {
		defer store.Close()
		o.History = store
	}
	var mu sync.Mutex
	runs := map[int]*replay.RunReport{}
	o.Observe = func(i, _ int, rep *replay.RunReport) {
		// Each attempt's own report.html, beside its evidence.
		writeRunReport(rep)
		mu.Lock()
		runs[i] = rep
		mu.Unlock()
	}
	o.Progress = suiteProgress(g.Progress, len(items))
	rep, err := suite.Run(ctx, o)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	fail := rep.Failure()
	out := suitePayload(rep, runs, fail)
	if store != nil {
		out.History = store.Path()
	}
	res := cmdutil.WithFailure(out, fail)
	writeSuiteEvidence(ctx, rep, out, store)
	if v.junit != "" {
		res = writeSuiteJUnit(rep, out, v.junit, v.overwrite, res)
	}
	return res, nil
}

// suiteProgress draws the suite on the status line: cases finished of all,
// the verdicts so far, what each phone does.
func suiteProgress(line *progress.Line, total int) func(suite.Event) {
	if !line.Enabled() {
		return nil
	}
	var mu sync.Mutex
	passed, failed, done := 0, 0, 0
	return func(e suite.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Phase == "finish" {
			done++
			if e.Verdict == suitereport.Passed {
				passed++
			} else {
				failed++
			}
		}
		label := e.Serial
		if e.Case != "" {
			label += " " + e.Case
		}
		line.Update(func(s *progress.State) {
			s.Index, s.Total = min(done, total), total
			s.Phase, s.Label = e.Phase, label
			s.Passed, s.Failed = passed, failed
		})
	}
}

// suiteResult is the object a suite prints: every field of solopi-ai's
// batch object (results[] holds the cases that ran, skipped[] the ones
// never reached), then devices[], per result the phone, the verdict and
// the attempts, the counts. The fields are in the order of their keys,
// the order the map it replaces printed; the evidence and JUnit fields
// are set as they are written.
type suiteResult struct {
	ArtifactsRoot     string               `json:"artifactsRoot,omitempty"`
	BatchID           string               `json:"batchId"`
	BatchJSON         string               `json:"batchJson,omitempty"`
	BatchJSONError    string               `json:"batchJsonError,omitempty"`
	CompletedRuns     int                  `json:"completedRuns"`
	ContinueOnFailure bool                 `json:"continueOnFailure"` // always: a suite runs every case
	Counts            suitereport.Counts   `json:"counts"`
	Devices           []suitereport.Device `json:"devices"`
	DurationMs        int64                `json:"durationMs"`
	Error             string               `json:"error,omitempty"`
	ErrorCode         string               `json:"errorCode,omitempty"`
	FailedRuns        *int                 `json:"failedRuns,omitempty"` // set (0 too) when the suite did not pass
	History           string               `json:"history,omitempty"`
	HistoryJSONError  string               `json:"historyJsonError,omitempty"`
	Index             string               `json:"index,omitempty"`
	IndexError        string               `json:"indexError,omitempty"`
	JUnit             string               `json:"junit,omitempty"`
	JUnitError        string               `json:"junitError,omitempty"`
	Options           suitereport.Options  `json:"options"`
	Report            string               `json:"report,omitempty"`
	ReportError       string               `json:"reportError,omitempty"`
	RequestedRuns     int                  `json:"requestedRuns"`
	Results           []suiteCase          `json:"results"`
	Skipped           []suiteSkip          `json:"skipped"`
	StoppedEarly      bool                 `json:"stoppedEarly"`
	Success           bool                 `json:"success"`
	SuiteJSON         string               `json:"suiteJson,omitempty"`
	Warnings          []string             `json:"warnings"`
}

// suiteCase is one case that ran (or was tried). Run is the last
// attempt's *replay.RunResult, or a missedRun when no replay ran; the
// identities are null until a device gave them.
type suiteCase struct {
	Attempts        []suitereport.Attempt `json:"attempts"`
	CaseFingerprint string                `json:"caseFingerprint,omitempty"`
	CaseName        string                `json:"caseName"`
	Device          string                `json:"device"`
	ErrorCode       string                `json:"errorCode,omitempty"`
	ExitCode        int                   `json:"exitCode"`
	File            string                `json:"file,omitempty"`
	Index           int                   `json:"index"`
	Reason          *suitereport.Problem  `json:"reason,omitempty"`
	RequestID       *string               `json:"requestId"`
	Run             any                   `json:"run"`
	RunID           *string               `json:"runId"`
	State           *string               `json:"state"`
	Verdict         suitereport.Verdict   `json:"verdict"`
}

// missedRun stands for the run of a case no replay ran for (the import
// failed, or no phone could take it): the case's own problem.
type missedRun struct {
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
	Success   bool   `json:"success"`
}

// suiteSkip is a case the suite never reached.
type suiteSkip struct {
	CaseName string               `json:"caseName"`
	Device   string               `json:"device,omitempty"`
	Index    int                  `json:"index"`
	Reason   *suitereport.Problem `json:"reason,omitempty"`
}

// suitePayload is the printed object of the suite rep.
func suitePayload(rep *suitereport.Report, runs map[int]*replay.RunReport, fail *fault.Error) *suiteResult {
	out := &suiteResult{Results: []suiteCase{}, Skipped: []suiteSkip{}}
	for i, c := range rep.Cases {
		if len(c.Attempts) == 0 && c.Verdict == suitereport.Skipped {
			out.Skipped = append(out.Skipped, suiteSkip{Index: i + 1, CaseName: c.Name, Device: c.Device, Reason: c.Reason})
			continue
		}
		r := suiteCase{Index: i + 1, CaseName: c.Name, Verdict: c.Verdict, Attempts: c.Attempts,
			File: c.File, CaseFingerprint: c.Fingerprint, Reason: c.Reason, Device: c.Device}
		if n := len(c.Attempts); n > 0 {
			last := c.Attempts[n-1]
			if c.Device == "" {
				r.Device = last.Device
			}
			r.ErrorCode = last.ErrorCode
		}
		if run := runs[i]; run != nil {
			r.RequestID, r.RunID, r.State = run.Identities()
			r.Run = run.Payload
			r.ExitCode = outcome.ExitOf(run.Err)
		} else {
			// No replay ran (the import failed, or no phone could take
			// the case): the case's own problem stands for the run.
			p := c.Reason
			if p == nil && len(c.Attempts) > 0 {
				last := c.Attempts[len(c.Attempts)-1]
				p = &suitereport.Problem{Code: last.ErrorCode, Message: last.Error}
			}
			if p == nil {
				p = &suitereport.Problem{Code: fault.CodeBatchInfrastructureFailed, Message: "the case did not run"}
			}
			r.Run = missedRun{ErrorCode: p.Code, Error: p.Message}
			if r.ErrorCode == "" {
				r.ErrorCode = p.Code
			}
			r.ExitCode = outcome.ExitFor(fault.Transport)
		}
		out.Results = append(out.Results, r)
	}
	out.Success = fail == nil
	out.BatchID = rep.BatchID
	out.RequestedRuns, out.CompletedRuns = len(rep.Cases), len(out.Results)
	out.StoppedEarly = len(out.Skipped) > 0 || rep.Interrupted
	out.ContinueOnFailure = true
	out.DurationMs, out.Devices, out.Counts, out.Options, out.Warnings = rep.DurationMs, rep.Devices, rep.Counts, rep.Options, rep.Warnings
	if rep.ArtifactsDir != "" {
		out.ArtifactsRoot = rep.ArtifactsDir
		out.SuiteJSON = filepath.Join(rep.ArtifactsDir, suite.ReportFile)
	}
	if fail != nil {
		failed := rep.Counts.Failed + rep.Counts.Error
		out.FailedRuns, out.ErrorCode, out.Error = &failed, fail.Code, fail.Message
	}
	return out
}

// writeSuiteEvidence writes batch.json (the printed object) and
// history.json (the history of the suite's cases, for the report's
// strips) into the batch directory, renders its report.html and the
// root's index. Failures are warnings in the result, never a changed
// verdict.
func writeSuiteEvidence(ctx context.Context, rep *suitereport.Report, out *suiteResult, store *history.Store) {
	if rep.ArtifactsDir == "" {
		return
	}
	if store != nil {
		names := make([]string, len(rep.Cases))
		for i, c := range rep.Cases {
			names[i] = c.Name
		}
		sums, err := store.Summaries(ctx, history.Query{Cases: names})
		var b []byte
		if err == nil {
			b, err = artifacts.MarshalIndent(suiteHistory{History: store.Path(), Cases: sums})
		}
		if err == nil {
			_, err = artifacts.Output{Mode: artifacts.Exclusive}.WriteFile(filepath.Join(rep.ArtifactsDir, suiteHistoryFile), b)
		}
		if err != nil {
			out.HistoryJSONError = err.Error()
		}
	}
	out.BatchJSON, out.BatchJSONError = writeSummary(rep.ArtifactsDir, out)
	if out.BatchJSONError != "" {
		return
	}
	res, err := report.Write(rep.ArtifactsDir, report.Options{})
	if err != nil {
		out.ReportError = err.Error()
		return
	}
	out.Report = res.Path
	out.Index, out.IndexError = writeIndex(filepath.Dir(rep.ArtifactsDir))
}

// suiteHistory is history.json: the history of the suite's cases.
type suiteHistory struct {
	Cases   []history.Summary `json:"cases"`
	History string            `json:"history"`
}

// suiteHistoryFile is the history of a suite's cases in its batch
// directory.
const suiteHistoryFile = "history.json"

// writeIndex renders ROOT/report.html, the index of every batch under the
// artifacts root: its path, or why it could not be written.
func writeIndex(root string) (path, problem string) {
	idx, err := report.WriteIndex(root)
	if err != nil {
		return "", err.Error()
	}
	return idx, ""
}

// writeSuiteJUnit writes the per-phone JUnit; one that cannot be written
// fails a passing suite (CI would gate on a missing file).
func writeSuiteJUnit(rep *suitereport.Report, out *suiteResult, path string, overwrite bool, res cmdutil.Result) cmdutil.Result {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if err := rep.WriteJUnit(abs, overwrite); err != nil {
		out.JUnitError = err.Error()
		if res.Exit == outcome.ExitOK {
			f, none := junitFailure(err), 0
			out.Success, out.ErrorCode, out.Error, out.FailedRuns = false, f.Code, f.Message, &none
			return cmdutil.WithKind(out, fault.Invalid)
		}
		return res
	}
	out.JUnit = abs
	return res
}
