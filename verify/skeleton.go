package verify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/oracle"
)

// skeleton is a requirement drafted from a recorded case (verify-init):
// its steps become one scenario's stable steps and each ASSERT a
// checkpoint (before the first step: a precondition), with an acceptance
// criterion per checkpoint for the author to reword.
type skeleton struct {
	// Requirement is the requirement document, ready for verify-compile
	// when Complete.
	Requirement map[string]any
	Steps       int
	Checkpoints int
	// Skipped are the case's steps that have no typed action or UI oracle:
	// the author writes them by hand (or as explore steps).
	Skipped []SkippedStep
	// Complete is false when the case has no assertion: a requirement
	// needs at least one checkpoint, which only the author can say.
	Complete bool
}

// SkippedStep is a case step the skeleton leaves out, and why.
type SkippedStep struct {
	Index      int    `json:"index"`
	ActionEnum string `json:"actionEnum"`
	Reason     string `json:"reason"`
}

// assertOperators inverts oracle's ASSERT modes.
var assertOperators = map[string]string{
	"assert_accurate": oracle.OpEquals, "assert_contain": oracle.OpContains, "assert_regular": oracle.OpMatches,
}

// scrollDirections inverts the compiler's scroll enums.
var scrollDirections = map[string]string{"TOP": "up", "BOTTOM": "down", "LEFT": "left", "RIGHT": "right"}

// SkeletonFromCase drafts a requirement from c (normalised first, so an
// authoring-form case reads as the device stores it).
func SkeletonFromCase(c *casefile.Case) (*skeleton, error) {
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{SkipPolicy: true})
	if err != nil {
		return nil, err
	}
	s := &skeleton{}
	var steps, checkpoints, preconditions, acs []any
	lastStep := ""
	for i, st := range n.Steps {
		enum := st.Method.ActionEnum
		if enum == "ASSERT" {
			o, why := assertOracle(st)
			if why != "" {
				s.Skipped = append(s.Skipped, SkippedStep{i, enum, why})
				continue
			}
			if lastStep == "" {
				preconditions = append(preconditions, map[string]any{"id": fmt.Sprintf("pre-%02d", len(preconditions)+1), "oracle": o})
				continue
			}
			s.Checkpoints++
			ac := fmt.Sprintf("AC-%03d", s.Checkpoints)
			acs = append(acs, map[string]any{"id": ac, "text": describe(o)})
			checkpoints = append(checkpoints, map[string]any{
				"id": fmt.Sprintf("check-%02d", s.Checkpoints), "afterStep": lastStep,
				"acceptanceCriteria": []any{ac}, "oracle": o,
			})
			continue
		}
		a, why := typedAction(st)
		if why != "" {
			s.Skipped = append(s.Skipped, SkippedStep{i, enum, why})
			continue
		}
		s.Steps++
		lastStep = fmt.Sprintf("step-%02d", s.Steps)
		steps = append(steps, map[string]any{"id": lastStep, "type": stepOperation, "action": a})
	}
	s.Complete = s.Checkpoints > 0 && s.Steps > 0
	if len(acs) == 0 {
		acs = []any{map[string]any{"id": "AC-001", "text": "TODO: what the case proves"}}
	}
	acIDs := make([]any, len(acs))
	for i, ac := range acs {
		acIDs[i] = ac.(map[string]any)["id"]
	}
	if steps == nil {
		steps = []any{}
	}
	if checkpoints == nil {
		checkpoints = []any{}
	}
	scenario := map[string]any{
		"id": safeName(n.CaseName), "title": n.CaseName, "acceptanceCriteria": acIDs,
		"steps": steps, "checkpoints": checkpoints,
	}
	if len(preconditions) > 0 {
		scenario["preconditions"] = preconditions
	}
	title := n.CaseDesc
	if strings.TrimSpace(title) == "" {
		title = n.CaseName
	}
	s.Requirement = map[string]any{
		"schemaVersion": requirementSchema, "id": safeName(n.CaseName), "title": title,
		"targetAppPackage": n.TargetAppPackage, "acceptanceCriteria": acs, "scenarios": []any{scenario},
	}
	if n.TargetAppLabel != "" && n.TargetAppLabel != n.TargetAppPackage {
		s.Requirement["targetAppLabel"] = n.TargetAppLabel
	}
	return s, nil
}

// selectorOf is the step's node as a requirement selector: the keys SoloPi
// grounds a node by, most stable first (a resource id survives a changed
// label); nil when the node has none.
func selectorOf(n *casefile.Node) map[string]any {
	if n == nil {
		return nil
	}
	for _, f := range []struct {
		key string
		v   *string
	}{{"resourceId", n.ResourceID}, {"text", n.Text}, {"description", n.Description}} {
		if f.v != nil && strings.TrimSpace(*f.v) != "" {
			return map[string]any{f.key: *f.v}
		}
	}
	return nil
}

// typedAction maps a stable SoloPi step to a typed action, or says why it
// has none.
func typedAction(st casefile.Step) (map[string]any, string) {
	enum := st.Method.ActionEnum
	sel := selectorOf(st.Node)
	needNode := func(a map[string]any) (map[string]any, string) {
		if sel == nil {
			return nil, "the node has no resourceId, text or description to select it by"
		}
		a["selector"] = sel
		return a, ""
	}
	param := func(k string) (string, bool) { return st.Method.Param(k) }
	duration := func() (int64, string) {
		v, ok := param("text")
		if !ok {
			return 1000, ""
		}
		d, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || d < 100 || d > 5000 {
			return 0, fmt.Sprintf("a duration of %q ms is outside the typed actions' 100..5000", v)
		}
		return d, ""
	}
	switch {
	case enum == "CLICK":
		return needNode(map[string]any{"type": ActionClick})
	case enum == "LONG_CLICK":
		d, why := duration()
		if why != "" {
			return nil, why
		}
		return needNode(map[string]any{"type": ActionLongClick, "durationMs": d})
	case enum == "INPUT":
		if st.Method.EncryptedOnDevice() {
			return nil, "the input text is encrypted: write it as a requirement parameter by hand"
		}
		text, ok := param("text")
		if !ok || strings.TrimSpace(text) == "" {
			return nil, "the input step has no text"
		}
		return needNode(map[string]any{"type": ActionInput, "text": text})
	case enum == "BACK":
		return map[string]any{"type": ActionBack}, ""
	case enum == "HOME":
		return map[string]any{"type": ActionHome}, ""
	case enum == "SLEEP":
		d, why := duration()
		if why != "" {
			return nil, why
		}
		return map[string]any{"type": ActionWait, "durationMs": d}, ""
	case strings.HasPrefix(enum, "SCROLL_TO_") || strings.HasPrefix(enum, "GLOBAL_SCROLL_TO_"):
		dir := scrollDirections[enum[strings.LastIndex(enum, "_")+1:]]
		if dir == "" {
			return nil, "no typed scroll goes that way"
		}
		a := map[string]any{"type": ActionScroll, "direction": dir}
		if v, ok := param("distance"); ok {
			d, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || d < 1 || d > 90 {
				return nil, fmt.Sprintf("a scroll distance of %q is outside 1..90", v)
			}
			a["distance"] = d
		}
		if strings.HasPrefix(enum, "GLOBAL_") {
			return a, ""
		}
		return needNode(a)
	}
	return nil, "no typed action does what " + enum + " does (write it by hand, or as an explore step)"
}

// assertOracle maps an ASSERT step to a UI oracle, or says why it cannot.
func assertOracle(st casefile.Step) (map[string]any, string) {
	mode, _ := st.Method.Param("assertMode")
	op, ok := assertOperators[mode]
	if !ok {
		return nil, fmt.Sprintf("assertMode %q has no UI oracle (equals, contains and matches do)", mode)
	}
	expected, ok := st.Method.Param("assertInputContent")
	if !ok {
		return nil, "the assertion has no expected text"
	}
	sel := selectorOf(st.Node)
	if sel == nil {
		return nil, "the asserted node has no resourceId, text or description to select it by"
	}
	field := oracle.FieldText
	if t, _ := st.Method.Param("assertTarget"); t == "description" {
		field = oracle.FieldDescription
	}
	return map[string]any{"type": "ui", "selector": sel, "field": field, "operator": op, "expected": expected}, ""
}

// describe words an oracle as a draft acceptance criterion.
func describe(o map[string]any) string {
	var sel string
	for k, v := range o["selector"].(map[string]any) {
		sel = fmt.Sprintf("%s %q", k, v)
	}
	return fmt.Sprintf("The %s of the node with %s %s %q.", o["field"], sel, o["operator"], o["expected"])
}

// Marshal is the skeleton as a requirement file (indented, keys sorted).
func (s *skeleton) Marshal() ([]byte, error) { return marshalFile(s.Requirement) }
