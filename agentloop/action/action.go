// Package action is the action protocol the planner's model speaks: the
// Python-call subset it answers in (one do(...) or finish(...) call with
// literal keyword arguments), the closed vocabulary of actions and their
// fields, the swipe direction rules, and a stable rejection code for every
// answer that breaks them. It is pure: no I/O, no device, no model; every
// input is outside text, so the parser is fuzzed.
package action

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Canonical action names of the planner's action protocol. Launch, Call_API
// and the system panel commands were removed on purpose: they are semantic
// shortcuts that break the pure-vision contract, so they are unknown actions
// here.
const (
	Tap       = "Tap"
	DoubleTap = "Double Tap"
	LongPress = "Long Press"
	Swipe     = "Swipe"
	Type      = "Type"
	Back      = "Back"
	Home      = "Home"
	Wait      = "Wait"
	TakeOver  = "Take_over"
	Interact  = "Interact"
	Note      = "Note"
	Finish    = "finish"
)

// Field limits.
const (
	maxMetadataRunes = 4000
	maxTypeRunes     = 20000
	maxMessageRunes  = 4000
	maxWait          = 10 * time.Second
	minWait          = 100 * time.Millisecond
)

// Common optional planning metadata accepted on every call.
const (
	fieldScreenDescription = "screen_description"
	fieldReason            = "reason"
)

// actionSchema is the closed field set of one action.
type actionSchema struct {
	required []string
	optional []string
}

var actionSchemas = map[string]actionSchema{
	Tap:       {required: []string{"element"}},
	DoubleTap: {required: []string{"element"}},
	LongPress: {required: []string{"element"}},
	Swipe:     {required: []string{"start", "end"}},
	Type:      {required: []string{"text"}},
	Back:      {},
	Home:      {},
	Wait:      {required: []string{"duration"}},
	TakeOver:  {required: []string{"message"}},
	Interact:  {optional: []string{"message"}},
	Note:      {required: []string{"message"}},
	Finish:    {required: []string{"success"}, optional: []string{"message"}},
}

// actionAliases canonicalises the spellings real models emit (the Go port
// that switched on "DoubleTap" silently dropped "Double Tap"; both must
// work). Keys are lower-case with spaces, underscores and hyphens removed.
var actionAliases = map[string]string{
	"tap": Tap, "click": Tap,
	"doubletap": DoubleTap,
	"longpress": LongPress,
	"swipe":     Swipe,
	"type":      Type, "typename": Type,
	"back":     Back,
	"home":     Home,
	"wait":     Wait,
	"takeover": TakeOver,
	"interact": Interact,
	"note":     Note,
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

// HasCoordinates reports whether an action carries screen coordinates
// (these need the freshness check before dispatch).
func HasCoordinates(name string) bool {
	switch name {
	case Tap, DoubleTap, LongPress, Swipe:
		return true
	}
	return false
}

// Point is a model coordinate pair in the frozen contract's space.
type Point [2]float64

// Action is one validated model action. Coordinates are still in the
// model's space: the coordinate contract (package coord) maps them to
// device pixels.
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
func (a Action) IsFinish() bool { return a.Name == Finish }

// Canonical renders the action as the one call the protocol accepts, with
// Python string escapes (used in trajectories and planner-parse output).
func (a Action) Canonical() string {
	var parts []string
	if a.Name != Finish {
		parts = append(parts, "action="+Quote(a.Name))
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
		parts = append(parts, "text="+Quote(*a.Text))
	}
	if a.Name == Wait {
		parts = append(parts, fmt.Sprintf("duration=%q", fmtNum(a.Duration.Seconds())+" seconds"))
	}
	if a.Success != nil {
		parts = append(parts, "success="+map[bool]string{true: "True", false: "False"}[*a.Success])
	}
	if a.Message != nil {
		parts = append(parts, "message="+Quote(*a.Message))
	}
	if a.ScreenDescription != "" {
		parts = append(parts, "screen_description="+Quote(a.ScreenDescription))
	}
	if a.Reason != "" {
		parts = append(parts, "reason="+Quote(a.Reason))
	}
	name := "do"
	if a.Name == Finish {
		name = "finish"
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// Fields is the action as audit JSON with snake_case keys (model
// coordinates included; they are history of the audit, not of the model's
// memory). Wait's duration is in seconds.
func (a Action) Fields() map[string]any {
	m := map[string]any{"action": a.Name}
	if a.Element != nil {
		m["element"] = a.Element[:]
	}
	if a.Start != nil {
		m["start"] = a.Start[:]
	}
	if a.End != nil {
		m["end"] = a.End[:]
	}
	if a.Text != nil {
		m["text"] = *a.Text
	}
	if a.Message != nil {
		m["message"] = *a.Message
	}
	if a.Success != nil {
		m["success"] = *a.Success
	}
	if a.Name == Wait {
		m["duration_seconds"] = a.Duration.Seconds()
	}
	if a.SwipeDirection != "" {
		m["swipe_direction"] = a.SwipeDirection
	}
	if a.ScreenDescription != "" {
		m["screen_description"] = a.ScreenDescription
	}
	if a.Reason != "" {
		m["reason"] = a.Reason
	}
	return m
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Quote renders s as a double-quoted Python string literal that Parse
// reads back to the same string.
func Quote(s string) string {
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
