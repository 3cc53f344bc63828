package casefile

import (
	"fmt"
	"github.com/solopi-dev/solopi/fault"
	"strings"
)

// EditOptions are the options shared by the step-edit operations.
type EditOptions struct {
	// ConfirmHighRisk is --confirm-high-risk for the affected step.
	ConfirmHighRisk bool
}

// StepDescriptor describes one step for case-step-* output.
type StepDescriptor struct {
	Index                        int     `json:"index"`
	StepID                       string  `json:"stepId"`
	ActionCode                   string  `json:"actionCode"`
	ActionEnum                   string  `json:"actionEnum"`
	TargetAction                 *string `json:"targetAction"`
	RequiresNode                 bool    `json:"requiresNode"`
	HighRisk                     bool    `json:"highRisk"`
	HighRiskReason               *string `json:"highRiskReason"`
	RequiresHighRiskConfirmation bool    `json:"requiresHighRiskConfirmation"`
	AuthoringAllowed             bool    `json:"authoringAllowed"`
	Step                         Step    `json:"step"`
}

// EditResult is the outcome of one step edit. Case is the new, normalised
// case (write it with MarshalAuthoring); the input case is never modified.
type EditResult struct {
	Case              *Case
	Operation         string // add, update, delete, move, copy
	AffectedIndex     int
	StepCount         int
	HighRiskConfirmed bool
	// Step describes the affected step after the edit; nil for delete.
	Step *StepDescriptor
	// RemovedStepID is set by Delete.
	RemovedStepID string
}

// Describe builds the descriptor of one normalised step, for printing:
// the parameter values of a step marked encrypted are redacted (the files
// the edits write keep them).
func Describe(s Step, index int) StepDescriptor {
	d := StepDescriptor{Index: index, StepID: s.StepID, Step: s.Clone()}
	redactStep(&d.Step)
	enum, ok := lookupAction(s.Method.ActionEnum)
	if ok {
		d.ActionEnum = enum.ActionEnum
		d.ActionCode = enum.Code
		d.RequiresNode = enum.RequiresNode
		d.HighRisk = enum.HighRisk
		d.HighRiskReason = clonePtr(enum.HighRiskReason)
		d.RequiresHighRiskConfirmation = enum.RequiresHighRisk
		d.AuthoringAllowed = enum.AuthoringAllowed
	} else {
		d.ActionEnum = s.Method.ActionEnum
	}
	if ta, ok := s.Method.Param("targetAction"); ok && strings.TrimSpace(ta) != "" {
		d.TargetAction = Str(strings.TrimSpace(ta))
		d.ActionCode = *d.TargetAction
		if p, ok := lookupProvider(ta); ok {
			d.RequiresNode = p.RequiresNode
		} else {
			d.AuthoringAllowed = false
		}
	}
	return d
}

// List normalises c without the authoring policy (so historical shell
// steps can be shown, flagged authoringAllowed:false) and describes every
// step.
func List(c *Case) ([]StepDescriptor, error) {
	n, _, err := Normalize(c, NormalizeOptions{SkipPolicy: true})
	if err != nil {
		return nil, err
	}
	out := make([]StepDescriptor, len(n.Steps))
	for i, s := range n.Steps {
		out[i] = Describe(s, i)
	}
	return out, nil
}

// SelectStep is case-step-list --index: the descriptor at index, or
// step_index_out_of_range (negative indexes included).
func SelectStep(ds []StepDescriptor, index int) ([]StepDescriptor, error) {
	if err := checkIndex(index, len(ds), false); err != nil {
		return nil, err
	}
	return ds[index : index+1], nil
}

// Insert inserts step so that it ends up at index at, 0..len(steps); any
// other index, negative ones included, is step_index_out_of_range. A step
// without stepId gets the first free ai-step-NNN.
func Insert(c *Case, at int, step Step, opts EditOptions) (*EditResult, error) {
	return insert(c, &at, step, opts)
}

// Append adds step after the last one (case-step-add without --at).
func Append(c *Case, step Step, opts EditOptions) (*EditResult, error) {
	return insert(c, nil, step, opts)
}

func insert(c *Case, at *int, step Step, opts EditOptions) (*EditResult, error) {
	base, err := editBase(c)
	if err != nil {
		return nil, err
	}
	pos := len(base.Steps)
	if at != nil {
		pos = *at
	}
	if err := checkIndex(pos, len(base.Steps), true); err != nil {
		return nil, err
	}
	s := step.Clone()
	if s.StepID == "" {
		s.StepID = freeStepID(base.Steps, "")
	}
	base.Steps = insertStep(base.Steps, pos, s)
	return finishEdit(base, "add", pos, opts)
}

// Update replaces the step at index. The replacement inherits the old
// stepId and operationId when it has none.
func Update(c *Case, index int, step Step, opts EditOptions) (*EditResult, error) {
	base, err := editBase(c)
	if err != nil {
		return nil, err
	}
	if err := checkIndex(index, len(base.Steps), false); err != nil {
		return nil, err
	}
	s := step.Clone()
	if s.StepID == "" {
		s.StepID = base.Steps[index].StepID
	}
	if s.OperationID == "" {
		s.OperationID = base.Steps[index].OperationID
	}
	base.Steps[index] = s
	return finishEdit(base, "update", index, opts)
}

// Delete removes the step at index. A case keeps at least one step; the
// result must still pass normalisation (e.g. provider start/stop pairs).
// No high-risk confirmation is needed to remove a step.
func Delete(c *Case, index int) (*EditResult, error) {
	base, err := editBase(c)
	if err != nil {
		return nil, err
	}
	if err := checkIndex(index, len(base.Steps), false); err != nil {
		return nil, err
	}
	if len(base.Steps) == 1 {
		return nil, stepError(fault.CodeLastStep, index, base.Steps[index].StepID, "a SoloPi case must keep at least one step").
			with("stepCount", 1).with("index", index)
	}
	removed := base.Steps[index].StepID
	base.Steps = append(base.Steps[:index:index], base.Steps[index+1:]...)
	n, _, err := Normalize(base, NormalizeOptions{SkipPolicy: true})
	if err != nil {
		return nil, fmt.Errorf("case-step delete: %w", err)
	}
	return &EditResult{Case: n, Operation: "delete", AffectedIndex: index, StepCount: len(n.Steps), RemovedStepID: removed}, nil
}

// Move moves the step at from so that it ends up at index to.
func Move(c *Case, from, to int, opts EditOptions) (*EditResult, error) {
	base, err := editBase(c)
	if err != nil {
		return nil, err
	}
	if err := checkIndex(from, len(base.Steps), false); err != nil {
		return nil, err
	}
	if err := checkIndex(to, len(base.Steps), false); err != nil {
		return nil, err
	}
	s := base.Steps[from]
	// The moved step must pass the policy where it came from, before the
	// rest of the case is re-checked.
	if _, err := stepPolicy(s, from, opts.ConfirmHighRisk, "move"); err != nil {
		return nil, fmt.Errorf("case-step move: %w", err)
	}
	rest := append(base.Steps[:from:from], base.Steps[from+1:]...)
	base.Steps = insertStep(rest, to, s)
	return finishEdit(base, "move", to, opts)
}

// Copy inserts a copy of the step at index at position to; the copy's
// stepId is "<stepId>-copy", then "-copy-2", "-copy-3", ... until unique.
func Copy(c *Case, index, to int, opts EditOptions) (*EditResult, error) {
	base, err := editBase(c)
	if err != nil {
		return nil, err
	}
	if err := checkIndex(index, len(base.Steps), false); err != nil {
		return nil, err
	}
	if err := checkIndex(to, len(base.Steps), true); err != nil {
		return nil, err
	}
	s := base.Steps[index].Clone()
	if _, err := stepPolicy(s, index, opts.ConfirmHighRisk, "copy"); err != nil {
		return nil, fmt.Errorf("case-step copy: %w", err)
	}
	s.StepID = freeStepID(base.Steps, s.StepID+"-copy")
	base.Steps = insertStep(base.Steps, to, s)
	return finishEdit(base, "copy", to, opts)
}

// editBase normalises the source case (without policy, like upstream's
// loader) so that edits start from canonical steps.
func editBase(c *Case) (*Case, error) {
	n, _, err := Normalize(c, NormalizeOptions{SkipPolicy: true})
	if err != nil {
		return nil, fmt.Errorf("source case: %w", err)
	}
	return n, nil
}

// finishEdit re-normalises the whole case and applies the authoring policy
// to the affected step only: historical steps elsewhere in the case are
// not the edit's responsibility.
func finishEdit(c *Case, op string, affected int, opts EditOptions) (*EditResult, error) {
	n, _, err := Normalize(c, NormalizeOptions{SkipPolicy: true})
	if err != nil {
		return nil, fmt.Errorf("case-step %s: %w", op, err)
	}
	if _, err := stepPolicy(n.Steps[affected], affected, opts.ConfirmHighRisk, op); err != nil {
		return nil, fmt.Errorf("case-step %s: %w", op, err)
	}
	if err := checkStepRedacted(n.Steps[affected], affected); err != nil {
		return nil, fmt.Errorf("case-step %s: %w", op, err)
	}
	d := Describe(n.Steps[affected], affected)
	return &EditResult{
		Case: n, Operation: op, AffectedIndex: affected, StepCount: len(n.Steps),
		HighRiskConfirmed: opts.ConfirmHighRisk, Step: &d,
	}, nil
}

func checkIndex(index, count int, insertion bool) error {
	upper := count - 1
	if insertion {
		upper = count
	}
	if index < 0 || index > upper {
		e := newError(fault.CodeStepIndexOutOfRange, "step index %d is out of range 0..%d", index, upper)
		e.StepIndex = index
		return e.with("index", index).with("minimum", 0).with("maximum", upper).with("insertion", insertion).with("stepCount", count)
	}
	return nil
}

func insertStep(steps []Step, at int, s Step) []Step {
	out := make([]Step, 0, len(steps)+1)
	out = append(out, steps[:at]...)
	out = append(out, s)
	return append(out, steps[at:]...)
}

// freeStepID returns preferred (or preferred-2, -3, ...) if given, else
// the first free ai-step-NNN.
func freeStepID(steps []Step, preferred string) string {
	used := make(map[string]bool, len(steps))
	for _, s := range steps {
		used[s.StepID] = true
	}
	if preferred != "" {
		cand := preferred
		for n := 2; used[cand]; n++ {
			cand = fmt.Sprintf("%s-%d", preferred, n)
		}
		return cand
	}
	for n := 1; ; n++ {
		cand := fmt.Sprintf("ai-step-%03d", n)
		if !used[cand] {
			return cand
		}
	}
}
