package appspec

import (
	"strconv"
	"strings"
)

// The template and condition semantics live with the spec so that what a
// spec means is defined in one place; the phone supplies the state.

// Expand substitutes ${name} with the app's state variable (or ${n} with the
// repeat index). Unknown names expand to "".
func Expand(tpl string, vars map[string]string, idx int) string {
	if !strings.Contains(tpl, "${") {
		return tpl
	}
	var b strings.Builder
	for {
		i := strings.Index(tpl, "${")
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.Index(tpl[i:], "}")
		if j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:i])
		name := tpl[i+2 : i+j]
		switch v, ok := vars[name]; {
		case ok:
			b.WriteString(v)
		case name == "n" && idx > 0:
			b.WriteString(strconv.Itoa(idx))
		}
		tpl = tpl[i+j+1:]
	}
}

// Eval reports whether the condition holds over the app's state variables
// and text-field contents; idx is the repeat index for ${n} in comparison
// values. A value that is not an integer fails every numeric comparison.
func (c *cond) Eval(vars, fields map[string]string, idx int) bool {
	switch {
	case len(c.All) > 0:
		for i := range c.All {
			if !c.All[i].Eval(vars, fields, idx) {
				return false
			}
		}
		return true
	case len(c.Any) > 0:
		for i := range c.Any {
			if c.Any[i].Eval(vars, fields, idx) {
				return true
			}
		}
		return false
	case c.Not != nil:
		return !c.Not.Eval(vars, fields, idx)
	}
	var v string
	if c.Field != "" {
		v = fields[c.Field]
	} else {
		v = vars[c.Var]
	}
	switch {
	case c.Eq != nil:
		return v == Expand(*c.Eq, vars, idx)
	case c.Ne != nil:
		return v != Expand(*c.Ne, vars, idx)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return false
	}
	switch {
	case c.Gt != nil:
		return n > *c.Gt
	case c.Ge != nil:
		return n >= *c.Ge
	case c.Lt != nil:
		return n < *c.Lt
	case c.Le != nil:
		return n <= *c.Le
	}
	return false
}
