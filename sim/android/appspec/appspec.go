// Package appspec is the language in which the simulated phone's apps are
// declared as data: the AppSpec JSON schema, its loader and validator, the
// ${var} templates and conditions its transitions use, and the stock apps
// (apps/*.json) a phone installs by default.
//
// It is separate from the phone because a spec is pure data: loading and
// checking one needs no running phone, and the phone only interprets specs.
package appspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// AppSpec declares an installable app as data: identity, start-up costs,
// initial state variables and its screens. Coordinates in a spec are in the
// reference screen of RefWidth x RefHeight pixels and are scaled linearly to
// the phone's real screen size, so one spec serves every configured screen.
type AppSpec struct {
	Package          string            `json:"package"`
	Label            string            `json:"label"`
	VersionName      string            `json:"versionName"`
	VersionCode      int64             `json:"versionCode"`
	System           bool              `json:"system,omitempty"`
	LauncherActivity string            `json:"launcherActivity,omitempty"`
	Startup          startupSpec       `json:"startup,omitempty"`
	Vars             map[string]scalar `json:"vars,omitempty"`
	Screens          []ScreenSpec      `json:"screens"`
}

// scalar is a JSON scalar (string, number or boolean) kept as its string
// form, so state variables can be written naturally as {"count": 0}.
type scalar string

// UnmarshalJSON accepts strings, numbers and booleans.
func (t *scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = scalar(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*t = scalar(n.String())
		return nil
	}
	var v bool
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("state value must be a string, number or boolean: %s", b)
	}
	*t = scalar(strconv.FormatBool(v))
	return nil
}

// startupSpec gives the app's launch costs in milliseconds, used for
// `am start -W` timings. Zero values get defaults in normalize.
type startupSpec struct {
	ColdMs int `json:"coldMs,omitempty"`
	WarmMs int `json:"warmMs,omitempty"`
	HotMs  int `json:"hotMs,omitempty"`
}

// ScreenSpec is one activity: its window content and screen-level
// transitions.
type ScreenSpec struct {
	Activity string `json:"activity"`
	// NoHistory activities finish as soon as anything else comes in front,
	// like SoloPi's AdbSchemeActivity.
	NoHistory     bool               `json:"noHistory,omitempty"`
	IntentFilters []intentFilterSpec `json:"intentFilters,omitempty"`
	Root          NodeSpec           `json:"root"`
	// OnBack replaces the default "finish this activity" on BACK when set.
	OnBack []Effect `json:"onBack,omitempty"`
	// OnHome runs before the launcher comes to the front.
	OnHome []Effect `json:"onHome,omitempty"`
}

// intentFilterSpec lets implicit intents (am start -a … -d …) resolve to a
// screen.
type intentFilterSpec struct {
	Actions    []string `json:"actions,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Schemes    []string `json:"schemes,omitempty"`
}

// NodeSpec declares one view. Text and Description may use ${var}
// templates over the app's state variables (and ${n}, the 1-based index of a
// repeated node).
type NodeSpec struct {
	Class       string `json:"class,omitempty"`
	Text        string `json:"text,omitempty"`
	Description string `json:"description,omitempty"`
	// ID is the resource id; a bare name "x" means "<package>:id/x".
	ID       string `json:"id,omitempty"`
	Hint     string `json:"hint,omitempty"`
	Password bool   `json:"password,omitempty"`
	// Bounds is [left, top, right, bottom] in reference pixels; a root
	// without bounds fills its window.
	Bounds        []int  `json:"bounds,omitempty"`
	Kind          string `json:"kind,omitempty"`
	Clickable     bool   `json:"clickable,omitempty"`
	LongClickable bool   `json:"longClickable,omitempty"`
	Editable      bool   `json:"editable,omitempty"`
	Scrollable    bool   `json:"scrollable,omitempty"`
	Focusable     bool   `json:"focusable,omitempty"`
	// When hides the node (and its subtree) unless the condition holds.
	When *cond `json:"when,omitempty"`
	// Repeat expands the node into Count siblings, each offset by (DX, DY)
	// from the previous one.
	Repeat *repeatSpec `json:"repeat,omitempty"`
	// AppGrid marks the launcher's icon grid; its children are generated
	// from the installed apps that have a launcher activity.
	AppGrid bool `json:"appGrid,omitempty"`

	OnClick     []Effect   `json:"onClick,omitempty"`
	OnLongClick []Effect   `json:"onLongClick,omitempty"`
	OnInput     []Effect   `json:"onInput,omitempty"`
	OnEnter     []Effect   `json:"onEnter,omitempty"`
	OnScroll    []Effect   `json:"onScroll,omitempty"`
	Children    []NodeSpec `json:"children,omitempty"`
}

// repeatSpec expands a node into a run of siblings (list items).
type repeatSpec struct {
	Count int `json:"count"`
	DX    int `json:"dx,omitempty"`
	DY    int `json:"dy,omitempty"`
}

// cond is a condition over state variables and text-field contents. Exactly
// one of Var/Field (with one comparison) or All/Any/Not is used.
type cond struct {
	Var   string  `json:"var,omitempty"`
	Field string  `json:"field,omitempty"`
	Eq    *string `json:"eq,omitempty"`
	Ne    *string `json:"ne,omitempty"`
	Gt    *int64  `json:"gt,omitempty"`
	Ge    *int64  `json:"ge,omitempty"`
	Lt    *int64  `json:"lt,omitempty"`
	Le    *int64  `json:"le,omitempty"`
	All   []cond  `json:"all,omitempty"`
	Any   []cond  `json:"any,omitempty"`
	Not   *cond   `json:"not,omitempty"`
}

// Effect is one step of a transition. Exactly one verb is set:
//
//	set+value | set+fromField   assign a state variable (value is a template)
//	add+by                      integer increment of a state variable
//	setField+value              replace a text field's content
//	goto                        start an activity of this app on top
//	replace                     replace the current activity
//	finish                      finish the current activity (like BACK)
//	launch                      launch another installed app
//	home                        go to the launcher
//	hideIme                     hide the soft keyboard
//	log                         write an I-level logcat line from the app
//	if+then/else                conditional
type Effect struct {
	Set       string   `json:"set,omitempty"`
	Value     *string  `json:"value,omitempty"`
	FromField string   `json:"fromField,omitempty"`
	Add       string   `json:"add,omitempty"`
	By        int64    `json:"by,omitempty"`
	SetField  string   `json:"setField,omitempty"`
	Goto      string   `json:"goto,omitempty"`
	Replace   string   `json:"replace,omitempty"`
	Finish    bool     `json:"finish,omitempty"`
	Launch    string   `json:"launch,omitempty"`
	Home      bool     `json:"home,omitempty"`
	HideIME   bool     `json:"hideIme,omitempty"`
	Log       string   `json:"log,omitempty"`
	If        *cond    `json:"if,omitempty"`
	Then      []Effect `json:"then,omitempty"`
	Else      []Effect `json:"else,omitempty"`
}

// Reference screen size of app specs.
const (
	RefWidth  = 1080
	RefHeight = 2340
)

// Limits keep a hostile or broken spec from exhausting memory; they are far
// above what a real screen needs.
const (
	maxSpecBytes    = 1 << 20
	maxNodeDepth    = 24
	maxEffectDepth  = 8
	maxRepeat       = 500
	maxExpanded     = 20000
	maxCoordinate   = 1_000_000
	maxStringLength = 4096
	maxScreens      = 64
)

var (
	packageRE = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$`)
	classRE   = lazyregexp.New(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)
	varRE     = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	resIDRE   = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_.]*:id/[A-Za-z0-9_.]+$`)
	shortIDRE = lazyregexp.New(`^[A-Za-z0-9_.]+$`)
)

var validKinds = map[string]bool{"": true, "button": true, "field": true, "text": true, "item": true,
	"image": true, "list": true, "container": true, "icon": true, "toolbar": true}

// LoadApp parses and validates one app spec. Unknown fields are rejected so
// a typo in a hand-written spec fails loudly instead of silently doing
// nothing. The returned spec is normalized: full activity class names, full
// resource ids and default start-up costs.
func LoadApp(data []byte) (*AppSpec, error) {
	if len(data) > maxSpecBytes {
		return nil, fmt.Errorf("load app spec: %d bytes exceeds the %d byte limit", len(data), maxSpecBytes)
	}
	var spec AppSpec
	if err := canonjson.UnmarshalStrict(data, &spec); err != nil {
		return nil, fmt.Errorf("load app spec: %w", err)
	}
	if err := spec.normalize(); err != nil {
		return nil, fmt.Errorf("load app spec %q: %w", spec.Package, err)
	}
	return &spec, nil
}

// FullClass expands a ".Short" activity name to "<pkg>.Short".
func FullClass(pkg, cls string) string {
	if strings.HasPrefix(cls, ".") {
		return pkg + cls
	}
	return cls
}

// ShortClass is the inverse used by ComponentName.flattenToShortString.
func ShortClass(pkg, cls string) string {
	if strings.HasPrefix(cls, pkg+".") {
		return cls[len(pkg):]
	}
	return cls
}

func fullResID(pkg, id string) string {
	if id == "" || strings.Contains(id, ":id/") {
		return id
	}
	return pkg + ":id/" + id
}

func (s *AppSpec) normalize() error {
	if !packageRE.MatchString(s.Package) || len(s.Package) > 255 {
		return fmt.Errorf("invalid package name %q", s.Package)
	}
	if strings.TrimSpace(s.Label) == "" || len(s.Label) > maxStringLength {
		return errors.New("label is required")
	}
	if s.VersionName == "" {
		s.VersionName = "1.0"
	}
	if s.VersionCode < 0 {
		return errors.New("versionCode must not be negative")
	}
	// Zero screens is legal: keyboards and system services have no activity.
	if len(s.Screens) > maxScreens {
		return fmt.Errorf("an app has at most %d screens, got %d", maxScreens, len(s.Screens))
	}
	st := &s.Startup
	if st.ColdMs < 0 || st.WarmMs < 0 || st.HotMs < 0 || st.ColdMs > 60000 || st.WarmMs > 60000 || st.HotMs > 60000 {
		return errors.New("startup times must be within 0..60000 ms")
	}
	if st.ColdMs == 0 {
		st.ColdMs = 450
	}
	if st.WarmMs == 0 {
		st.WarmMs = max(1, st.ColdMs*2/5)
	}
	if st.HotMs == 0 {
		st.HotMs = max(1, st.WarmMs/3)
	}
	for k, v := range s.Vars {
		if !varRE.MatchString(k) || len(v) > maxStringLength {
			return fmt.Errorf("invalid state variable %q", k)
		}
	}
	v := validator{pkg: s.Package, activities: map[string]bool{}}
	for i := range s.Screens {
		sc := &s.Screens[i]
		sc.Activity = FullClass(s.Package, sc.Activity)
		if !classRE.MatchString(sc.Activity) || len(sc.Activity) > 255 {
			return fmt.Errorf("screen %d: invalid activity %q", i, sc.Activity)
		}
		if v.activities[sc.Activity] {
			return fmt.Errorf("screen %d: duplicate activity %q", i, sc.Activity)
		}
		v.activities[sc.Activity] = true
	}
	s.LauncherActivity = FullClass(s.Package, s.LauncherActivity)
	if s.LauncherActivity != "" && !v.activities[s.LauncherActivity] {
		return fmt.Errorf("launcher activity %q is not one of the screens", s.LauncherActivity)
	}
	for i := range s.Screens {
		sc := &s.Screens[i]
		for _, f := range sc.IntentFilters {
			for _, x := range append(append(append([]string{}, f.Actions...), f.Categories...), f.Schemes...) {
				if x == "" || len(x) > 255 {
					return fmt.Errorf("screen %s: empty or oversized intent filter entry", sc.Activity)
				}
			}
		}
		v.expanded = 0
		if err := v.node(&sc.Root, 1); err != nil {
			return fmt.Errorf("screen %s: %w", sc.Activity, err)
		}
		for _, list := range [][]Effect{sc.OnBack, sc.OnHome} {
			if err := v.effects(list, 1); err != nil {
				return fmt.Errorf("screen %s: %w", sc.Activity, err)
			}
		}
	}
	return nil
}

type validator struct {
	pkg        string
	activities map[string]bool
	expanded   int
}

func (v *validator) str(what, s string) error {
	if len(s) > maxStringLength {
		return fmt.Errorf("%s longer than %d bytes", what, maxStringLength)
	}
	return nil
}

func (v *validator) node(n *NodeSpec, depth int) error {
	if depth > maxNodeDepth {
		return fmt.Errorf("node tree deeper than %d", maxNodeDepth)
	}
	if n.Class == "" {
		n.Class = "android.view.View"
	}
	if !classRE.MatchString(n.Class) || len(n.Class) > 255 {
		return fmt.Errorf("invalid class %q", n.Class)
	}
	for what, s := range map[string]string{"text": n.Text, "description": n.Description, "hint": n.Hint} {
		if err := v.str(what, s); err != nil {
			return err
		}
	}
	n.ID = fullResID(v.pkg, n.ID)
	if n.ID != "" && !resIDRE.MatchString(n.ID) {
		return fmt.Errorf("invalid resource id %q", n.ID)
	}
	if n.Editable && n.ID == "" {
		return errors.New("an editable node needs an id: its text is stored under it")
	}
	if !validKinds[n.Kind] {
		return fmt.Errorf("unknown kind %q", n.Kind)
	}
	if n.Bounds != nil {
		if len(n.Bounds) != 4 {
			return errors.New("bounds must be [left, top, right, bottom]")
		}
		for _, c := range n.Bounds {
			if c < -maxCoordinate || c > maxCoordinate {
				return fmt.Errorf("coordinate %d out of range", c)
			}
		}
		if n.Bounds[2] < n.Bounds[0] || n.Bounds[3] < n.Bounds[1] {
			return fmt.Errorf("bounds %v are inverted", n.Bounds)
		}
	}
	copies := 1
	if n.Repeat != nil {
		r := n.Repeat
		if r.Count < 1 || r.Count > maxRepeat {
			return fmt.Errorf("repeat count must be 1..%d", maxRepeat)
		}
		if r.DX < -maxCoordinate || r.DX > maxCoordinate || r.DY < -maxCoordinate || r.DY > maxCoordinate {
			return errors.New("repeat offset out of range")
		}
		if depth == 1 {
			return errors.New("the root node cannot repeat")
		}
		copies = r.Count
	}
	v.expanded += copies
	if v.expanded > maxExpanded {
		return fmt.Errorf("more than %d nodes after expansion", maxExpanded)
	}
	if n.When != nil {
		if err := v.cond(n.When, 1); err != nil {
			return err
		}
	}
	for _, list := range [][]Effect{n.OnClick, n.OnLongClick, n.OnInput, n.OnEnter, n.OnScroll} {
		if err := v.effects(list, 1); err != nil {
			return err
		}
	}
	before := v.expanded
	for i := range n.Children {
		if err := v.node(&n.Children[i], depth+1); err != nil {
			return err
		}
	}
	// Children of a repeated node are repeated too.
	v.expanded += (v.expanded - before) * (copies - 1)
	if v.expanded > maxExpanded {
		return fmt.Errorf("more than %d nodes after expansion", maxExpanded)
	}
	return nil
}

func (v *validator) cond(c *cond, depth int) error {
	if depth > maxEffectDepth {
		return fmt.Errorf("condition nested deeper than %d", maxEffectDepth)
	}
	leaf := c.Var != "" || c.Field != ""
	groups := 0
	if len(c.All) > 0 {
		groups++
	}
	if len(c.Any) > 0 {
		groups++
	}
	if c.Not != nil {
		groups++
	}
	cmps := 0
	for _, p := range []*int64{c.Gt, c.Ge, c.Lt, c.Le} {
		if p != nil {
			cmps++
		}
	}
	if c.Eq != nil {
		cmps++
	}
	if c.Ne != nil {
		cmps++
	}
	switch {
	case leaf && groups == 0:
		if c.Var != "" && c.Field != "" {
			return errors.New("a condition tests either var or field")
		}
		if c.Var != "" && !varRE.MatchString(c.Var) {
			return fmt.Errorf("invalid variable name %q", c.Var)
		}
		c.Field = fullResID(v.pkg, c.Field)
		if c.Field != "" && !resIDRE.MatchString(c.Field) {
			return fmt.Errorf("invalid field id %q", c.Field)
		}
		if cmps != 1 {
			return errors.New("a condition needs exactly one of eq, ne, gt, ge, lt, le")
		}
		for _, p := range []*string{c.Eq, c.Ne} {
			if p != nil {
				if err := v.str("comparison value", *p); err != nil {
					return err
				}
			}
		}
	case !leaf && groups == 1 && cmps == 0:
		for i := range c.All {
			if err := v.cond(&c.All[i], depth+1); err != nil {
				return err
			}
		}
		for i := range c.Any {
			if err := v.cond(&c.Any[i], depth+1); err != nil {
				return err
			}
		}
		if c.Not != nil {
			return v.cond(c.Not, depth+1)
		}
	default:
		return errors.New("a condition is either {var|field, comparison} or one of all/any/not")
	}
	return nil
}

func (v *validator) effects(list []Effect, depth int) error {
	if depth > maxEffectDepth {
		return fmt.Errorf("effects nested deeper than %d", maxEffectDepth)
	}
	for i := range list {
		if err := v.effect(&list[i], depth); err != nil {
			return fmt.Errorf("effect %d: %w", i, err)
		}
	}
	return nil
}

func (v *validator) effect(e *Effect, depth int) error {
	verbs := 0
	for _, set := range []bool{e.Set != "", e.Add != "", e.SetField != "", e.Goto != "", e.Replace != "",
		e.Finish, e.Launch != "", e.Home, e.HideIME, e.Log != "", e.If != nil} {
		if set {
			verbs++
		}
	}
	if verbs != 1 {
		return errors.New("exactly one verb (set, add, setField, goto, replace, finish, launch, home, hideIme, log, if) is required")
	}
	if e.Value != nil {
		if err := v.str("value", *e.Value); err != nil {
			return err
		}
	}
	if err := v.str("log", e.Log); err != nil {
		return err
	}
	switch {
	case e.Set != "":
		if !varRE.MatchString(e.Set) {
			return fmt.Errorf("invalid variable name %q", e.Set)
		}
		e.FromField = fullResID(v.pkg, e.FromField)
		if (e.Value == nil) == (e.FromField == "") {
			return errors.New("set needs exactly one of value or fromField")
		}
		if e.FromField != "" && !resIDRE.MatchString(e.FromField) {
			return fmt.Errorf("invalid field id %q", e.FromField)
		}
	case e.Add != "":
		if !varRE.MatchString(e.Add) {
			return fmt.Errorf("invalid variable name %q", e.Add)
		}
	case e.SetField != "":
		e.SetField = fullResID(v.pkg, e.SetField)
		if !resIDRE.MatchString(e.SetField) || e.Value == nil {
			return errors.New("setField needs a valid field id and a value")
		}
	case e.Goto != "" || e.Replace != "":
		e.Goto, e.Replace = FullClass(v.pkg, e.Goto), FullClass(v.pkg, e.Replace)
		target := e.Goto + e.Replace
		if !v.activities[target] {
			return fmt.Errorf("target activity %q is not a screen of this app", target)
		}
	case e.Launch != "":
		if !packageRE.MatchString(e.Launch) {
			return fmt.Errorf("invalid package %q", e.Launch)
		}
	case e.If != nil:
		if err := v.cond(e.If, 1); err != nil {
			return err
		}
		if err := v.effects(e.Then, depth+1); err != nil {
			return err
		}
		return v.effects(e.Else, depth+1)
	}
	if len(e.Then) > 0 || len(e.Else) > 0 {
		return errors.New("then/else only belong to if")
	}
	return nil
}
