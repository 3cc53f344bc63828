package verify

import (
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/oracle"
)

// Warning is a compile-time note: the plan is valid but may not mean what
// its author thinks.
type Warning struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location"`
	Pattern  string `json:"pattern,omitempty"`
	// Semantics is how this oracle's pattern is applied: "full_match"
	// (compiled ASSERT, Java String.matches on the phone) or "search"
	// (judged on the host, Python re.search).
	Semantics string `json:"semantics,omitempty"`
}

// CodeUnanchoredMatches warns about a matches pattern without ^…$.

// planWarnings lists every unanchored matches pattern: a compiled ASSERT
// runs it as a full match on the phone while a dynamic checkpoint is
// judged by search on the host, so "abc" passes "xabcx" in one and fails
// in the other. Both behaviours are kept for compatibility with solopi-ai.
func planWarnings(p *Plan) []Warning {
	var out []Warning
	add := func(o Oracle, location, semantics string) {
		if o.UI == nil || o.UI.Operator != oracle.OpMatches || oracle.Anchored(o.UI.Expected) {
			return
		}
		msg := "the pattern is not anchored with ^…$: on the phone a compiled ASSERT matches the whole text, while the host searches anywhere in it"
		out = append(out, Warning{Code: fault.CodeUnanchoredMatches, Message: msg, Location: location, Pattern: o.UI.Expected, Semantics: semantics})
	}
	for _, sc := range p.Scenarios {
		for _, pre := range sc.Preconditions {
			add(pre.Oracle, sc.ID+"/preconditions/"+pre.ID, "full_match")
		}
		for _, cp := range sc.Checkpoints {
			sem := "search"
			if cp.OracleStepID != "" {
				sem = "full_match"
			}
			add(cp.Oracle, sc.ID+"/checkpoints/"+cp.ID, sem)
		}
		for _, c := range sc.Cleanup {
			if c.Oracle != nil {
				add(*c.Oracle, sc.ID+"/cleanup/"+c.ID, "full_match")
			}
		}
	}
	return out
}
