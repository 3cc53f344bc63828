package agentloop

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Protocol rejection codes. Each rejection happens before any device
// contact and has its own code so that metrics and the same-step retry
// prompt can name the exact fault.
const (
	CodeEmptyOutput          = "empty_output"
	CodeMissingAction        = "missing_action"
	CodeUnknownAction        = "unknown_action"
	CodeUnknownField         = "unknown_field"
	CodeMissingField         = "missing_field"
	CodeDuplicateKeyword     = "duplicate_keyword"
	CodePositionalArgument   = "positional_argument"
	CodeDynamicExpression    = "dynamic_expression"
	CodeMultipleCalls        = "multiple_calls"
	CodeMarkdownWrapped      = "markdown_wrapped"
	CodeJSONWrapped          = "json_wrapped"
	CodeSpecialTokenWrapped  = "special_token_wrapped"
	CodeTrailingOutput       = "trailing_output"
	CodeLeadingOutput        = "leading_output"
	CodeIncompleteCall       = "incomplete_call"
	CodeMalformedEnvelope    = "malformed_envelope"
	CodeInvalidLiteral       = "invalid_literal"
	CodeInvalidValue         = "invalid_value"
	CodeNonFiniteCoordinate  = "non_finite_coordinate"
	CodeCoordinateOutOfRange = "coordinate_out_of_range"
	CodeFieldTooLong         = "field_too_long"
	CodeInvalidWaitDuration  = "invalid_wait_duration"
	CodeSwipeDirection       = "swipe_direction_conflict"
	CodeSwipeAmbiguous       = "swipe_axis_ambiguous"
)

// Canonical action names of the planner's action protocol. Launch, Call_API
// and the system panel commands were removed on purpose: they are semantic
// shortcuts that break the pure-vision contract, so they are unknown actions
// here.
const (
	ActTap       = "Tap"
	ActDoubleTap = "Double Tap"
	ActLongPress = "Long Press"
	ActSwipe     = "Swipe"
	ActType      = "Type"
	ActBack      = "Back"
	ActHome      = "Home"
	ActWait      = "Wait"
	ActTakeOver  = "Take_over"
	ActInteract  = "Interact"
	ActNote      = "Note"
	ActFinish    = "finish"
)

// Field limits.
const (
	MaxMetadataRunes = 4000
	MaxTypeRunes     = 20000
	MaxMessageRunes  = 4000
	MaxWait          = 10 * time.Second
	MinWait          = 100 * time.Millisecond
)

// Common optional planning metadata accepted on every call.
const (
	FieldScreenDescription = "screen_description"
	FieldReason            = "reason"
)

// actionSchema is the closed field set of one action.
type actionSchema struct {
	required []string
	optional []string
}

var actionSchemas = map[string]actionSchema{
	ActTap:       {required: []string{"element"}},
	ActDoubleTap: {required: []string{"element"}},
	ActLongPress: {required: []string{"element"}},
	ActSwipe:     {required: []string{"start", "end"}},
	ActType:      {required: []string{"text"}},
	ActBack:      {},
	ActHome:      {},
	ActWait:      {required: []string{"duration"}},
	ActTakeOver:  {required: []string{"message"}},
	ActInteract:  {optional: []string{"message"}},
	ActNote:      {required: []string{"message"}},
	ActFinish:    {required: []string{"success"}, optional: []string{"message"}},
}

// actionAliases canonicalises the spellings real models emit (the Go port
// that switched on "DoubleTap" silently dropped "Double Tap"; both must
// work). Keys are lower-case with spaces, underscores and hyphens removed.
var actionAliases = map[string]string{
	"tap": ActTap, "click": ActTap,
	"doubletap": ActDoubleTap,
	"longpress": ActLongPress,
	"swipe":     ActSwipe,
	"type":      ActType, "typename": ActType,
	"back":     ActBack,
	"home":     ActHome,
	"wait":     ActWait,
	"takeover": ActTakeOver,
	"interact": ActInteract,
	"note":     ActNote,
}

func aliasKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// IsCoordinateAction reports whether an action carries screen coordinates
// (these need the freshness check before dispatch).
func IsCoordinateAction(name string) bool {
	switch name {
	case ActTap, ActDoubleTap, ActLongPress, ActSwipe:
		return true
	}
	return false
}

// Point is a model coordinate pair in the frozen contract's space.
type Point [2]float64

// Action is one validated model action. Coordinates are still in the
// model's space: the Mapper turns them into device pixels.
type Action struct {
	Name              string        `json:"action"`
	Element           *Point        `json:"element,omitempty"`
	Start             *Point        `json:"start,omitempty"`
	End               *Point        `json:"end,omitempty"`
	Text              *string       `json:"text,omitempty"`
	Message           *string       `json:"message,omitempty"`
	Duration          time.Duration `json:"-"`
	Success           *bool         `json:"success,omitempty"`
	ScreenDescription string        `json:"screen_description,omitempty"`
	Reason            string        `json:"reason,omitempty"`
	// SwipeDirection is the finger direction of a Swipe (left, right, up,
	// down), from the dominant axis.
	SwipeDirection string `json:"swipe_direction,omitempty"`
}

// DurationSeconds is the Wait duration in seconds (0 for other actions).
func (a Action) DurationSeconds() float64 { return a.Duration.Seconds() }

// IsFinish reports whether the action is finish(...).
func (a Action) IsFinish() bool { return a.Name == ActFinish }

// Canonical renders the action as the one call the protocol accepts, with
// Python string escapes (used in trajectories and planner-parse output).
func (a Action) Canonical() string {
	var parts []string
	if a.Name != ActFinish {
		parts = append(parts, "action="+pyQuote(a.Name))
	}
	pt := func(name string, p *Point) {
		if p != nil {
			parts = append(parts, fmt.Sprintf("%s=[%s,%s]", name, fmtNum(p[0]), fmtNum(p[1])))
		}
	}
	pt("element", a.Element)
	pt("start", a.Start)
	pt("end", a.End)
	if a.Text != nil {
		parts = append(parts, "text="+pyQuote(*a.Text))
	}
	if a.Name == ActWait {
		parts = append(parts, fmt.Sprintf("duration=%q", fmtNum(a.Duration.Seconds())+" seconds"))
	}
	if a.Success != nil {
		parts = append(parts, "success="+map[bool]string{true: "True", false: "False"}[*a.Success])
	}
	if a.Message != nil {
		parts = append(parts, "message="+pyQuote(*a.Message))
	}
	if a.ScreenDescription != "" {
		parts = append(parts, "screen_description="+pyQuote(a.ScreenDescription))
	}
	if a.Reason != "" {
		parts = append(parts, "reason="+pyQuote(a.Reason))
	}
	name := "do"
	if a.Name == ActFinish {
		name = "finish"
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// pyQuote writes a double-quoted Python literal that the lexer reads back
// to the same string.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ParseOptions tune validation to the frozen contract and the task.
type ParseOptions struct {
	// XMax and YMax are the inclusive coordinate bounds of the frozen
	// contract (999 for relative_0_999, image or display size minus one for
	// pixel spaces). Zero means 999.
	XMax, YMax float64
	// Task is the user's instruction; an explicit swipe direction in it
	// binds every Swipe.
	Task string
}

// Parsed is an accepted model answer.
type Parsed struct {
	Action Action `json:"action"`
	// Call is the call text as the model wrote it.
	Call string `json:"call"`
	// Reasoning is the provider's reasoning field, the <think> block or the
	// prose before the call, whichever was present (never executed).
	Reasoning string `json:"reasoning,omitempty"`
}

// ParseAction accepts exactly one complete do(...) or finish(...) call and
// returns it validated against its closed schema, or a *ProtocolError.
// content is the assistant message; reasoning is the provider's separate
// reasoning field ("" if none).
func ParseAction(content, reasoning string, opts ParseOptions) (*Parsed, error) {
	if opts.XMax <= 0 {
		opts.XMax = 999
	}
	if opts.YMax <= 0 {
		opts.YMax = 999
	}
	env, err := splitEnvelope(content)
	if err != nil {
		return nil, err
	}
	call, callText, prose, err := findCall(env)
	if err != nil {
		return nil, err
	}
	a, err := buildAction(call, opts)
	if err != nil {
		return nil, err
	}
	reasons := []string{strings.TrimSpace(reasoning), env.reasoning, prose}
	var kept []string
	for _, r := range reasons {
		if r != "" {
			kept = append(kept, r)
		}
	}
	return &Parsed{Action: a, Call: callText, Reasoning: strings.Join(kept, "\n")}, nil
}

// envelope is the answer region after <think>/<answer> handling.
type envelope struct {
	answer    string
	offset    int  // offset of answer inside the content
	tagged    bool // the answer came from an explicit <answer> block
	reasoning string
}

// splitEnvelope separates reasoning from the answer: a leading <think>
// block (or everything before a bare </think>, for servers that strip the
// opening tag) is reasoning; an <answer> block, if present, is the answer.
// A missing </answer> is tolerated because several servers strip special
// tokens; anything after </answer> is trailing output.
func splitEnvelope(content string) (envelope, error) {
	if strings.TrimSpace(content) == "" {
		return envelope{}, perr(CodeEmptyOutput, 0, "the model answered nothing")
	}
	var env envelope
	rest, off := content, 0
	trimmed := strings.TrimLeft(rest, " \t\r\n")
	if strings.HasPrefix(trimmed, "<think>") {
		start := len(rest) - len(trimmed) + len("<think>")
		end := strings.Index(rest[start:], "</think>")
		if end < 0 {
			return env, perr(CodeMalformedEnvelope, start-len("<think>"), "the <think> block is never closed")
		}
		env.reasoning = strings.TrimSpace(rest[start : start+end])
		off = start + end + len("</think>")
		rest = content[off:]
	} else if i := strings.Index(rest, "</think>"); i >= 0 && !strings.Contains(rest[:i], "<think>") {
		env.reasoning = strings.TrimSpace(rest[:i])
		off = i + len("</think>")
		rest = content[off:]
	}
	if strings.Contains(rest, "<think>") || strings.Contains(rest, "</think>") {
		return env, perr(CodeMalformedEnvelope, off, "only one leading <think> block is allowed")
	}
	if i := strings.Index(rest, "<answer>"); i >= 0 {
		pre := strings.TrimSpace(rest[:i])
		if pre != "" {
			// Prose before <answer> is reasoning that lost its tags.
			env.reasoning = strings.TrimSpace(env.reasoning + "\n" + pre)
		}
		aStart := i + len("<answer>")
		body := rest[aStart:]
		if j := strings.Index(body, "</answer>"); j >= 0 {
			after := body[j+len("</answer>"):]
			if strings.TrimSpace(after) != "" {
				return env, perr(CodeTrailingOutput, off+aStart+j+len("</answer>"), "text follows </answer>")
			}
			body = body[:j]
		}
		if strings.Contains(body, "<answer>") {
			return env, perr(CodeMultipleCalls, off+aStart, "more than one <answer> block")
		}
		env.answer, env.offset, env.tagged = body, off+aStart, true
		return env, nil
	}
	// A bare trailing </answer> is what is left when a server strips the
	// opening special token; it carries no content, so it is dropped.
	if j := strings.LastIndex(rest, "</answer>"); j >= 0 && strings.TrimSpace(rest[j+len("</answer>"):]) == "" {
		rest = rest[:j]
	}
	env.answer, env.offset = rest, off
	return env, nil
}

// findCall locates the call in the answer region. The call must start a
// line (after indentation); earlier prose is reasoning unless the answer
// came from an explicit <answer> block. Calls are found left to right with
// the real tokenizer, so text inside a string literal never starts a call.
func findCall(env envelope) (*callNode, string, string, error) {
	src := env.answer
	trimmed := strings.TrimSpace(src)
	if trimmed == "" {
		return nil, "", "", perr(CodeMissingAction, env.offset, "the answer holds no call")
	}
	type found struct {
		node       *callNode
		start, end int // in src
	}
	var calls []found
	var firstErr error
	pos := 0
	for pos < len(src) {
		c := nextCallCandidate(src, pos)
		if c < 0 {
			break
		}
		p, err := newCallParser(src[c:], env.offset+c)
		if err == nil {
			var n *callNode
			n, err = p.parseCall()
			if err == nil {
				end := n.End - env.offset
				calls = append(calls, found{node: n, start: c, end: end})
				pos = end
				continue
			}
		}
		if firstErr == nil {
			firstErr = err
		}
		// A broken call is still a call: report it rather than guessing
		// that a later line is the real one.
		break
	}
	wrapErr := func(region string, base int) error {
		if i := strings.Index(region, "```"); i >= 0 {
			return perr(CodeMarkdownWrapped, base+i, "the call is wrapped in a Markdown code fence")
		}
		if i := strings.Index(region, "<|"); i >= 0 {
			return perr(CodeSpecialTokenWrapped, base+i, "the call is wrapped in provider special tokens")
		}
		return nil
	}
	if len(calls) == 0 {
		if err := wrapErr(src, env.offset); err != nil {
			return nil, "", "", err
		}
		if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, `"`) {
			return nil, "", "", perr(CodeJSONWrapped, env.offset+strings.Index(src, trimmed[:1]), "the action is wrapped in JSON; answer with the bare call")
		}
		if firstErr != nil {
			return nil, "", "", firstErr
		}
		if env.tagged && (strings.Contains(src, "do(") || strings.Contains(src, "finish(")) {
			return nil, "", "", perr(CodeLeadingOutput, env.offset, "text precedes the call inside <answer>")
		}
		if strings.Contains(src, "do(") || strings.Contains(src, "finish(") {
			return nil, "", "", perr(CodeMissingAction, env.offset, "the call must start its own line, not sit inside prose")
		}
		return nil, "", "", perr(CodeMissingAction, env.offset, "the answer holds no do(...) or finish(...) call")
	}
	first, last := calls[0], calls[len(calls)-1]
	prose := src[:first.start]
	after := src[last.end:]
	if err := wrapErr(prose, env.offset); err != nil {
		return nil, "", "", err
	}
	if err := wrapErr(after, env.offset+last.end); err != nil {
		return nil, "", "", err
	}
	if firstErr != nil {
		return nil, "", "", firstErr
	}
	if len(calls) > 1 {
		return nil, "", "", perr(CodeMultipleCalls, env.offset+calls[1].start, "%d calls; answer with exactly one", len(calls))
	}
	if rest := strings.TrimSpace(after); rest != "" {
		lx := lexer{src: rest}
		if t, err := lx.next(); err == nil && t.Kind == tokIdent && (t.Text == "do" || t.Text == "finish") {
			if t2, err := lx.next(); err == nil && t2.Kind == tokLParen {
				return nil, "", "", perr(CodeMultipleCalls, env.offset+last.end+strings.Index(after, rest), "a second call follows the first")
			}
		}
		return nil, "", "", perr(CodeTrailingOutput, env.offset+last.end+strings.Index(after, rest), "text follows the call")
	}
	if env.tagged && strings.TrimSpace(prose) != "" {
		return nil, "", "", perr(CodeLeadingOutput, env.offset, "text precedes the call inside <answer>")
	}
	return first.node, src[first.start:first.end], strings.TrimSpace(prose), nil
}

// nextCallCandidate returns the offset of the next "do(" or "finish(" that
// starts a line (after indentation) at or after pos, or -1.
func nextCallCandidate(src string, pos int) int {
	for i := pos; i < len(src); {
		lineStart := i == 0 || src[i-1] == '\n'
		if lineStart {
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r') {
				j++
			}
			for _, kw := range []string{"do", "finish"} {
				if strings.HasPrefix(src[j:], kw) {
					k := j + len(kw)
					for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
						k++
					}
					if k < len(src) && src[k] == '(' {
						return j
					}
				}
			}
		}
		nl := strings.IndexByte(src[i:], '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	return -1
}

// buildAction applies the closed per-action schema.
func buildAction(c *callNode, opts ParseOptions) (Action, error) {
	var a Action
	args := map[string]kwarg{}
	for _, k := range c.Args {
		args[k.Name] = k
	}
	switch c.Name {
	case "finish":
		a.Name = ActFinish
	case "do":
		k, ok := args["action"]
		if !ok {
			return a, perr(CodeMissingField, c.Pos, "do(...) needs action=\"...\"")
		}
		if k.Value.Kind != valString {
			return a, perr(CodeInvalidValue, k.Value.Pos, "action must be a string, not %s", k.Value.Kind)
		}
		name, ok := actionAliases[aliasKey(k.Value.Str)]
		if !ok {
			return a, perr(CodeUnknownAction, k.Value.Pos, "unknown action %q", truncateRunes(k.Value.Str, 60))
		}
		a.Name = name
		delete(args, "action")
	default:
		return a, perr(CodeUnknownAction, c.Pos, "unknown call %q; use do(...) or finish(...)", truncateRunes(c.Name, 60))
	}
	sch := actionSchemas[a.Name]
	allowed := map[string]bool{FieldScreenDescription: true, FieldReason: true}
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
			return a, perr(CodeUnknownField, k.Pos, "%s does not take %q%s", a.Name, k.Name, hint)
		}
	}
	for _, f := range sch.required {
		if _, ok := args[f]; !ok {
			return a, perr(CodeMissingField, c.Pos, "%s needs %s", a.Name, f)
		}
	}
	var err error
	str := func(name string, limit int) (*string, error) {
		k, ok := args[name]
		if !ok {
			return nil, nil
		}
		if k.Value.Kind != valString {
			return nil, perr(CodeInvalidValue, k.Value.Pos, "%s must be a string, not %s", name, k.Value.Kind)
		}
		if utf8.RuneCountInString(k.Value.Str) > limit {
			return nil, perr(CodeFieldTooLong, k.Value.Pos, "%s is longer than %d characters", name, limit)
		}
		s := k.Value.Str
		return &s, nil
	}
	if s, err := str(FieldScreenDescription, MaxMetadataRunes); err != nil {
		return a, err
	} else if s != nil {
		a.ScreenDescription = *s
	}
	if s, err := str(FieldReason, MaxMetadataRunes); err != nil {
		return a, err
	} else if s != nil {
		a.Reason = *s
	}
	if a.Text, err = str("text", MaxTypeRunes); err != nil {
		return a, err
	}
	if a.Message, err = str("message", MaxMessageRunes); err != nil {
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
			return a, perr(CodeInvalidValue, k.Value.Pos, "success must be True or False, not %s", k.Value.Kind)
		}
		b := k.Value.Bool
		a.Success = &b
	}
	if k, ok := args["duration"]; ok {
		if a.Duration, err = waitDuration(k.Value); err != nil {
			return a, err
		}
	}
	if a.Name == ActSwipe {
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
		return nil, perr(CodeInvalidValue, v.Pos, "%s must be a list of two numbers [x, y]", name)
	}
	var p Point
	for i, e := range v.List {
		if e.Kind != valNumber {
			return nil, perr(CodeInvalidValue, e.Pos, "%s[%d] must be a number, not %s", name, i, e.Kind)
		}
		if math.IsNaN(e.Num) || math.IsInf(e.Num, 0) {
			return nil, perr(CodeNonFiniteCoordinate, e.Pos, "%s[%d] is not a finite number", name, i)
		}
		limit := opts.XMax
		if i == 1 {
			limit = opts.YMax
		}
		if e.Num < 0 || e.Num > limit {
			return nil, perr(CodeCoordinateOutOfRange, e.Pos, "%s[%d]=%s is outside 0..%s", name, i, fmtNum(e.Num), fmtNum(limit))
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
			return 0, perr(CodeInvalidWaitDuration, v.Pos, "duration %q is not a number of seconds", truncateRunes(v.Str, 40))
		}
		secs = f
	default:
		return 0, perr(CodeInvalidWaitDuration, v.Pos, "duration must be seconds as a number or \"N seconds\", not %s", v.Kind)
	}
	if math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, perr(CodeInvalidWaitDuration, v.Pos, "duration is not finite")
	}
	d := time.Duration(secs * float64(time.Second))
	if d < MinWait || d > MaxWait {
		return 0, perr(CodeInvalidWaitDuration, v.Pos, "duration must be between %s and %s", MinWait, MaxWait)
	}
	return d, nil
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func nan() float64 { return math.NaN() }
func inf() float64 { return math.Inf(1) }
