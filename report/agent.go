package report

import (
	"bytes"
	"fmt"
	"path"
	"strings"

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
}

// agentLine is one event of a step as a person reads it.
type agentLine struct {
	Kind, Verdict, Text string
}

func agentPage(e *evidence, name string) (*page, error) {
	if name == "" {
		list := trajectories(e, ".")
		if len(list) != 1 {
			return nil, fault.Usage(CodeUnknownKind, "name the trajectory file of the agent run").With("dir", e.dir)
		}
		name = list[0]
	}
	if !e.isFile(name) {
		return nil, fault.Usage(CodeUnknownKind, "the trajectory file is not in the evidence directory").With("trajectory", name)
	}
	var t obj
	if err := e.readJSON(name, &t); err != nil {
		return nil, err
	}
	v := agentTimeline(e, t, "")
	v.Trajectory = name
	outcome := str(t, "outcome")
	model := object(t, "model")
	metrics := object(t, "metrics")
	dur, _ := float(t, "duration_seconds")
	p := &page{Kind: KindAgent, Agent: v, Title: "Agent run " + str(t, "run_id"),
		Banner: banner{Verdict: firstNonEmpty(outcome, "unknown"), Headline: str(t, "task"), Detail: str(t, "final_message")},
		Facts: []fact{
			{Label: "runId", Value: str(t, "run_id"), Mono: true},
			{Label: "device mode", Value: str(t, "device_mode")},
			{Label: "model", Value: strings.TrimSpace(str(model, "model") + " " + str(model, "endpoint"))},
			{Label: "started", Value: str(t, "started_at")},
			{Label: "duration", Value: formatNumber(dur) + " s"},
			{Label: "steps", Value: str(object(t, "counters"), "steps")},
			{Label: "tokens", Value: str(metrics, "prompt_tokens") + " in / " + str(metrics, "completion_tokens") + " out"},
			{Label: "cost", Value: costText(metrics)},
			{Label: "coordinates", Value: profileText(object(t, "coordinate_profile"))},
			{Label: "error", Value: str(t, "error_code")},
		}}
	return p, nil
}

func costText(m obj) string {
	c, ok := float(m, "cost_usd")
	if !ok {
		return ""
	}
	return fmt.Sprintf("$%.4f", c)
}

func profileText(p obj) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(str(p, "space") + " (" + str(p, "source") + ")")
}

// agentTimeline turns a trajectory into steps. prefix is the directory of
// the trajectory relative to the report (for a verification segment).
func agentTimeline(e *evidence, t obj, prefix string) *agentView {
	v := &agentView{Task: str(t, "task")}
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
	for _, ev := range objects(t, "events") {
		n64, _ := integer(ev, "step")
		n := int(n64)
		pl := object(ev, "payload")
		typ := str(ev, "type")
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
				s.Screen = v.screen(e, prefix, str(pl, "screenshot_sha256"), pl, "step "+fmt.Sprint(n))
			}
		case "action":
			act := object(pl, "action")
			s.Action, s.Call = str(act, "action"), str(pl, "call")
			s.Reason, s.ScreenDesc = str(act, "reason"), str(act, "screen_description")
			if s.Screen != nil {
				s.Screen.Overlay = actionOverlay(s.Action, object(pl, "fields"), str(act, "text"), s.Screen.W, s.Screen.H)
			}
		case "metrics":
			u := spent[n]
			if u == nil {
				u = &usage{}
				spent[n] = u
			}
			in, _ := integer(pl, "prompt_tokens")
			out, _ := integer(pl, "completion_tokens")
			c, _ := float(pl, "cost_usd")
			u.in, u.out, u.cost = u.in+in, u.out+out, u.cost+c
		case "task_verification":
			if sha := str(pl, "screenshot_sha256"); sha != "" {
				v.Final = v.screen(e, prefix, sha, nil, "screenshot of the completion review")
				v.FinalNote = str(pl, "message")
			}
		}
		if l, ok := agentEventLine(typ, ev, pl); ok {
			s.Lines = append(s.Lines, l)
		}
	}
	for _, n := range order {
		s := byStep[n]
		if u := spent[n]; u != nil {
			s.Tokens = fmt.Sprintf("%d in / %d out tokens, $%.4f", u.in, u.out, u.cost)
		}
		s.Class = "ok"
		for _, l := range s.Lines {
			switch verdictClass(l.Verdict) {
			case "bad":
				s.Class = "bad"
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
	w, _ := integer(pl, "display_width")
	h, _ := integer(pl, "display_height")
	return &image{Src: href(rel), Caption: caption, W: int(w), H: int(h)}
}

// agentEventLine says what one event meant; phase changes, requests and
// raw responses stay in the trajectory file.
func agentEventLine(typ string, ev, pl obj) (agentLine, bool) {
	msg := str(ev, "message")
	switch typ {
	case "start":
		risk := object(pl, "task_risk")
		return agentLine{Kind: "start", Text: strings.Join(append([]string{msg}, keyValues(risk)...), " · ")}, true
	case "coordinate_calibration":
		return agentLine{Kind: "calibration", Verdict: str(pl, "source"), Text: msg}, true
	case "precondition":
		return agentLine{Kind: "precondition", Verdict: str(pl, "verdict"), Text: msg}, true
	case "risk_review":
		return agentLine{Kind: "risk review", Verdict: str(pl, "verdict"), Text: firstNonEmpty(str(pl, "message"), msg)}, true
	case "confirmation":
		verdict := "declined"
		if ok, _ := boolean(pl, "approved"); ok {
			verdict = "approved"
		}
		if done, ok := boolean(pl, "completed"); ok {
			verdict = map[bool]string{true: "completed", false: "declined"}[done]
		}
		if in, _ := boolean(pl, "interactive"); !in {
			verdict = "blocked"
		}
		return agentLine{Kind: "confirmation", Verdict: verdict, Text: strings.TrimSpace(msg + " " + str(pl, "message"))}, true
	case "execution":
		verdict := "dispatched"
		if ok, _ := boolean(pl, "command_dispatched"); !ok {
			verdict = "not dispatched"
		}
		if ok, _ := boolean(pl, "command_success"); !ok {
			verdict = "failed"
		}
		return agentLine{Kind: "execution", Verdict: verdict, Text: strings.TrimSpace(msg + " " + compact(object(pl, "device")) + " " + str(pl, "error"))}, true
	case "verification":
		return agentLine{Kind: "verification", Verdict: str(pl, "status"), Text: "screen " + str(pl, "observable_effect") + " " + str(pl, "warning")}, true
	case "task_verification":
		return agentLine{Kind: "completion review", Verdict: str(pl, "status"), Text: str(pl, "message")}, true
	case "recovery":
		return agentLine{Kind: "recovery", Verdict: str(pl, "outcome"), Text: strings.TrimSpace(msg + " " + str(pl, "message") + " " + str(pl, "error"))}, true
	case "protocol_retry", "protocol_rejection":
		return agentLine{Kind: strings.ReplaceAll(typ, "_", " "), Verdict: "failed", Text: str(pl, "code") + ": " + str(pl, "message")}, true
	case "note":
		return agentLine{Kind: "note", Text: str(pl, "message")}, true
	case "error":
		return agentLine{Kind: "error", Verdict: "error", Text: msg}, true
	case "finish":
		return agentLine{Kind: "finish", Verdict: str(pl, "outcome"), Text: str(pl, "message")}, true
	}
	return agentLine{}, false
}
