package action

import (
	"github.com/solopi-dev/solopi/fault"
	"math"
	"strings"
)

// valueKind is the type of one literal argument.
type valueKind int

const (
	valString valueKind = iota
	valNumber
	valBool
	valNone
	valList
)

func (k valueKind) String() string {
	return [...]string{"string", "number", "boolean", "None", "list"}[k]
}

// value is a literal: the only expressions the protocol admits.
type value struct {
	Kind valueKind
	Pos  int
	Str  string
	Num  float64
	Bool bool
	List []value
}

// kwarg is one keyword argument of a call.
type kwarg struct {
	Name  string
	Pos   int
	Value value
}

// callNode is the AST of one call: name(keyword=literal, ...).
type callNode struct {
	Name string
	Pos  int // offset of the name
	End  int // offset just past ')'
	Args []kwarg
}

// callParser builds a callNode from tokens. It accepts keyword arguments
// whose values are literals (strings, numbers with an optional sign,
// True/False/None, lists of literals) and rejects everything else by kind:
// positional arguments, *args/**kwargs, names, calls, attribute access,
// operators, comprehensions.
type callParser struct {
	lx   lexer
	tok  token
	base int // offset of the scanned text inside the whole answer
}

func newCallParser(src string, base int) (*callParser, error) {
	p := &callParser{lx: lexer{src: src}, base: base}
	return p, p.advance()
}

func (p *callParser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		le := err.(*lexError)
		if le.Incomplete {
			return perr(fault.CodeIncompleteCall, p.base+le.Pos, "%s", le.Msg)
		}
		return perr(fault.CodeInvalidLiteral, p.base+le.Pos, "%s", le.Msg)
	}
	t.Pos += p.base
	t.End += p.base
	p.tok = t
	return nil
}

// unexpected turns the current token into the right rejection: the text
// ended (incomplete) or an expression the protocol does not admit.
func (p *callParser) unexpected(what string) error {
	if p.tok.Kind == tokEOF {
		return perr(fault.CodeIncompleteCall, p.tok.Pos, "the output ends inside the call (expected %s)", what)
	}
	return perr(fault.CodeDynamicExpression, p.tok.Pos, "expected %s, found %s %q: only literal keyword arguments are allowed", what, p.tok.Kind, p.tok.Text)
}

// parseCall reads name(...) and stops just after ')'.
func (p *callParser) parseCall() (*callNode, error) {
	if p.tok.Kind != tokIdent {
		return nil, p.unexpected("a call")
	}
	c := &callNode{Name: p.tok.Text, Pos: p.tok.Pos}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.Kind != tokLParen {
		return nil, p.unexpected("'('")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for p.tok.Kind != tokRParen {
		if p.tok.Kind == tokOp && (p.tok.Text == "*" || p.tok.Text == "**") {
			return nil, perr(fault.CodeDynamicExpression, p.tok.Pos, "argument unpacking (%s) is not allowed", p.tok.Text)
		}
		if p.tok.Kind != tokIdent {
			if p.tok.Kind == tokEOF {
				return nil, p.unexpected("a keyword argument")
			}
			// A literal where a keyword should be is a positional argument.
			if p.tok.Kind == tokString || p.tok.Kind == tokNumber || p.tok.Kind == tokLBrack {
				return nil, perr(fault.CodePositionalArgument, p.tok.Pos, "positional arguments are not allowed; write name=value")
			}
			return nil, p.unexpected("a keyword argument")
		}
		name, pos := p.tok.Text, p.tok.Pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.Kind != tokAssign {
			if p.tok.Kind == tokComma || p.tok.Kind == tokRParen {
				return nil, perr(fault.CodePositionalArgument, pos, "positional argument %q is not allowed; write name=value", name)
			}
			return nil, p.unexpected("'=' after " + name)
		}
		if prev, dup := seen[name]; dup {
			return nil, perr(fault.CodeDuplicateKeyword, pos, "keyword %q repeats the one at offset %d", name, prev)
		}
		seen[name] = pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		v, err := p.parseValue(0)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, kwarg{Name: name, Pos: pos, Value: v})
		switch p.tok.Kind {
		case tokComma:
			if err := p.advance(); err != nil {
				return nil, err
			}
		case tokRParen:
		default:
			return nil, p.unexpected("',' or ')'")
		}
	}
	c.End = p.tok.End
	return c, nil
}

// maxListDepth bounds nesting so hostile input cannot exhaust the stack.
const maxListDepth = 4

func (p *callParser) parseValue(depth int) (value, error) {
	t := p.tok
	var v value
	switch t.Kind {
	case tokString:
		if t.Prefixed {
			return v, perr(fault.CodeDynamicExpression, t.Pos, "prefixed string literals (f\"\", r\"\", b\"\") are not allowed")
		}
		v = value{Kind: valString, Pos: t.Pos, Str: t.Str}
		if err := p.advance(); err != nil {
			return v, err
		}
		if p.tok.Kind == tokString {
			return v, perr(fault.CodeDynamicExpression, p.tok.Pos, "implicit string concatenation is not allowed")
		}
	case tokNumber:
		v = value{Kind: valNumber, Pos: t.Pos, Num: t.Num}
		if err := p.advance(); err != nil {
			return v, err
		}
	case tokOp:
		if t.Text != "-" && t.Text != "+" {
			return v, p.unexpected("a literal value")
		}
		if err := p.advance(); err != nil {
			return v, err
		}
		n, err := p.parseSigned(t)
		if err != nil {
			return v, err
		}
		v = n
	case tokIdent:
		switch t.Text {
		case "True", "False":
			v = value{Kind: valBool, Pos: t.Pos, Bool: t.Text == "True"}
		case "None":
			v = value{Kind: valNone, Pos: t.Pos}
		default:
			if nf, ok := nonFiniteName(t.Text); ok {
				// NaN/Infinity spelled as names: keep the value so the
				// coordinate check reports it as non-finite, its real fault.
				v = value{Kind: valNumber, Pos: t.Pos, Num: nf}
				break
			}
			return v, perr(fault.CodeDynamicExpression, t.Pos, "name %q is an expression, not a literal", t.Text)
		}
		if err := p.advance(); err != nil {
			return v, err
		}
	case tokLBrack:
		if depth >= maxListDepth {
			return v, perr(fault.CodeDynamicExpression, t.Pos, "lists nested deeper than %d are not allowed", maxListDepth)
		}
		v = value{Kind: valList, Pos: t.Pos}
		if err := p.advance(); err != nil {
			return v, err
		}
		for p.tok.Kind != tokRBrack {
			e, err := p.parseValue(depth + 1)
			if err != nil {
				return v, err
			}
			v.List = append(v.List, e)
			switch p.tok.Kind {
			case tokComma:
				if err := p.advance(); err != nil {
					return v, err
				}
			case tokRBrack:
			default:
				return v, p.unexpected("',' or ']'")
			}
		}
		if err := p.advance(); err != nil {
			return v, err
		}
	default:
		return v, p.unexpected("a literal value")
	}
	// Anything glued to a literal other than a separator makes it an
	// expression: 500+1, x.y, f(1), [1,2][0], 3 if a else b.
	switch p.tok.Kind {
	case tokComma, tokRParen, tokRBrack, tokEOF:
		return v, nil
	}
	return v, perr(fault.CodeDynamicExpression, p.tok.Pos, "%s %q after a literal makes an expression", p.tok.Kind, p.tok.Text)
}

// parseSigned reads the number after a unary sign.
func (p *callParser) parseSigned(sign token) (value, error) {
	t := p.tok
	var num float64
	switch {
	case t.Kind == tokNumber:
		num = t.Num
	case t.Kind == tokIdent:
		nf, ok := nonFiniteName(t.Text)
		if !ok {
			return value{}, p.unexpected("a number after " + sign.Text)
		}
		num = nf
	default:
		return value{}, p.unexpected("a number after " + sign.Text)
	}
	if sign.Text == "-" {
		num = -num
	}
	if err := p.advance(); err != nil {
		return value{}, err
	}
	return value{Kind: valNumber, Pos: sign.Pos, Num: num}, nil
}

// nonFiniteName maps the spellings models use for NaN and infinity.
func nonFiniteName(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), true
	case "inf", "infinity":
		return math.Inf(1), true
	}
	return 0, false
}
