package verify

import "github.com/solopi-dev/solopi/canonjson"

// MarshalPlan writes a plan file: sorted keys, two-space indent, Python's
// number forms (what json.dumps(plan, indent=2, sort_keys=True,
// ensure_ascii=False) writes), ending with a newline.
func MarshalPlan(p *Plan) ([]byte, error) { return marshalFile(p.Tree()) }

// MarshalNormalized writes a normalized requirement file.
func MarshalNormalized(n *normalized) ([]byte, error) { return marshalFile(n.Tree()) }

// MarshalCase writes a compiled case file.
func MarshalCase(c *Case) ([]byte, error) { return marshalFile(c.Tree()) }

func marshalFile(v any) ([]byte, error) {
	b, err := canonjson.MarshalIndent(v, "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
