package verify

import (
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/redact"
)

// A requirement marks a value secret by its name: a parameter, a
// scenario's testData entry or binding whose name says it is a credential
// (redact.SecretName: password, token, apiKey, …). The plan holds such a
// value in plain text (an input step must type it, solopi-ai's compiled
// cases encrypt nothing), so verify-run keeps it out of everything it
// writes: every file of the evidence directory, the replay's own files and
// the JUnit report.

// Secrets lists the values the plan's requirement marks secret: text as
// written (after the bindings resolve), numbers as Python's str() spells
// them, every text and number inside an object or a list.
func (p *Plan) Secrets() []string {
	var out []string
	add := func(m map[string]any, resolved bool) {
		for k, v := range m {
			if !redact.SecretName(k) {
				continue
			}
			for i := 0; !resolved && i < 8; i++ {
				// A parameter may refer to others (which may refer to
				// more); its resolved value is what a step types.
				r, err := resolve(v, scope(p.Parameters), "parameters."+k)
				if err != nil || sameJSON(r, v) {
					break
				}
				v = r
			}
			out = appendScalars(out, v)
		}
	}
	add(p.Parameters, false)
	for _, sc := range p.Scenarios {
		add(sc.TestData, true)
		add(sc.Bindings, true)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func appendScalars(out []string, v any) []string {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			out = appendScalars(out, e)
		}
	case []any:
		for _, e := range x {
			out = appendScalars(out, e)
		}
	case nil, bool:
		// Not a secret anybody could type: hiding "True" would take the
		// word out of all the evidence.
	default:
		if s, err := canonjson.PyStr(x); err == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SecretParams lists the parameters of the case whose value holds one of
// secrets: what the replay must keep out of its evidence.
func (c *Case) SecretParams(secrets []string) []casefile.ParamRef {
	refs := []casefile.ParamRef{}
	if len(secrets) == 0 {
		return refs
	}
	for _, st := range c.Steps {
		keys := make([]string, 0, len(st.Params))
		for k := range st.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, _ := st.Params[k].(string)
			if v != "" && slices.ContainsFunc(secrets, func(s string) bool { return strings.Contains(v, s) }) {
				refs = append(refs, casefile.ParamRef{StepID: st.StepID, Key: k})
			}
		}
	}
	return refs
}
