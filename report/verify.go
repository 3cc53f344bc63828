package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// Files of a verification run directory (`verify-run --artifacts`),
// format solopi.ai.verification-report/v1.
const (
	verifyPlan     = "plan.json"
	verifyEvents   = "events.jsonl"
	verifyReport   = "report.json"
	verifySegments = "segments"
	segmentReplay  = "replay"
	segmentCase    = "compiled-case.json"
	segmentAgent   = "agent-transcript.json"
)

func isVerify(e *evidence) bool {
	return e.isFile(verifyPlan) && (e.isFile(verifyReport) || e.isFile(verifyEvents))
}

type verifyView struct {
	Title, Requirement string
	Tree               []acNode
	Scenarios          []scenarioView
	Partial            bool
	// Videos are the run's recordings (--video), one per phone.
	Videos []videoView
}

type acNode struct {
	ID, Text, Status string
	Scenarios        []scNode
}

type scNode struct {
	ID, Title, Status string
	Checkpoints       []cpNode
}

type cpNode struct{ ID, Status, Reason string }

type scenarioView struct {
	ID, Title, Route, Status, Failure string
	DependsOn                         []string
	Preconditions, Cleanup            string
	Checkpoints                       []checkpointView
	Segments                          []segmentView
}

type checkpointView struct {
	ID, Status, Reason, ACs  string
	Oracle, Expected, Actual string
	SegmentID, AfterStep     string
	Evidence                 []evidenceView
}

type segmentView struct {
	ID, Phase, Route, State, Reason string
	AgentDone                       bool
	Duration                        string
	Replay                          *runView
	Agent                           *agentView
	Transcript                      []string
	Evidence                        []evidenceView
	// Timeline is the segment's place on the run's timeline
	// (timeline.json): its start, duration and steps.
	Timeline *segmentTimeline
}

// evidenceView is one entry of the report's evidence list: a file
// (linked, shown when it is an image) or the engine's own note.
type evidenceView struct {
	ID, Type, Path, Href, Content string
	Image                         bool
}

func verifyPage(e *evidence) (*page, error) {
	var plan, rep obj
	if err := e.readJSON(verifyPlan, &plan); err != nil {
		return nil, err
	}
	if e.isFile(verifyReport) {
		if err := e.readJSON(verifyReport, &rep); err != nil {
			return nil, err
		}
	}
	intent := plan.Object("intent")
	req := intent.Object("requirement")
	tree := plan.Object("goalTree")
	v := &verifyView{Title: firstNonEmpty(tree.Display("title"), req.Display("title")), Requirement: firstNonEmpty(rep.Display("requirementId"), req.Display("id"), tree.Display("id")),
		Partial: rep == nil}
	evidence := map[string]obj{}
	for _, ev := range rep.Objects("evidence") {
		evidence[ev.Display("id")] = ev
	}
	timing := segmentTimes(e)
	steps, videos := readVerifyTimeline(e)
	v.Videos = videos
	results := map[string]obj{}
	for _, s := range rep.Objects("scenarios") {
		results[s.Display("scenarioId")] = s
	}
	planned := map[string]obj{}
	for _, s := range intent.Objects("scenarios") {
		planned[s.Display("id")] = s
	}
	// Scenarios in execution order, as the plan lists them.
	order := intent.Texts("executionOrder")
	if len(order) == 0 {
		for _, s := range intent.Objects("scenarios") {
			order = append(order, s.Display("id"))
		}
	}
	cpStatus := map[string]obj{} // scenario/checkpoint -> result
	for _, id := range order {
		sv := scenarioOf(e, id, planned[id], results[id], evidence, timing, steps)
		for _, cp := range results[id].Objects("checkpoints") {
			cpStatus[id+"/"+cp.Display("checkpointId")] = cp
		}
		v.Scenarios = append(v.Scenarios, sv)
	}
	acStatus := map[string]string{}
	for _, ac := range rep.Objects("acceptanceCriteria") {
		acStatus[ac.Display("acceptanceCriterionId")] = ac.Display("status")
	}
	scStatus := map[string]string{}
	for _, s := range v.Scenarios {
		scStatus[s.ID] = s.Status
	}
	for _, ac := range tree.Objects("children") {
		an := acNode{ID: ac.Display("id"), Text: ac.Display("text"), Status: firstNonEmpty(acStatus[ac.Display("id")], "not_run")}
		for _, sc := range ac.Objects("children") {
			sid := sc.Display("id")
			sn := scNode{ID: sid, Title: planned[sid].Display("title"), Status: firstNonEmpty(scStatus[sid], "not_run")}
			for _, cp := range sc.Objects("children") {
				r := cpStatus[sid+"/"+cp.Display("id")]
				sn.Checkpoints = append(sn.Checkpoints, cpNode{ID: cp.Display("id"), Status: firstNonEmpty(r.Display("status"), "not_run"), Reason: r.Display("reason")})
			}
			an.Scenarios = append(an.Scenarios, sn)
		}
		v.Tree = append(v.Tree, an)
	}
	status := firstNonEmpty(rep.Display("status"), "partial")
	detail := ""
	for _, s := range v.Scenarios {
		if s.Status == status && s.Failure != "" {
			detail = s.ID + ": " + s.Failure
			break
		}
	}
	if v.Partial {
		detail = "No report.json: the run was interrupted; what the events recorded is shown."
	}
	started, _ := rep.Integer("startedAt")
	finished, _ := rep.Integer("finishedAt")
	p := &page{Kind: kindVerify, Verify: v, Title: "Verification " + v.Requirement, Media: len(v.Videos) > 0,
		Banner: banner{Verdict: status, Headline: strings.TrimSpace(v.Requirement + " " + v.Title), Detail: detail},
		Facts: []fact{{Label: "reportId", Value: rep.Display("reportId"), Mono: true},
			{Label: "planFingerprint", Value: rep.Display("planFingerprint"), Mono: true},
			{Label: "outcomeFingerprint", Value: rep.Display("outcomeFingerprint"), Mono: true},
			{Label: "started", Value: epochText(started)}, {Label: "finished", Value: epochText(finished)}}}
	if finished >= started && started > 0 {
		p.Facts = append(p.Facts, fact{Label: "duration", Value: humanMillis(finished - started)})
	}
	return p, nil
}

func scenarioOf(e *evidence, id string, plan, res obj, evidence map[string]obj, timing map[string]string, steps map[string]*segmentTimeline) scenarioView {
	sv := scenarioView{ID: id, Title: plan.Display("title"), Route: firstNonEmpty(res.Display("route"), plan.Display("route")),
		Status: firstNonEmpty(res.Display("status"), "not_run"), DependsOn: plan.Texts("dependsOn"),
		Preconditions: res.Object("preconditions").Display("status"), Cleanup: res.Object("cleanup").Display("status")}
	if f := res.Object("failure"); f != nil {
		sv.Failure = strings.Join(keyValues(f), " · ")
	}
	planCP := map[string]obj{}
	for _, cp := range plan.Objects("checkpoints") {
		planCP[cp.Display("id")] = cp
	}
	failures := map[string]string{} // segmentId -> replay failure message
	for _, seg := range res.Objects("segments") {
		sg := segmentOf(e, seg, evidence, timing)
		sg.Timeline = steps[id+"/"+sg.ID]
		seekReplaySteps(sg.Replay, sg.Timeline)
		if sg.Replay != nil {
			if f := firstFailure(sg.Replay.Results); f != nil {
				failures[sg.ID] = f.Message
			}
		}
		sv.Segments = append(sv.Segments, sg)
	}
	cps := res.Objects("checkpoints")
	if res == nil {
		cps = plan.Objects("checkpoints")
	}
	for _, cp := range cps {
		cid := firstNonEmpty(cp.Display("checkpointId"), cp.Display("id"))
		pc := planCP[cid]
		oracle := cp.Object("oracle")
		if oracle == nil {
			oracle = pc.Object("oracle")
		}
		cv := checkpointView{ID: cid, Status: firstNonEmpty(cp.Display("status"), "not_run"), Reason: cp.Display("reason"),
			ACs: strings.Join(cp.Texts("acceptanceCriteria"), ", "), SegmentID: pc.Display("segmentId"), AfterStep: pc.Display("afterStep"),
			Oracle: oracleText(oracle), Expected: oracle.Display("operator") + " " + quoteText(oracle.Display("expected")), Actual: cp.Display("actual")}
		if _, ok := cp["actual"]; ok && cv.Actual == "" {
			cv.Actual = `""`
		} else if cv.Actual != "" {
			cv.Actual = quoteText(cv.Actual)
		}
		if cv.Actual == "" && cv.Status == "failed" && failures[cv.SegmentID] != "" {
			cv.Actual = "replay: " + failures[cv.SegmentID]
		}
		for _, ref := range cp.Texts("evidenceRefs") {
			cv.Evidence = append(cv.Evidence, evidenceOf(e, ref, evidence[ref]))
		}
		sv.Checkpoints = append(sv.Checkpoints, cv)
	}
	return sv
}

func oracleText(o obj) string {
	if o == nil {
		return ""
	}
	sel := o.Object("selector")
	return strings.TrimSpace(o.Display("type") + " " + strings.Join(keyValues(sel), ", ") + " → " + firstNonEmpty(o.Display("field"), "text"))
}

func quoteText(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), `\u003c`, "<")
}

func segmentOf(e *evidence, seg obj, evidence map[string]obj, timing map[string]string) segmentView {
	id := seg.Display("segmentId")
	sg := segmentView{ID: id, Phase: seg.Display("phase"), Route: seg.Display("route"), State: firstNonEmpty(seg.Display("state"), "not_run"),
		Reason: seg.Display("reason"), Duration: timing[id]}
	sg.AgentDone, _ = seg.Flag("agentDone")
	for _, ref := range seg.Texts("evidenceRefs") {
		sg.Evidence = append(sg.Evidence, evidenceOf(e, ref, evidence[ref]))
	}
	if id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return sg
	}
	dir := verifySegments + "/" + id
	if !e.isDir(dir) {
		return sg
	}
	if replay := dir + "/" + segmentReplay; e.isDir(replay) {
		if sub, err := e.sub(replay); err == nil {
			var caseJSON []byte
			if e.isFile(dir + "/" + segmentCase) {
				caseJSON, _, _ = e.read(dir+"/"+segmentCase, maxJSONBytes)
			}
			if isRun(sub) {
				if rv, _, err := readRun(sub, caseJSON); err == nil {
					rv.rebase(replay)
					sg.Replay = rv
				}
			}
			sub.close()
		}
	}
	if list := trajectories(e, dir); len(list) > 0 {
		var t obj
		if e.readJSON(list[0], &t) == nil {
			sg.Agent = agentTimeline(e, t, dir)
		}
	}
	if e.isFile(dir + "/" + segmentAgent) {
		var tr obj
		if e.readJSON(dir+"/"+segmentAgent, &tr) == nil {
			for _, ev := range tr.Objects("events") {
				sg.Transcript = append(sg.Transcript, ev.Display("type")+": "+strings.Join(keyValues(ev, "type"), " · "))
			}
		}
	}
	return sg
}

func evidenceOf(e *evidence, id string, ev obj) evidenceView {
	x := evidenceView{ID: id, Type: ev.Display("type")}
	if ev == nil {
		x.Content = "not in the report's evidence list"
		return x
	}
	if p := ev.Display("path"); p != "" {
		x.Path = path.Base(strings.ReplaceAll(p, "\\", "/"))
		if rel, ok := e.local(p); ok {
			x.Href, x.Path, x.Image = href(rel), rel, isImage(rel)
		}
		return x
	}
	x.Content = compact(ev["content"])
	return x
}

// segmentTimes reads how long each segment ran from events.jsonl.
func segmentTimes(e *evidence) map[string]string {
	out := map[string]string{}
	b, _, err := e.read(verifyEvents, maxJSONBytes)
	if err != nil {
		return out
	}
	started := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev obj
		if canonjson.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		ts, _ := ev.Integer("timestamp")
		id := ev.Display("segmentId")
		switch ev.Display("type") {
		case "segment_started":
			started[id] = ts
		case "segment_finished":
			if s, ok := started[id]; ok && ts >= s {
				out[id] = humanMillis(ts - s)
			}
		}
	}
	return out
}

// rebase makes a run's links relative to a report prefix directories up.
func (v *runView) rebase(prefix string) {
	p := href(prefix) + "/"
	for i := range v.Images {
		v.Images[i].Src = p + v.Images[i].Src
	}
	if v.Logcat != nil {
		v.Logcat.Href = p + v.Logcat.Href
	}
	if v.DeviceLog != nil {
		v.DeviceLog.Href = p + v.DeviceLog.Href
	}
	if v.Manifest != nil {
		for i := range v.Manifest.Files {
			v.Manifest.Files[i].Href = p + v.Manifest.Files[i].Href
		}
	}
}
