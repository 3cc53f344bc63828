package report

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

// ScreensDir holds the screenshots of an agent run beside its trajectory,
// one file per distinct screenshot named by its SHA-256 (the digest the
// trajectory's observation events record): screens/<sha256>.png.
const ScreensDir = "screens"

// trajectories lists the JSON files directly in rel that are agent
// trajectories (schema 1.3 and compatible: schema_version and run_id).
func trajectories(e *evidence, rel string) []string {
	var out []string
	for _, de := range e.entries(rel) {
		name := join(rel, de.Name())
		if !strings.EqualFold(path.Ext(name), ".json") || !e.isFile(name) {
			continue
		}
		head, _, err := e.read(name, 4096)
		if err != nil {
			continue
		}
		if bytes.Contains(head, []byte(`"schema_version"`)) && bytes.Contains(head, []byte(`"run_id"`)) {
			out = append(out, name)
		}
	}
	return out
}

type agentView struct {
	Task       string
	Trajectory string
	Steps      []agentStep
	Calls      []fact
	Counters   []fact
	Final      *image
	FinalNote  string
	Missing    int // screenshots named by the trajectory but not beside it
	Overall    []agentLine
	// Videos are the run's recording parts (agent-run --video), beside
	// the trajectory.
	Videos []string
}

// agentStep is one observe → plan → act → verify cycle.
type agentStep struct {
	N                  int
	Class              string
	Screen             *image
	Action, Call       string
	Reason, ScreenDesc string
	Lines              []agentLine
	Tokens             string
	// From the events' timestamps: the step's start after the run's and
	// how long it took (to the next step's first event, or the run's
	// last); Timed says they are known. Message is a failing step's
	// first failure; Seek plays the recording from the step's start.
	Timed                bool
	OffsetMs, DurationMs int64
	Message, Seek        string
}

// agentLine is one event of a step as a person reads it.
type agentLine struct {
	Kind, Verdict, Text string
}

func agentPage(e *evidence, name string) (*page, error) {
	if name == "" {
		list := trajectories(e, ".")
		if len(list) != 1 {
			return nil, fault.Usage(fault.CodeUnknownEvidenceKind, "name the trajectory file of the agent run").With("dir", e.dir)
		}
		name = list[0]
	}
	if !e.isFile(name) {
		return nil, fault.Usage(fault.CodeUnknownEvidenceKind, "the trajectory file is not in the evidence directory").With("trajectory", name)
	}
	var t obj
	if err := e.readJSON(name, &t); err != nil {
		return nil, err
	}
	v := agentTimeline(e, t, "")
	v.Trajectory = name
	outcome := t.Display("outcome")
	model := t.Object("model")
	metrics := t.Object("metrics")
	dur, _ := t.Number("duration_seconds")
	p := &page{Kind: kindAgent, Agent: v, Title: "Agent run " + t.Display("run_id"), Media: len(v.Videos) > 0,
		Banner: banner{Verdict: firstNonEmpty(outcome, "unknown"), Headline: t.Display("task"), Detail: t.Display("final_message")},
		Facts: []fact{
			{Label: "runId", Value: t.Display("run_id"), Mono: true},
			{Label: "device mode", Value: t.Display("device_mode")},
			{Label: "model", Value: strings.TrimSpace(model.Display("model") + " " + model.Display("endpoint"))},
			{Label: "started", Value: t.Display("started_at")},
			{Label: "duration", Value: formatNumber(dur) + " s"},
			{Label: "steps", Value: t.Object("counters").Display("steps")},
			{Label: "tokens", Value: metrics.Display("prompt_tokens") + " in / " + metrics.Display("completion_tokens") + " out"},
			{Label: "cost", Value: costText(metrics)},
			{Label: "coordinates", Value: profileText(t.Object("coordinate_profile"))},
			{Label: "error", Value: t.Display("error_code")},
		}}
	return p, nil
}

func costText(m obj) string {
	c, ok := m.Number("cost_usd")
	if !ok {
		return ""
	}
	return fmt.Sprintf("$%.4f", c)
}

func profileText(p obj) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(p.Display("space") + " (" + p.Display("source") + ")")
}

// agentTimeline turns a trajectory into steps. prefix is the directory of
// the trajectory relative to the report (for a verification segment).
func agentTimeline(e *evidence, t obj, prefix string) *agentView {
	v := &agentView{Task: t.Display("task")}
	byStep := map[int]*agentStep{}
	var order []int
	stepOf := func(n int) *agentStep {
		if s, ok := byStep[n]; ok {
			return s
		}
		s := &agentStep{N: n}
		byStep[n] = s
		order = append(order, n)
		return s
	}
	type usage struct {
		in, out int64
		cost    float64
	}
	spent := map[int]*usage{}
	first := map[int]time.Time{} // each step's first event
	var last time.Time
	for _, ev := range t.Objects("events") {
		n64, _ := ev.Integer("step")
		n := int(n64)
		if ts, err := time.Parse(time.RFC3339Nano, ev.Display("timestamp")); err == nil {
			if _, ok := first[n]; !ok && n > 0 {
				first[n] = ts
			}
			if ts.After(last) {
				last = ts
			}
		}
		pl := ev.Object("payload")
		typ := ev.Display("type")
		if n == 0 {
			if l, ok := agentEventLine(typ, ev, pl); ok {
				v.Overall = append(v.Overall, l)
			}
			continue
		}
		s := stepOf(n)
		switch typ {
		case "observation":
			if s.Screen == nil {
				s.Screen = v.screen(e, prefix, pl.Display("screenshot_sha256"), pl, "step "+fmt.Sprint(n))
			}
		case "action":
			act := pl.Object("action")
			s.Action, s.Call = act.Display("action"), pl.Display("call")
			s.Reason, s.ScreenDesc = act.Display("reason"), act.Display("screen_description")
			if s.Screen != nil {
				s.Screen.Overlay = actionOverlay(s.Action, pl.Object("fields"), act.Display("text"), s.Screen.W, s.Screen.H)
			}
		case "metrics":
			u := spent[n]
			if u == nil {
				u = &usage{}
				spent[n] = u
			}
			in, _ := pl.Integer("prompt_tokens")
			out, _ := pl.Integer("completion_tokens")
			c, _ := pl.Number("cost_usd")
			u.in, u.out, u.cost = u.in+in, u.out+out, u.cost+c
		case "task_verification":
			if sha := pl.Display("screenshot_sha256"); sha != "" {
				v.Final = v.screen(e, prefix, sha, nil, "screenshot of the completion review")
				v.FinalNote = pl.Display("message")
			}
		}
		if l, ok := agentEventLine(typ, ev, pl); ok {
			s.Lines = append(s.Lines, l)
		}
	}
	start, startErr := time.Parse(time.RFC3339Nano, t.Display("started_at"))
	rec := readAgentVideo(e, prefix)
	if rec != nil {
		v.Videos = rec.parts
	}
	for i, n := range order {
		s := byStep[n]
		if at, ok := first[n]; ok && startErr == nil {
			end := last
			if i+1 < len(order) {
				if next, ok := first[order[i+1]]; ok {
					end = next
				}
			}
			s.Timed, s.OffsetMs, s.DurationMs = true, max(at.Sub(start).Milliseconds(), 0), max(end.Sub(at).Milliseconds(), 0)
			s.Seek = rec.seek(at)
		}
		if u := spent[n]; u != nil {
			s.Tokens = fmt.Sprintf("%d in / %d out tokens, $%.4f", u.in, u.out, u.cost)
		}
		s.Class = "ok"
		for _, l := range s.Lines {
			switch verdictClass(l.Verdict) {
			case "bad":
				s.Class = "bad"
				if s.Message == "" {
					s.Message = strings.TrimSpace(l.Kind + ": " + l.Text)
				}
			case "warn":
				if s.Class == "ok" {
					s.Class = "warn"
				}
			}
		}
		v.Steps = append(v.Steps, *s)
	}
	return v
}

// screen is the image of one observation, or nil (counted as missing)
// when the screenshot was not kept beside the trajectory.
func (v *agentView) screen(e *evidence, prefix, sha string, pl obj, caption string) *image {
	if len(sha) < 16 || strings.ContainsAny(sha, "/\\.") {
		return nil
	}
	rel := join(prefix, ScreensDir+"/"+sha+".png")
	if !e.isFile(rel) {
		v.Missing++
		return nil
	}
	w, _ := pl.Integer("display_width")
	h, _ := pl.Integer("display_height")
	return &image{Src: href(rel), Caption: caption, W: int(w), H: int(h)}
}

// agentEventLine says what one event meant; phase changes, requests and
// raw responses stay in the trajectory file.
func agentEventLine(typ string, ev, pl obj) (agentLine, bool) {
	msg := ev.Display("message")
	switch typ {
	case "start":
		risk := pl.Object("task_risk")
		return agentLine{Kind: "start", Text: strings.Join(append([]string{msg}, keyValues(risk)...), " · ")}, true
	case "coordinate_calibration":
		return agentLine{Kind: "calibration", Verdict: pl.Display("source"), Text: msg}, true
	case "precondition":
		return agentLine{Kind: "precondition", Verdict: pl.Display("verdict"), Text: msg}, true
	case "risk_review":
		return agentLine{Kind: "risk review", Verdict: pl.Display("verdict"), Text: firstNonEmpty(pl.Display("message"), msg)}, true
	case "confirmation":
		verdict := "declined"
		if ok, _ := pl.Flag("approved"); ok {
			verdict = "approved"
		}
		if done, ok := pl.Flag("completed"); ok {
			verdict = map[bool]string{true: "completed", false: "declined"}[done]
		}
		if in, _ := pl.Flag("interactive"); !in {
			verdict = "blocked"
		}
		return agentLine{Kind: "confirmation", Verdict: verdict, Text: strings.TrimSpace(msg + " " + pl.Display("message"))}, true
	case "execution":
		verdict := "dispatched"
		if ok, _ := pl.Flag("command_dispatched"); !ok {
			verdict = "not dispatched"
		}
		if ok, _ := pl.Flag("command_success"); !ok {
			verdict = "failed"
		}
		return agentLine{Kind: "execution", Verdict: verdict, Text: strings.TrimSpace(msg + " " + compact(pl.Object("device")) + " " + pl.Display("error"))}, true
	case "verification":
		return agentLine{Kind: "verification", Verdict: pl.Display("status"), Text: "screen " + pl.Display("observable_effect") + " " + pl.Display("warning")}, true
	case "task_verification":
		return agentLine{Kind: "completion review", Verdict: pl.Display("status"), Text: pl.Display("message")}, true
	case "recovery":
		return agentLine{Kind: "recovery", Verdict: pl.Display("outcome"), Text: strings.TrimSpace(msg + " " + pl.Display("message") + " " + pl.Display("error"))}, true
	case "protocol_retry", "protocol_rejection":
		return agentLine{Kind: strings.ReplaceAll(typ, "_", " "), Verdict: "failed", Text: pl.Display("code") + ": " + pl.Display("message")}, true
	case "note":
		return agentLine{Kind: "note", Text: pl.Display("message")}, true
	case "error":
		return agentLine{Kind: "error", Verdict: "error", Text: msg}, true
	case "finish":
		return agentLine{Kind: "finish", Verdict: pl.Display("outcome"), Text: pl.Display("message")}, true
	}
	return agentLine{}, false
}

// agentVideoFile is the recording's record beside an agent trajectory
// (agentloop's video.json).
const agentVideoFile = "video.json"

// agentVideo is an agent run's kept recording.
type agentVideo struct {
	parts       []string
	startedAt   time.Time
	partSeconds float64
}

// readAgentVideo reads video.json beside the trajectory (in prefix); nil
// without a kept recording.
func readAgentVideo(e *evidence, prefix string) *agentVideo {
	name := join(prefix, agentVideoFile)
	if !e.isFile(name) {
		return nil
	}
	var r obj
	if e.readJSON(name, &r) != nil {
		return nil
	}
	started, err := time.Parse(time.RFC3339Nano, r.Display("startedAt"))
	if err != nil {
		return nil
	}
	v := &agentVideo{startedAt: started}
	v.partSeconds, _ = r.Number("partSeconds")
	for _, f := range r.Objects("files") {
		if p := join(prefix, f.Display("path")); e.isFile(p) {
			v.parts = append(v.parts, href(p))
		}
	}
	if len(v.parts) == 0 {
		return nil
	}
	return v
}

// seek is a link that plays the recording from at ("" without one).
func (v *agentVideo) seek(at time.Time) string {
	if v == nil {
		return ""
	}
	sec := max(at.Sub(v.startedAt).Seconds(), 0)
	part := 0
	if v.partSeconds > 0 {
		// In floats first: a tiny part length from a hand-edited file
		// must not overflow the index.
		part = int(min(max(sec/v.partSeconds, 0), float64(len(v.parts)-1)))
		sec = max(sec-float64(part)*v.partSeconds, 0)
	}
	return v.parts[part] + "#t=" + strconv.FormatFloat(sec, 'f', 1, 64)
}
