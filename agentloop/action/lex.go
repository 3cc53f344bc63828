package action

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of one token of the Python-call subset.
type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokLParen
	tokRParen
	tokLBrack
	tokRBrack
	tokComma
	tokAssign
	tokOp // any other punctuation: + - * ** . : { } < > and so on
)

func (k tokKind) String() string {
	switch k {
	case tokEOF:
		return "end of output"
	case tokIdent:
		return "name"
	case tokString:
		return "string"
	case tokNumber:
		return "number"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	case tokLBrack:
		return "'['"
	case tokRBrack:
		return "']'"
	case tokComma:
		return "','"
	case tokAssign:
		return "'='"
	}
	return "operator"
}

// token is one lexeme. Text is the source slice; Str is the decoded value
// of a string literal; Num the value of a number literal.
type token struct {
	Kind tokKind
	Pos  int // byte offset in the scanned text
	End  int
	Text string
	Str  string
	Num  float64
	// Prefixed marks a string literal with a prefix (f"", r"", b"", u""):
	// f-strings are expressions, the others are not worth supporting.
	Prefixed bool
}

// lexError is a tokenizer failure; incomplete is true when the text ended
// inside a literal, so the caller can tell an incomplete call from a
// malformed one.
type lexError struct {
	Pos        int
	Msg        string
	Incomplete bool
}

func (e *lexError) Error() string { return fmt.Sprintf("offset %d: %s", e.Pos, e.Msg) }

// lexer scans the call subset of Python: names, string literals with
// escapes (raw newlines are tolerated inside quotes, because models emit
// multi-line Type text verbatim), numbers and punctuation. It never
// evaluates anything.
type lexer struct {
	src string
	pos int
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		l.pos += n
	}
}

// next returns the next token or a lexError.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{Kind: tokEOF, Pos: start, End: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '"' || c == '\'':
		return l.lexString(start, start)
	case isIdentStart(c):
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		word := l.src[start:l.pos]
		// A string prefix glued to a quote is still one literal.
		if l.pos < len(l.src) && (l.src[l.pos] == '"' || l.src[l.pos] == '\'') && isStringPrefix(word) {
			return l.lexString(start, l.pos)
		}
		return token{Kind: tokIdent, Pos: start, End: l.pos, Text: word}, nil
	case c >= '0' && c <= '9' || c == '.' && l.pos+1 < len(l.src) && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9':
		return l.lexNumber(start)
	}
	l.pos++
	k := tokOp
	switch c {
	case '(':
		k = tokLParen
	case ')':
		k = tokRParen
	case '[':
		k = tokLBrack
	case ']':
		k = tokRBrack
	case ',':
		k = tokComma
	case '=':
		if l.pos < len(l.src) && l.src[l.pos] == '=' {
			l.pos++ // "==" is a comparison, an expression
		} else {
			k = tokAssign
		}
	case '*':
		if l.pos < len(l.src) && l.src[l.pos] == '*' {
			l.pos++
		}
	default:
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(l.src[start:])
			l.pos = start + n
		}
	}
	return token{Kind: k, Pos: start, End: l.pos, Text: l.src[start:l.pos]}, nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

func (l *lexer) lexNumber(start int) (token, error) {
	digits := func() {
		for l.pos < len(l.src) && (l.src[l.pos] >= '0' && l.src[l.pos] <= '9' || l.src[l.pos] == '_') {
			l.pos++
		}
	}
	digits()
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		save := l.pos
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '9' {
			digits()
		} else {
			l.pos = save
		}
	}
	text := l.src[start:l.pos]
	// A letter glued to a number (0x1F, 12px, 3j) is not a plain decimal.
	if l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		return token{Kind: tokOp, Pos: start, End: l.pos, Text: l.src[start:l.pos]}, nil
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
	if err != nil {
		// ParseFloat reports overflow with ±Inf and a range error; keep
		// the infinity so the coordinate check can name it non-finite.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return token{}, &lexError{Pos: start, Msg: fmt.Sprintf("malformed number %q", text)}
		}
	}
	return token{Kind: tokNumber, Pos: start, End: l.pos, Text: text, Num: v}, nil
}

// lexString decodes a quoted literal starting at quotePos (prefix, if any,
// starts at start). Escapes follow Python: \\ \' \" \n \r \t \0 \a \b \f \v
// \xHH \uHHHH \UHHHHHHHH and backslash-newline; an unknown escape keeps its
// backslash, as Python does.
func (l *lexer) lexString(start, quotePos int) (token, error) {
	q := l.src[quotePos]
	prefixed := quotePos > start
	raw := prefixed && strings.ContainsAny(l.src[start:quotePos], "rR")
	l.pos = quotePos + 1
	triple := strings.HasPrefix(l.src[l.pos:], string([]byte{q, q}))
	if triple {
		l.pos += 2
	}
	var b strings.Builder
	for {
		if l.pos >= len(l.src) {
			return token{}, &lexError{Pos: start, Msg: "unterminated string literal", Incomplete: true}
		}
		c := l.src[l.pos]
		if c == q {
			if !triple {
				l.pos++
				break
			}
			if strings.HasPrefix(l.src[l.pos:], string([]byte{q, q, q})) {
				l.pos += 3
				break
			}
		}
		if c != '\\' || raw {
			if c == '\\' && raw && l.pos+1 < len(l.src) {
				b.WriteByte(c)
				b.WriteByte(l.src[l.pos+1])
				l.pos += 2
				continue
			}
			b.WriteByte(c)
			l.pos++
			continue
		}
		if l.pos+1 >= len(l.src) {
			return token{}, &lexError{Pos: start, Msg: "unterminated string literal", Incomplete: true}
		}
		e := l.src[l.pos+1]
		l.pos += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if l.pos+n > len(l.src) {
				return token{}, &lexError{Pos: l.pos - 2, Msg: "truncated \\" + string(e) + " escape", Incomplete: true}
			}
			v, err := strconv.ParseUint(l.src[l.pos:l.pos+n], 16, 32)
			if err != nil || v > unicode.MaxRune || v >= 0xD800 && v <= 0xDFFF {
				return token{}, &lexError{Pos: l.pos - 2, Msg: "malformed \\" + string(e) + " escape"}
			}
			b.WriteRune(rune(v))
			l.pos += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	s := b.String()
	if !utf8.ValidString(s) {
		return token{}, &lexError{Pos: start, Msg: "string literal is not valid UTF-8"}
	}
	return token{Kind: tokString, Pos: start, End: l.pos, Text: l.src[start:l.pos], Str: s, Prefixed: prefixed}, nil
}
