package verify

import (
	"fmt"
	"strings"

	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// Segment phases and routes.
const (
	PhasePrecondition = "precondition"
	PhaseTest         = "test"
	PhaseCleanup      = "cleanup"

	routeDeterministic = "deterministic"
	RouteDynamic       = "dynamic"
	routeHybrid        = "hybrid"
)

// Segment is one unit of execution: a compiled SoloPi case (deterministic)
// or one explore step for the Agent (dynamic).
type Segment struct {
	ID            string
	Phase         string
	Route         string
	SourceStepIDs []string
	CheckpointIDs []string
	// CheckpointOracleSteps maps a checkpoint to its ASSERT step
	// (deterministic test segments).
	CheckpointOracleSteps map[string]string
	// OracleStepIDs are the ASSERT steps of a precondition or cleanup
	// segment.
	OracleStepIDs []string
	Case          *Case // deterministic
	DynamicStep   *Step // dynamic
}

// Deterministic reports a compiled-case segment.
func (s *Segment) Deterministic() bool { return s.Route == routeDeterministic }

func (s *Segment) tree() map[string]any {
	m := map[string]any{
		"segmentId": s.ID, "phase": s.Phase, "route": s.Route,
		"sourceStepIds": strs(s.SourceStepIDs), "checkpointIds": strs(s.CheckpointIDs),
	}
	if s.Route == RouteDynamic {
		m["dynamicStep"] = s.DynamicStep.tree()
		return m
	}
	if s.Phase == PhaseTest {
		cos := make(map[string]any, len(s.CheckpointOracleSteps))
		for k, v := range s.CheckpointOracleSteps {
			cos[k] = v
		}
		m["checkpointOracleSteps"] = cos
	} else {
		m["oracleStepIds"] = strs(s.OracleStepIDs)
	}
	m["case"] = s.Case.tree()
	return m
}

// Case is a compiled SoloPi case, importable with case-import.
type Case struct {
	Name             string
	Desc             string
	TargetAppPackage string
	TargetAppLabel   string
	Steps            []CaseStep
}

// CaseStep is one step of a compiled case.
type CaseStep struct {
	// Node is the operation node (a selector), nil for global actions.
	Node        map[string]any
	ActionEnum  string
	Params      map[string]any
	Index       int
	OperationID string
	StepID      string
}

// Tree is the case in SoloPi's case JSON (operationLog as an object).
func (c *Case) Tree() map[string]any {
	steps := make([]any, len(c.Steps))
	for i := range c.Steps {
		steps[i] = c.Steps[i].tree()
	}
	return map[string]any{
		"caseName": c.Name, "caseDesc": c.Desc, "targetAppPackage": c.TargetAppPackage,
		"targetAppLabel": c.TargetAppLabel, "recordMode": "local", "advanceSettings": "", "priority": 2,
		"operationLog": map[string]any{"steps": steps},
	}
}

func (c *Case) tree() map[string]any { return c.Tree() }

// StepIndex is the position of the step with stepID, or -1.
func (c *Case) StepIndex(stepID string) int {
	for i := range c.Steps {
		if c.Steps[i].StepID == stepID {
			return i
		}
	}
	return -1
}

func (s *CaseStep) tree() map[string]any {
	var node any
	if s.Node != nil {
		node = s.Node
	}
	params := make(map[string]any, len(s.Params))
	for k, v := range s.Params {
		params[k] = v
	}
	return map[string]any{
		"operationNode": node,
		"operationMethod": map[string]any{
			"actionEnum": s.ActionEnum, "operationParam": params, "encrypt": false, "safeEncrypt": false,
		},
		"operationIndex": s.Index, "operationId": s.OperationID, "stepId": s.StepID,
	}
}

// compiledActions are the only action enums a compiled case may hold.
var compiledActions = map[string]bool{
	"CLICK": true, "LONG_CLICK": true, "INPUT": true, "BACK": true, "HOME": true, "SLEEP": true,
	"SCROLL_TO_TOP": true, "SCROLL_TO_BOTTOM": true, "SCROLL_TO_LEFT": true, "SCROLL_TO_RIGHT": true,
	"GLOBAL_SCROLL_TO_TOP": true, "GLOBAL_SCROLL_TO_BOTTOM": true, "GLOBAL_SCROLL_TO_LEFT": true,
	"GLOBAL_SCROLL_TO_RIGHT": true, "ASSERT": true,
}

// nodeActions are compiled enums that act on a node: SoloPi's import
// refuses them without a grounded selector.
var nodeActions = map[string]bool{
	"CLICK": true, "LONG_CLICK": true, "INPUT": true, "ASSERT": true,
	"SCROLL_TO_TOP": true, "SCROLL_TO_BOTTOM": true, "SCROLL_TO_LEFT": true, "SCROLL_TO_RIGHT": true,
}

// groundingKeys are the selector keys SoloPi's import accepts as grounding
// a node (className and packageName alone are not enough).
var groundingKeys = []string{"resourceId", "text", "description", "id"}

var scrollSuffix = map[string]string{"up": "TOP", "down": "BOTTOM", "left": "LEFT", "right": "RIGHT"}

// compileAction maps a typed action to a SoloPi step.
func compileAction(stepID string, a *action, operationID string, index int) CaseStep {
	st := CaseStep{Index: index, OperationID: operationID, StepID: stepID, Params: map[string]any{}}
	if a.Selector != nil {
		st.Node = map[string]any(a.Selector)
	}
	switch a.Type {
	case ActionClick:
		st.ActionEnum = "CLICK"
	case ActionLongClick:
		st.ActionEnum = "LONG_CLICK"
		st.Params["text"] = itoa(a.DurationMs)
	case ActionInput:
		st.ActionEnum = "INPUT"
		st.Params["text"] = a.Text
	case ActionBack:
		st.ActionEnum, st.Node = "BACK", nil
	case ActionHome:
		st.ActionEnum, st.Node = "HOME", nil
	case ActionWait:
		st.ActionEnum, st.Node = "SLEEP", nil
		st.Params["text"] = itoa(a.DurationMs)
	case ActionScroll:
		prefix := "GLOBAL_"
		st.Params["distance"] = itoa(a.Distance)
		if st.Node != nil {
			prefix = ""
			// SoloPi's SCROLL_TO_* needs a "text" parameter (the scroll
			// percentage); solopi-ai omits it and its own import then
			// refuses the case.
			st.Params["text"] = itoa(a.Distance)
		}
		st.ActionEnum = prefix + "SCROLL_TO_" + scrollSuffix[a.Direction]
	}
	return st
}

// compileOracle maps a UI oracle to an ASSERT step.
func compileOracle(stepID string, o Oracle, operationID string, index int) CaseStep {
	return CaseStep{
		Node: map[string]any(o.UI.Selector), ActionEnum: "ASSERT", Params: o.UI.AssertParams(),
		Index: index, OperationID: operationID, StepID: stepID,
	}
}

var unsafeNameChars = lazyregexp.New(`[^A-Za-z0-9._-]+`)

// safeName replaces runs of characters outside [A-Za-z0-9._-] with "-" and
// trims "-" and "." from both ends ("verification" when nothing is left).
func safeName(s string) string {
	out := strings.Trim(unsafeNameChars.ReplaceAllString(s, "-"), "-.")
	if out == "" {
		return "verification"
	}
	return out
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func operationID(scenarioID, phase string) string {
	return cut(safeName("verification-"+scenarioID+"-"+phase), 120)
}

// segmentID names a segment after its scenario, phase, ordinal and the
// hash of its semantic content.
func segmentID(scenarioID, phase string, ordinal int, semantic any) string {
	return fmt.Sprintf("segment-%s-%s-%02d-%s", cut(safeName(scenarioID), 40), phase, ordinal, fingerprint(semantic)[:12])
}

// newCase builds a compiled case; its name ends with the hash of what it
// does, so the same work always imports under the same name.
func newCase(requirementID string, sc *Scenario, phase string, ordinal int, steps []CaseStep) *Case {
	trees := make([]any, len(steps))
	for i := range steps {
		trees[i] = steps[i].tree()
	}
	semantic := map[string]any{
		"requirementId": requirementID, "scenarioId": sc.ID, "phase": phase, "ordinal": ordinal,
		"targetAppPackage": sc.TargetAppPackage, "steps": trees,
	}
	label := sc.TargetAppPackage
	if sc.TargetAppLabel != nil && *sc.TargetAppLabel != "" {
		label = *sc.TargetAppLabel
	}
	return &Case{
		Name: cut(safeName(fmt.Sprintf("verify-%s-%s-%s-%02d-%s", requirementID, sc.ID, phase, ordinal, fingerprint(semantic)[:12])), 120),
		// solopi-ai's description ("compiled verification segment"), kept
		// verbatim: it is hashed into segment IDs and the plan fingerprint.
		Desc:             "已编译的验证片段 " + sc.ID + "/" + phase,
		TargetAppPackage: sc.TargetAppPackage,
		TargetAppLabel:   label,
		Steps:            steps,
	}
}

// EvidenceDirName is the directory name of a segment's evidence: its ID
// made safe for a path, at most 80 characters.
func EvidenceDirName(segmentID string) string { return cut(safeName(segmentID), 80) }

// HasVision reports whether any checkpoint of the segment has a vision
// oracle.
func (s *Segment) HasVision(sc *Scenario) bool {
	for _, id := range s.CheckpointIDs {
		if cp := sc.Checkpoint(id); cp != nil && cp.Oracle.Vision != nil {
			return true
		}
	}
	return false
}
