package action

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/textclip"
)

// buildAction applies the closed per-action schema.
func buildAction(c *callNode, opts ParseOptions) (Action, error) {
	var a Action
	args := map[string]kwarg{}
	for _, k := range c.Args {
		args[k.Name] = k
	}
	switch c.Name {
	case "finish":
		a.Name = Finish
	case "do":
		k, ok := args["action"]
		if !ok {
			return a, perr(fault.CodeMissingField, c.Pos, "do(...) needs action=\"...\"")
		}
		if k.Value.Kind != valString {
			return a, perr(fault.CodeInvalidValue, k.Value.Pos, "action must be a string, not %s", k.Value.Kind)
		}
		name, ok := actionAliases[aliasKey(k.Value.Str)]
		if !ok {
			return a, perr(fault.CodeUnknownAction, k.Value.Pos, "unknown action %q", textclip.Runes(k.Value.Str, 60))
		}
		a.Name = name
		delete(args, "action")
	default:
		return a, perr(fault.CodeUnknownAction, c.Pos, "unknown call %q; use do(...) or finish(...)", textclip.Runes(c.Name, 60))
	}
	sch := actionSchemas[a.Name]
	allowed := map[string]bool{fieldScreenDescription: true, fieldReason: true}
	for _, f := range sch.required {
		allowed[f] = true
	}
	for _, f := range sch.optional {
		allowed[f] = true
	}
	// Unknown fields first, in the order written, so the model hears about
	// the field it invented rather than a later consequence.
	for _, k := range c.Args {
		if k.Name == "action" && c.Name == "do" {
			continue
		}
		if !allowed[k.Name] {
			hint := ""
			if k.Name == "description" {
				hint = "; use screen_description and reason"
			}
			return a, perr(fault.CodeUnknownField, k.Pos, "%s does not take %q%s", a.Name, k.Name, hint)
		}
	}
	for _, f := range sch.required {
		if _, ok := args[f]; !ok {
			return a, perr(fault.CodeMissingField, c.Pos, "%s needs %s", a.Name, f)
		}
	}
	var err error
	str := func(name string, limit int) (*string, error) {
		k, ok := args[name]
		if !ok {
			return nil, nil
		}
		if k.Value.Kind != valString {
			return nil, perr(fault.CodeInvalidValue, k.Value.Pos, "%s must be a string, not %s", name, k.Value.Kind)
		}
		if utf8.RuneCountInString(k.Value.Str) > limit {
			return nil, perr(fault.CodeFieldTooLong, k.Value.Pos, "%s is longer than %d characters", name, limit)
		}
		s := k.Value.Str
		return &s, nil
	}
	if s, err := str(fieldScreenDescription, maxMetadataRunes); err != nil {
		return a, err
	} else if s != nil {
		a.ScreenDescription = *s
	}
	if s, err := str(fieldReason, maxMetadataRunes); err != nil {
		return a, err
	} else if s != nil {
		a.Reason = *s
	}
	if a.Text, err = str("text", maxTypeRunes); err != nil {
		return a, err
	}
	if a.Message, err = str("message", maxMessageRunes); err != nil {
		return a, err
	}
	pt := func(name string) (*Point, error) {
		k, ok := args[name]
		if !ok {
			return nil, nil
		}
		return point(name, k.Value, opts)
	}
	if a.Element, err = pt("element"); err != nil {
		return a, err
	}
	if a.Start, err = pt("start"); err != nil {
		return a, err
	}
	if a.End, err = pt("end"); err != nil {
		return a, err
	}
	if k, ok := args["success"]; ok {
		if k.Value.Kind != valBool {
			return a, perr(fault.CodeInvalidValue, k.Value.Pos, "success must be True or False, not %s", k.Value.Kind)
		}
		b := k.Value.Bool
		a.Success = &b
	}
	if k, ok := args["duration"]; ok {
		if a.Duration, err = waitDuration(k.Value); err != nil {
			return a, err
		}
	}
	if a.Name == Swipe {
		if a.SwipeDirection, err = checkSwipe(*a.Start, *a.End, a.Reason, opts.Task, args["start"].Pos); err != nil {
			return a, err
		}
	}
	return a, nil
}

// point validates [x, y]: exactly two finite numbers inside the contract's
// inclusive bounds. Out-of-range values are rejected, never clamped: a
// clamped point is a tap somewhere the model did not mean.
func point(name string, v value, opts ParseOptions) (*Point, error) {
	if v.Kind != valList || len(v.List) != 2 {
		return nil, perr(fault.CodeInvalidValue, v.Pos, "%s must be a list of two numbers [x, y]", name)
	}
	var p Point
	for i, e := range v.List {
		if e.Kind != valNumber {
			return nil, perr(fault.CodeInvalidValue, e.Pos, "%s[%d] must be a number, not %s", name, i, e.Kind)
		}
		if math.IsNaN(e.Num) || math.IsInf(e.Num, 0) {
			return nil, perr(fault.CodeNonFiniteCoordinate, e.Pos, "%s[%d] is not a finite number", name, i)
		}
		limit := opts.XMax
		if i == 1 {
			limit = opts.YMax
		}
		if e.Num < 0 || e.Num > limit {
			return nil, perr(fault.CodeCoordinateOutOfRange, e.Pos, "%s[%d]=%s is outside 0..%s", name, i, fmtNum(e.Num), fmtNum(limit))
		}
		p[i] = e.Num
	}
	return &p, nil
}

// waitDuration accepts a number of seconds or "N seconds" / "N second" /
// "Ns" (the forms models emit); the bound is MinWait..MaxWait. Open-AutoGLM
// silently fell back to 1 s on anything else; here it is a rejection.
func waitDuration(v value) (time.Duration, error) {
	var secs float64
	switch v.Kind {
	case valNumber:
		secs = v.Num
	case valString:
		s := strings.TrimSpace(strings.ToLower(v.Str))
		for _, unit := range []string{"seconds", "second", "secs", "sec", "s"} {
			if strings.HasSuffix(s, unit) {
				s = strings.TrimSpace(strings.TrimSuffix(s, unit))
				break
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, perr(fault.CodeInvalidWaitDuration, v.Pos, "duration %q is not a number of seconds", textclip.Runes(v.Str, 40))
		}
		secs = f
	default:
		return 0, perr(fault.CodeInvalidWaitDuration, v.Pos, "duration must be seconds as a number or \"N seconds\", not %s", v.Kind)
	}
	if math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, perr(fault.CodeInvalidWaitDuration, v.Pos, "duration is not finite")
	}
	d := time.Duration(secs * float64(time.Second))
	if d < minWait || d > maxWait {
		return 0, perr(fault.CodeInvalidWaitDuration, v.Pos, "duration must be between %s and %s", minWait, maxWait)
	}
	return d, nil
}
