package agentloop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/internal/textclip"
)

// androidSemanticKeys are fields that describe Android state beyond the
// pixels. They are removed from anything fed back to the model, whatever
// its origin (device adapters, older evidence, callers), because the
// model must plan from the screenshot alone.
var androidSemanticKeys = map[string]bool{
	"package": true, "packagename": true, "package_name": true, "pkg": true,
	"activity": true, "activityname": true, "activity_name": true, "component": true,
	"app": true, "appname": true, "app_name": true, "current_app": true, "currentapp": true,
	"apps": true, "app_list": true, "applist": true, "installed_apps": true, "launchable_apps": true,
	"ui_tree": true, "uitree": true, "tree": true, "page": true, "hierarchy": true, "nodes": true, "node": true,
	"nodeid": true, "node_id": true, "resourceid": true, "resource_id": true, "classname": true, "class_name": true,
	"accessibility": true, "window": true, "windows": true, "window_state": true, "focus": true,
	"mcurrentfocus": true, "mfocusedapp": true, "topresumedactivity": true, "foreground": true,
	"treesha256": true, "signature": true, "observationid": true, "observation_id": true, "selector": true,
}

// sanitize returns a copy of v without Android-semantic fields, at every
// depth. Strings are kept as they are: a free-text result is the model's
// own words or the runtime's.
func sanitize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if androidSemanticKeys[strings.ToLower(k)] {
				continue
			}
			out[k] = sanitize(e)
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, sanitize(e))
		}
		return out
	}
	return v
}

// turn is one past planning step in text memory.
type turn struct {
	Step int
	// Assistant is the model's action as history: type, screen_description
	// and reason, with the coordinates dropped (they only meant something
	// on the screenshot they were chosen on).
	Assistant string
	// Result is the sanitized execution and verification result.
	Result string
	// Rejected marks a step whose action never reached the device.
	Rejected   bool
	rejectedAs string
}

// memory is the task-level text memory: the goal and notes once, every
// turn in order, trimmed oldest-first only when the token budget requires.
type memory struct {
	goal  string
	notes []string
	turns []turn
}

func historyOf(a action.Action) string {
	var b strings.Builder
	if a.IsFinish() {
		fmt.Fprintf(&b, "action: finish(success=%v)", a.Success != nil && *a.Success)
	} else {
		fmt.Fprintf(&b, "action: %s", a.Name)
		if action.HasCoordinates(a.Name) {
			b.WriteString(" (coordinates omitted: they referred to an older screenshot)")
		}
		if a.Name == action.Type && a.Text != nil {
			fmt.Fprintf(&b, "\ntext: %s", action.Quote(textclip.Runes(*a.Text, 200)))
		}
		if a.Message != nil {
			fmt.Fprintf(&b, "\nmessage: %s", textclip.Runes(*a.Message, 300))
		}
	}
	if a.ScreenDescription != "" {
		fmt.Fprintf(&b, "\nscreen_description: %s", a.ScreenDescription)
	}
	if a.Reason != "" {
		fmt.Fprintf(&b, "\nreason: %s", a.Reason)
	}
	return b.String()
}

// addTurn records an executed (or handled) action and its result.
func (m *memory) addTurn(step int, a action.Action, result map[string]any) {
	m.turns = append(m.turns, turn{Step: step, Assistant: historyOf(a), Result: resultText(step, result)})
}

// addRejection records an action that never reached the device. A run of
// consecutive rejections collapses into one non-executable summary, so the
// blocked action is never offered back to the planner as an example.
func (m *memory) addRejection(step int, a action.Action, code, why string) {
	name := a.Name
	if n := len(m.turns); n > 0 && m.turns[n-1].Rejected {
		prev := &m.turns[n-1]
		var summary map[string]any
		if json.Unmarshal([]byte(prev.Result), &summary) == nil {
			list, _ := summary["rejected_actions"].([]any)
			list = append(list, map[string]any{"step": step, "action": name, "rejection": code + ": " + why})
			summary["rejected_actions"] = list
			summary["consecutive_rejections"] = len(list)
			prev.Result = mustJSON(summary)
			prev.Assistant = fmt.Sprintf("(%d consecutive actions were rejected and never executed)", len(list))
			return
		}
	}
	summary := map[string]any{
		"rejected_actions":         []any{map[string]any{"step": step, "action": name, "rejection": code + ": " + why}},
		"consecutive_rejections":   1,
		"command_dispatched":       false,
		"do_not_repeat":            true,
		"required_strategy_change": true,
	}
	m.turns = append(m.turns, turn{Step: step, Assistant: fmt.Sprintf("(action %s was rejected and never executed)", name), Result: mustJSON(summary), Rejected: true})
}

func resultText(step int, result map[string]any) string {
	r := sanitize(result).(map[string]any)
	r["step"] = step
	return mustJSON(r)
}

// planRequest builds the planner request: the system prompt, the goal and
// notes once, the text history, and the current turn with the only image.
// retry, when set, adds the rejected answer and the same-step correction.
func (m *memory) planRequest(now time.Time, step int, contract coord.Contract, image *chat.Image, budget int, retry *action.ProtocolError, rejected string) chat.Request {
	head := []chat.Message{{Role: "system", Text: plannerPrompt(now)}}
	goal := "Task: " + m.goal
	if len(m.notes) > 0 {
		goal += "\n\nYour notes so far:\n- " + strings.Join(m.notes, "\n- ")
	}
	head = append(head, chat.Message{Role: "user", Text: goal})
	info := map[string]any{
		"step":                step,
		"coordinate_contract": contract.ModelView(),
	}
	current := chat.Message{Role: "user", Text: "** Screen Info **\n" + mustJSON(info), Image: image}
	var tail []chat.Message
	tail = append(tail, current)
	if retry != nil {
		tail = append(tail,
			chat.Message{Role: "assistant", Text: textclip.Runes(rejected, 2000)},
			chat.Message{Role: "user", Text: fmt.Sprintf("%s: your answer was rejected before anything touched the device (%s: %s). Answer again for the same screenshot with exactly one valid call and nothing else.", retryMarker, retry.Code, retry.Message)})
	}
	turns := m.turns
	for {
		msgs := append([]chat.Message(nil), head...)
		for _, t := range turns {
			msgs = append(msgs, chat.Message{Role: "assistant", Text: t.Assistant}, chat.Message{Role: "user", Text: t.Result})
		}
		msgs = append(msgs, tail...)
		msgs = mergeAdjacent(msgs)
		req := chat.Request{Purpose: "plan", Messages: msgs}
		if retry != nil {
			req.Purpose = "protocol_retry"
		}
		// Trim whole turns, oldest first, only when the budget needs it.
		if budget <= 0 || len(turns) == 0 || req.EstimatedTokens() <= budget {
			return req
		}
		turns = turns[1:]
	}
}

// mergeAdjacent joins consecutive messages of one role (some chat
// templates require strict alternation); an image stays with its text.
func mergeAdjacent(msgs []chat.Message) []chat.Message {
	out := make([]chat.Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != "system" && (out[n-1].Image == nil || m.Image == nil) {
			prev := &out[n-1]
			prev.Text = prev.Text + "\n\n" + m.Text
			if m.Image != nil {
				prev.Image = m.Image
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// mustJSON encodes v with sorted keys (maps encode sorted already).
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return string(b)
}

// compactEvidence is the runtime evidence a reviewer may see: action,
// execution, verification and recovery facts, never reasoning or
// screen descriptions (the reviewer must not be talked into a verdict).
func compactEvidence(events []AgentEvent, limit int) []map[string]any {
	keep := map[string]bool{evExecution: true, EvVerification: true, EvRecovery: true}
	var out []map[string]any
	for _, e := range events {
		if e.Type == EvAction {
			if a, ok := e.Payload["action"].(map[string]any); ok {
				out = append(out, map[string]any{"step": e.Step, "action": a["action"]})
			}
			continue
		}
		if !keep[e.Type] {
			continue
		}
		item := map[string]any{"step": e.Step, "type": e.Type}
		for _, k := range []string{"command_dispatched", "command_success", "observable_effect", "outcome", "status"} {
			if v, ok := e.Payload[k]; ok {
				item[k] = v
			}
		}
		out = append(out, item)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	sanitized := make([]map[string]any, len(out))
	for i, m := range out {
		sanitized[i] = sanitize(m).(map[string]any)
	}
	return sanitized
}

// sortedKeys is used for deterministic messages.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
