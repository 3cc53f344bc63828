package report

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
)

// Files of a run evidence directory (`run --artifacts`).
const (
	runResultFile = "result.json"
	runScreen     = "screen.png"
	runLogcat     = "logcat.txt"
	runDevice     = "device"
	runCaseFile   = "case.json"  // the case as replayed; written from phase 2 on
	runStepsFile  = "steps.json" // the step timeline read from the device's log
	runVideo      = "video.mp4"
	runPerfDir    = "perf" // run --perf: the recording's CSVs, analysis.json, charts/
	// videoPartSeconds is screenrecord's time limit, at which a recording
	// rolls over to its next part (video-1.mp4, video-2.mp4, ...).
	videoPartSeconds = 180
)

// isRun: the device's status of the run, with the manifest that binds
// the directory to it (or, for evidence older than manifests, the
// screenshot and logcat beside it).
func isRun(e *evidence) bool {
	return e.isFile(runResultFile) && (e.isFile(artifacts.ManifestName) || e.isFile(runScreen) || e.isFile(runLogcat))
}

type runView struct {
	State     string
	Error     string
	Results   []runResult
	Steps     []runStep
	StepsNote string
	DeviceLog *textBlock
	Images    []image
	Logcat    *logExcerpt
	Manifest  *manifestView
	// Timed: the steps carry the device log's times (steps.json).
	Timed bool
	// Videos are the run's recording parts, in order.
	Videos []string
	// Perf is the performance recording (run --perf), PerfNote why it
	// cannot be shown.
	Perf     *perfView
	PerfNote string
}

type runResult struct {
	CaseName, Status, Message, StepID, Target, Platform string
	Step                                                string
	Start, End                                          string
	DurationMs                                          int64
}

// runStep is one step of the replayed case with what became of it.
type runStep struct {
	Index          int
	StepID, Action string
	Detail         string
	Status         string // passed, failed, not_reached, unknown, unfinished
	Message        string
	// From the timeline (steps.json): when the step began after the
	// replay's start and how long it took; Timed says they are known.
	Timed      bool
	OffsetMs   int64
	DurationMs int64
	// Shot is the failed step's screenshot; Seek a link that plays the
	// recording from the step's start.
	Shot string
	Seek string
}

// timelineFile is what the report reads of steps.json.
type timelineFile struct {
	VideoLeadMs *int64 `json:"videoLeadMs"`
	Steps       []struct {
		Index      int    `json:"index"`
		StepID     string `json:"stepId"`
		Action     string `json:"action"`
		Status     string `json:"status"`
		OffsetMs   int64  `json:"offsetMs"`
		DurationMs int64  `json:"durationMs"`
		Message    string `json:"message"`
		Screenshot string `json:"screenshot"`
	} `json:"steps"`
}

type textBlock struct {
	Name, Href string
	Lines      []string
	Cut        bool
}

type manifestView struct {
	Schema, CreatedAt, RunID string
	Complete                 bool
	Files                    []fileRow
	Skipped                  []string
	Errors                   []string
}

func runPage(e *evidence) (*page, error) {
	v, status, err := readRun(e, nil)
	if err != nil {
		return nil, err
	}
	p := &page{Kind: kindRun, Run: v, Media: len(v.Videos) > 0}
	name := status.Display("caseName")
	p.Title = "Run " + firstNonEmpty(name, status.Display("runId"))
	p.Banner = banner{Verdict: firstNonEmpty(v.State, "unknown"), Headline: name}
	if f := firstFailure(v.Results); f != nil {
		p.Banner.Detail = f.Message
		if f.StepID != "" || f.Step != "" {
			p.Banner.Detail = "step " + strings.TrimSpace(f.Step+" "+f.StepID) + ": " + f.Message
		}
	} else if v.Error != "" {
		p.Banner.Detail = v.Error
	}
	perfVerdict, perfDetail := "", ""
	if pv := v.Perf; pv != nil {
		perfVerdict, perfDetail = pv.Verdict, pv.Assessment
	} else if rp := status.Object("perf"); rp != nil {
		// The recording cannot be read (PerfNote says why): the run's
		// result still says what its budgets decided.
		perfVerdict, perfDetail = rp.Display("verdict"), v.PerfNote
	}
	if v.State == "passed" && (perfVerdict == "failed" || perfVerdict == "not_tested") {
		// The replay passed; its performance budgets decide the run.
		p.Banner.Verdict, p.Banner.Detail = perfVerdict, perfDetail
	}
	dur, _ := status.Integer("durationMs")
	p.Facts = []fact{
		{Label: "case", Value: name},
		{Label: "runId", Value: status.Display("runId"), Mono: true},
		{Label: "requestId", Value: status.Display("requestId"), Mono: true},
		{Label: "started", Value: epochOf(status, "startedAt")},
		{Label: "finished", Value: epochOf(status, "finishedAt")},
		{Label: "duration", Value: humanMillis(dur)},
	}
	if len(v.Results) > 0 {
		r := v.Results[0]
		p.Facts = append(p.Facts, fact{Label: "app", Value: r.Target}, fact{Label: "device", Value: r.Platform})
	}
	if m := v.Manifest; m != nil {
		p.Facts = append(p.Facts, fact{Label: "evidence", Value: map[bool]string{true: "complete", false: "incomplete"}[m.Complete]})
	}
	return p, nil
}

func epochOf(m obj, key string) string {
	ms, _ := m.Integer(key)
	return epochText(ms)
}

func firstFailure(rs []runResult) *runResult {
	for i := range rs {
		if rs[i].Status == "failed" || rs[i].Message != "" {
			return &rs[i]
		}
	}
	return nil
}

// readRun reads a run directory. caseJSON is the replayed case when it is
// kept elsewhere (a verification segment's compiled case); nil reads
// case.json beside the result. Links are relative to the run directory
// (see rebase).
func readRun(e *evidence, caseJSON []byte) (*runView, obj, error) {
	var status obj
	if err := e.readJSON(runResultFile, &status); err != nil {
		return nil, nil, err
	}
	v := &runView{State: status.Display("state"), Error: status.Display("error")}
	shotNames := map[string]string{} // device path -> screenshotFiles key
	var failed *obj
	for _, r := range status.Objects("results") {
		rr := runResult{CaseName: r.Display("caseName"), Status: r.Display("status"), Message: r.Display("exceptionMessage"),
			StepID: r.Display("exceptionStepId"), Step: r.Display("exceptionStep"),
			Target:   strings.TrimSpace(r.Display("targetApp") + " " + r.Display("targetAppPackage") + " " + r.Display("targetAppVersion")),
			Platform: strings.TrimSpace(r.Display("platform") + " " + r.Display("platformVersion")),
			Start:    epochOf(r, "startTime"), End: epochOf(r, "endTime")}
		if s, ok := r.Integer("startTime"); ok {
			if end, ok := r.Integer("endTime"); ok && end >= s {
				rr.DurationMs = end - s
			}
		}
		v.Results = append(v.Results, rr)
		if failed == nil && (rr.Status == "failed" || rr.Message != "") {
			r := r
			failed = &r
		}
		for k, p := range r.Object("screenshotFiles") {
			if s, ok := p.(string); ok {
				shotNames[s] = k
			}
		}
	}
	var manifest artifacts.Manifest
	if e.isFile(artifacts.ManifestName) {
		if err := e.readJSON(artifacts.ManifestName, &manifest); err != nil {
			return nil, nil, err
		}
		v.Manifest = manifestOf(manifest)
	}
	v.Steps, v.StepsNote = runSteps(e, caseJSON, v.State, failed)
	v.Videos = videoParts(e, ".")
	if e.isFile(runStepsFile) {
		var tl timelineFile
		if err := e.readJSON(runStepsFile, &tl); err != nil {
			v.StepsNote = strings.TrimSpace(v.StepsNote + " The step timeline cannot be read: " + err.Error())
		} else {
			v.Steps, v.Timed = timeSteps(e, v.Steps, tl, v.Videos), true
		}
	}
	v.Perf, v.PerfNote = runPerf(e)
	v.DeviceLog = deviceLog(e, manifest)
	v.Images = runImages(e, manifest, shotNames)
	v.Logcat = logcatExcerpt(e, status, failed, manifest, v.DeviceLog)
	return v, status, nil
}

func manifestOf(m artifacts.Manifest) *manifestView {
	mv := &manifestView{Schema: m.Schema, CreatedAt: m.CreatedAt, RunID: m.RunID, Complete: m.Complete, Errors: m.Errors}
	for _, f := range m.Files {
		mv.Files = append(mv.Files, fileRow{Path: f.Path, Href: href(f.Path), SHA256: f.SHA256, Size: f.Size, Source: f.Source})
	}
	for _, s := range m.Skipped {
		mv.Skipped = append(mv.Skipped, s.Source+": "+s.Reason)
	}
	return mv
}

// runSteps is the replayed case's step list with the failing step marked.
// The steps come from case.json when the run wrote it; without it only the
// failing step is known (from the device's result).
func runSteps(e *evidence, caseJSON []byte, state string, failed *obj) ([]runStep, string) {
	failIdx, hasIdx := int64(-1), false
	failID, msg := "", ""
	if failed != nil {
		failIdx, hasIdx = (*failed).Integer("exceptionStep")
		failID, msg = (*failed).Display("exceptionStepId"), (*failed).Display("exceptionMessage")
	}
	if caseJSON == nil && e.isFile(runCaseFile) {
		b, _, err := e.read(runCaseFile, maxJSONBytes)
		if err != nil {
			return nil, "The step list cannot be read: " + err.Error()
		}
		caseJSON = b
	}
	if caseJSON == nil {
		if failed == nil {
			return nil, "The step list is not in this evidence directory (no " + runCaseFile + ")."
		}
		s := runStep{Index: int(failIdx), StepID: failID, Status: "failed", Message: msg}
		if !hasIdx {
			s.Index = -1
		}
		return []runStep{s}, "Only the failing step is known: this evidence directory has no " + runCaseFile + "."
	}
	c, err := casefile.Parse(caseJSON)
	if err != nil {
		return nil, "The step list cannot be read: " + err.Error()
	}
	ds, err := casefile.List(c)
	if err != nil {
		return nil, "The step list cannot be read: " + err.Error()
	}
	out := make([]runStep, len(ds))
	for i, d := range ds {
		s := runStep{Index: d.Index, StepID: d.StepID, Action: firstNonEmpty(d.ActionCode, d.ActionEnum), Detail: stepDetail(d.Step)}
		at := hasIdx && int64(i) == failIdx || !hasIdx && failID != "" && d.StepID == failID
		switch {
		case failed != nil && at:
			s.Status, s.Message = "failed", msg
		case failed != nil && (hasIdx && int64(i) > failIdx):
			s.Status = "not_reached"
		case failed != nil || state == "passed":
			s.Status = "passed"
		default:
			s.Status = "unknown"
		}
		out[i] = s
	}
	return out, ""
}

// stepDetail says what a step acts on: its node's text, id or
// description, and the asserted content.
func stepDetail(s casefile.Step) string {
	var parts []string
	if n := s.Node; n != nil {
		for _, v := range []*string{n.Text, n.ResourceID, n.Description} {
			if v != nil && *v != "" {
				parts = append(parts, *v)
				break
			}
		}
	}
	for _, k := range []string{"assertMode", "assertInputContent", "text"} {
		if v, ok := s.Method.Param(k); ok && v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " · ")
}

// deviceLog is the device-side replay log pulled into device/.
func deviceLog(e *evidence, m artifacts.Manifest) *textBlock {
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, runDevice+"/") && strings.HasSuffix(f.Path, ".log") && e.isFile(f.Path) {
			b, cut, err := e.read(f.Path, 256<<10)
			if err != nil {
				continue
			}
			return &textBlock{Name: f.Path, Href: href(f.Path), Lines: splitLines(string(b)), Cut: cut}
		}
	}
	return nil
}

// runImages lists the device's screenshots of the run (failure first),
// then the screen after the run.
func runImages(e *evidence, m artifacts.Manifest, names map[string]string) []image {
	var shots []image
	for _, f := range m.Files {
		if !strings.HasPrefix(f.Path, runDevice+"/") || !isImage(f.Path) || !e.isFile(f.Path) {
			continue
		}
		name := names[f.Source]
		if name == "" {
			name = path.Base(f.Path)
		}
		shots = append(shots, image{Src: href(f.Path), Caption: name, Mark: strings.Contains(strings.ToLower(name), "fail")})
	}
	if len(m.Files) == 0 { // no manifest: list device/ as it is
		for _, de := range e.entries(runDevice) {
			rel := runDevice + "/" + de.Name()
			if isImage(rel) && e.isFile(rel) {
				shots = append(shots, image{Src: href(rel), Caption: de.Name(), Mark: strings.Contains(strings.ToLower(de.Name()), "fail")})
			}
		}
	}
	sort.SliceStable(shots, func(i, j int) bool { return shots[i].Mark && !shots[j].Mark })
	if e.isFile(runScreen) {
		shots = append(shots, image{Src: runScreen, Caption: "screen after the run"})
	}
	return shots
}

func splitLines(s string) []string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// timeSteps puts the timeline on the step list: each step's time and
// duration, the failed step's message and screenshot, and with a
// recording a link to the step's moment in it. Steps the case does not
// list (no case.json) are taken from the timeline.
func timeSteps(e *evidence, steps []runStep, tl timelineFile, videos []string) []runStep {
	byIndex := map[int]int{}
	for i, s := range steps {
		if s.Index >= 0 {
			byIndex[s.Index] = i
		}
	}
	for _, t := range tl.Steps {
		i, ok := byIndex[t.Index]
		if !ok {
			steps = append(steps, runStep{Index: t.Index, StepID: t.StepID, Action: t.Action})
			i = len(steps) - 1
			byIndex[t.Index] = i
		}
		s := &steps[i]
		s.Timed, s.OffsetMs, s.DurationMs = true, t.OffsetMs, t.DurationMs
		s.Status = firstNonEmpty(t.Status, s.Status)
		if t.Message != "" {
			s.Message = t.Message
		}
		if t.Screenshot != "" && e.isFile(t.Screenshot) {
			s.Shot = href(t.Screenshot)
		}
		if len(videos) > 0 && tl.VideoLeadMs != nil {
			at := float64(*tl.VideoLeadMs+t.OffsetMs) / 1000
			part := min(int(at/videoPartSeconds), len(videos)-1)
			at -= float64(part * videoPartSeconds)
			s.Seek = href(videos[part]) + "#t=" + strconv.FormatFloat(max(at, 0), 'f', 1, 64)
		}
	}
	sort.SliceStable(steps, func(a, b int) bool { return steps[a].Index < steps[b].Index })
	return steps
}
