package casefile

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// violation is one place where a case document does not have the shape
// case.schema.json describes. Instance is a JSON pointer ("" is the whole
// document, "/operationLog/steps/0/operationMethod" a step's method).
type violation struct {
	Instance string `json:"instance"`
	Message  string `json:"message"`
}

// CheckShape checks a decoded case document (numbers as json.Number, as
// canonjson.Decode gives them) against the shape rules of
// case.schema.json and returns every violation, in document order.
//
// The JSON Schema stays the specification (docs and editors use it, and a
// test proves CheckShape accepts exactly what the schema accepts); this is
// its implementation in Go because the schema library compiles its
// meta-schemas at process start, which every solopi invocation would pay.
func CheckShape(doc any) []violation {
	var s shapeChecker
	s.caseObject(doc, "")
	return s.out
}

type shapeChecker struct{ out []violation }

func (s *shapeChecker) fail(at, format string, args ...any) {
	s.out = append(s.out, violation{Instance: at, Message: fmt.Sprintf(format, args...)})
}

// Kinds a value may have; a property lists the kinds it accepts.
const (
	kString = 1 << iota
	kInteger
	kNumber // any number, integers included
	kBool
	kNull
	kObject
	kArray
)

var kindWords = []struct {
	k    int
	word string
}{{kString, "string"}, {kInteger, "integer"}, {kNumber, "number"}, {kBool, "boolean"}, {kNull, "null"}, {kObject, "object"}, {kArray, "array"}}

func kindList(kinds int) string {
	var w []string
	for _, kw := range kindWords {
		if kinds&kw.k != 0 {
			w = append(w, kw.word)
		}
	}
	return strings.Join(w, " or ")
}

// isInteger follows JSON Schema: a number whose value is integral (1.0 and
// 1e2 are integers).
func isInteger(n json.Number) bool {
	f, ok := new(big.Float).SetString(string(n))
	return ok && f.IsInt()
}

func hasKind(v any, kinds int) bool {
	switch x := v.(type) {
	case nil:
		return kinds&kNull != 0
	case string:
		return kinds&kString != 0
	case bool:
		return kinds&kBool != 0
	case json.Number:
		return kinds&kNumber != 0 || kinds&kInteger != 0 && isInteger(x)
	case map[string]any:
		return kinds&kObject != 0
	case []any:
		return kinds&kArray != 0
	}
	return false
}

// typed checks v's kind and reports whether the caller should look inside.
func (s *shapeChecker) typed(v any, at string, kinds int) bool {
	if hasKind(v, kinds) {
		return true
	}
	s.fail(at, "expected %s", kindList(kinds))
	return false
}

func ptr(at, key string) string {
	key = strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
	return at + "/" + key
}

func (s *shapeChecker) required(m map[string]any, at string, keys ...string) {
	var missing []string
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		s.fail(at, "missing properties: %s", strings.Join(missing, ", "))
	}
}

// props checks the listed properties of m that are present; other
// properties are allowed.
func (s *shapeChecker) props(m map[string]any, at string, rules map[string]func(v any, at string)) {
	for _, k := range sortedKeys(m) {
		if rule, ok := rules[k]; ok {
			rule(m[k], ptr(at, k))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// kind returns a rule that only checks the kind.
func (s *shapeChecker) kind(kinds int) func(v any, at string) {
	return func(v any, at string) { s.typed(v, at, kinds) }
}

// nonBlank is a string with at least one non-whitespace character
// (minLength 1 and pattern \S).
func (s *shapeChecker) nonBlank(v any, at string) {
	if !s.typed(v, at, kString) {
		return
	}
	if !hasNonSpace(v.(string)) {
		s.fail(at, "must contain a non-blank character")
	}
}

// hasNonSpace mirrors the schema's pattern \S as Go's regexp package (which
// the schema library uses) reads it: \s is only space, \t, \n, \f and \r.
func hasNonSpace(str string) bool {
	for i := 0; i < len(str); i++ {
		switch str[i] {
		case ' ', '\t', '\n', '\f', '\r':
		default:
			return true
		}
	}
	return false
}

func (s *shapeChecker) caseObject(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	m := v.(map[string]any)
	s.required(m, at, "caseName", "targetAppPackage", "operationLog")
	s.props(m, at, map[string]func(any, string){
		"id":               s.kind(kInteger | kNull),
		"caseName":         s.nonBlank,
		"caseDesc":         s.kind(kString | kNull),
		"targetAppPackage": s.nonBlank,
		"targetAppLabel":   s.kind(kString | kNull),
		"recordMode":       s.kind(kString | kNull),
		"advanceSettings":  s.advanceSettingsField,
		"operationLog":     s.operationLogField,
		"priority":         s.priority,
		"gmtCreate":        s.kind(kInteger),
		"gmtModify":        s.kind(kInteger),
		"selected":         s.kind(kBool),
		"ideRecord":        s.kind(kBool),
		"caseFingerprint":  s.fingerprint,
	})
}

func (s *shapeChecker) priority(v any, at string) {
	if !s.typed(v, at, kInteger) {
		return
	}
	f, _ := new(big.Float).SetString(string(v.(json.Number)))
	if f.Cmp(big.NewFloat(0)) < 0 || f.Cmp(big.NewFloat(2)) > 0 {
		s.fail(at, "must be between 0 and 2")
	}
}

func (s *shapeChecker) fingerprint(v any, at string) {
	if !s.typed(v, at, kString) {
		return
	}
	if str := v.(string); len(str) != 64 || strings.Trim(str, "0123456789abcdef") != "" {
		s.fail(at, "must be 64 lowercase hex digits")
	}
}

// embedded decodes a JSON document carried as a string (the exported
// form of operationLog and advanceSettings).
func (s *shapeChecker) embedded(str, at string) (any, bool) {
	doc, err := canonjson.Decode([]byte(str))
	if err != nil {
		s.fail(at, "the string is not a JSON document")
		return nil, false
	}
	return doc, true
}

func (s *shapeChecker) operationLogField(v any, at string) {
	switch x := v.(type) {
	case string:
		if doc, ok := s.embedded(x, at); ok {
			s.operationLog(doc, at)
		}
	case map[string]any:
		s.operationLog(x, at)
	default:
		s.fail(at, "expected an object or a string holding a JSON object")
	}
}

func (s *shapeChecker) operationLog(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	m := v.(map[string]any)
	s.required(m, at, "steps")
	s.props(m, at, map[string]func(any, string){
		"steps": func(v any, at string) {
			if !s.typed(v, at, kArray) {
				return
			}
			steps := v.([]any)
			if len(steps) == 0 {
				s.fail(at, "must have at least one step")
			}
			s.items(steps, at, s.step)
		},
		"storePath": s.kind(kString | kNull),
	})
}

func (s *shapeChecker) items(list []any, at string, rule func(v any, at string)) {
	for i, item := range list {
		rule(item, at+"/"+strconv.Itoa(i))
	}
}

func (s *shapeChecker) step(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	m := v.(map[string]any)
	s.required(m, at, "operationMethod")
	s.props(m, at, map[string]func(any, string){
		"operationId":     s.kind(kString),
		"operationIndex":  s.nonNegativeInteger,
		"stepId":          s.kind(kString),
		"operationMethod": s.method,
		"operationNode": func(v any, at string) {
			if v != nil {
				s.node(v, at)
			}
		},
	})
}

func (s *shapeChecker) nonNegativeInteger(v any, at string) {
	if s.typed(v, at, kInteger) && strings.HasPrefix(string(v.(json.Number)), "-") {
		if f, _ := new(big.Float).SetString(string(v.(json.Number))); f.Sign() < 0 {
			s.fail(at, "must be 0 or more")
		}
	}
}

// scalar is a parameter or extra value: string, number, boolean or null.
const scalar = kString | kNumber | kBool | kNull

func (s *shapeChecker) scalarMap(v any, at string) {
	if !s.typed(v, at, kObject|kNull) || v == nil {
		return
	}
	m := v.(map[string]any)
	for _, k := range sortedKeys(m) {
		s.typed(m[k], ptr(at, k), scalar)
	}
}

func (s *shapeChecker) method(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	m := v.(map[string]any)
	s.required(m, at, "actionEnum")
	s.props(m, at, map[string]func(any, string){
		"actionEnum": func(v any, at string) {
			if s.typed(v, at, kString) && v.(string) == "" {
				s.fail(at, "must not be empty")
			}
		},
		"encrypt":        s.kind(kBool),
		"safeEncrypt":    s.kind(kBool),
		"operationParam": s.scalarMap,
	})
}

func (s *shapeChecker) node(v any, at string) {
	if !s.typed(v, at, kObject|kNull) {
		return
	}
	text := s.kind(kString | kNull)
	s.props(v.(map[string]any), at, map[string]func(any, string){
		"xpath": text, "description": text, "text": text, "resourceId": text,
		"id":          s.kind(kString | kInteger | kNull),
		"className":   text,
		"packageName": text,
		"depth":       s.kind(kInteger),
		"nodeBound": func(v any, at string) {
			if v != nil {
				s.rect(v, at)
			}
		},
		"assistantNodes": func(v any, at string) {
			if !s.typed(v, at, kArray|kNull) || v == nil {
				return
			}
			s.items(v.([]any), at, func(v any, at string) {
				if !s.typed(v, at, kObject) {
					return
				}
				s.props(v.(map[string]any), at, map[string]func(any, string){
					"className": text, "resourceId": text, "text": text, "description": text,
					"parentHeight": s.kind(kInteger),
				})
			})
		},
		"extra":    s.scalarMap,
		"nodeType": text,
	})
}

func (s *shapeChecker) rect(v any, at string) {
	if !s.typed(v, at, kObject|kNull) {
		return
	}
	integer := s.kind(kInteger)
	s.props(v.(map[string]any), at, map[string]func(any, string){
		"left": integer, "top": integer, "right": integer, "bottom": integer,
		"empty": s.kind(kBool),
	})
}

func (s *shapeChecker) advanceSettingsField(v any, at string) {
	switch x := v.(type) {
	case nil:
	case string:
		if !hasNonSpace(x) {
			return // unset
		}
		if doc, ok := s.embedded(x, at); ok {
			s.advanceSettings(doc, at)
		}
	case map[string]any:
		s.advanceSettings(x, at)
	default:
		s.fail(at, "expected an object, a string holding a JSON object, a blank string or null")
	}
}

func (s *shapeChecker) advanceSettings(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	steps := func(v any, at string) {
		if s.typed(v, at, kArray) {
			s.items(v.([]any), at, s.step)
		}
	}
	s.props(v.(map[string]any), at, map[string]func(any, string){
		"descriptorMode": s.kind(kString),
		"version":        s.kind(kInteger),
		"overrideApp":    s.kind(kString),
		"params":         s.kind(kArray),
		"prepareActions": steps,
		"suffixActions":  steps,
		"runningParam":   s.runningParam,
	})
}

func (s *shapeChecker) runningParam(v any, at string) {
	if !s.typed(v, at, kObject) {
		return
	}
	m := v.(map[string]any)
	s.required(m, at, "mode", "paramList")
	for _, k := range sortedKeys(m) {
		switch k {
		case "mode":
			if mode, ok := m[k].(string); !ok || mode != "SEPARATE" && mode != "UNION" {
				s.fail(ptr(at, k), `must be "SEPARATE" or "UNION"`)
			}
		case "paramList":
			s.paramList(m[k], ptr(at, k))
		default:
			s.fail(ptr(at, k), "is not a runningParam property")
		}
	}
}

func (s *shapeChecker) paramList(v any, at string) {
	if !s.typed(v, at, kArray) {
		return
	}
	rows := v.([]any)
	if len(rows) == 0 {
		s.fail(at, "must have at least one row")
	}
	s.items(rows, at, func(v any, at string) {
		if !s.typed(v, at, kObject) {
			return
		}
		row := v.(map[string]any)
		if len(row) == 0 {
			s.fail(at, "must have at least one parameter")
		}
		for _, k := range sortedKeys(row) {
			if s.typed(row[k], ptr(at, k), kString) && row[k].(string) == "" {
				s.fail(ptr(at, k), "must not be empty")
			}
		}
	})
}
