package verify

import (
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Budget bounds a dynamic exploration (the device enforces it on the Agent
// session). A scenario budget is checked and kept but, as in solopi-ai,
// only an explore step's budget is used at run time.
type Budget struct {
	MaxSteps           int64
	MaxDurationMs      int64
	IdleTimeoutMs      int64
	MaxRepeatedActions int64
	MaxNoProgressSteps int64
}

type budgetField struct {
	name          string
	def, min, max int64
	get           func(*Budget) *int64
}

var budgetFields = []budgetField{
	{"maxSteps", 50, 1, 200, func(b *Budget) *int64 { return &b.MaxSteps }},
	{"maxDurationMs", 300000, 1000, 1800000, func(b *Budget) *int64 { return &b.MaxDurationMs }},
	{"idleTimeoutMs", 60000, 1000, 300000, func(b *Budget) *int64 { return &b.IdleTimeoutMs }},
	{"maxRepeatedActions", 5, 1, 20, func(b *Budget) *int64 { return &b.MaxRepeatedActions }},
	{"maxNoProgressSteps", 3, 1, 20, func(b *Budget) *int64 { return &b.MaxNoProgressSteps }},
}

// normalizeBudget fills defaults and checks types and ranges; null means
// every default.
func normalizeBudget(v any, label string) (Budget, error) {
	src := map[string]any{}
	if v != nil {
		m, err := want.Object(v, label)
		if err != nil {
			return Budget{}, err
		}
		src = m
	}
	names := make([]string, len(budgetFields))
	for i, f := range budgetFields {
		names[i] = f.name
	}
	if unknown := canonjson.UnknownKeys(src, names...); len(unknown) > 0 {
		return Budget{}, invalid(fault.CodeInvalidBudget, label+" has unknown fields", "fields", unknown)
	}
	var b Budget
	for _, f := range budgetFields {
		raw, ok := src[f.name]
		if !ok {
			*f.get(&b) = f.def
			continue
		}
		if !canonjson.IsInt(raw) {
			return Budget{}, invalid(fault.CodeInvalidBudget, label+"."+f.name+" must be an integer")
		}
		// An integer beyond int64 is clamped to it: out of range, as in Python.
		n, ok := canonjson.Integer(raw)
		if !ok || n < f.min || n > f.max {
			return Budget{}, invalid(fault.CodeInvalidBudget, label+"."+f.name+" is out of range", "minimum", f.min, "maximum", f.max, "actual", raw)
		}
		*f.get(&b) = n
	}
	return b, nil
}

func (b Budget) tree() map[string]any {
	m := make(map[string]any, len(budgetFields))
	for _, f := range budgetFields {
		m[f.name] = *f.get(&b)
	}
	return m
}
