package android

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// Android key codes used by the phone.
const (
	KeycodeHome        = 3
	keycodeBack        = 4
	keycodeDpadCenter  = 23
	keycodeSpace       = 62
	keycodeEnter       = 66
	keycodeDel         = 67
	keycodeEscape      = 111
	keycodeForwardDel  = 112
	keycodeNumpadEnter = 160
	keycodeAppSwitch   = 187
)

// Gesture thresholds (ViewConfiguration defaults on Android 12+).
const (
	longPressTimeout = 400 * time.Millisecond
	touchSlopPx      = 24
)

// Input errors.
var (
	errOutOfScreen   = errors.New("point outside the screen")
	errNodeNotFound  = errors.New("node not found")
	errNotEditable   = errors.New("node is not editable")
	errNotScrollable = errors.New("node is not scrollable")
)

// keyChars maps printable key codes to the character they type.
var keyChars = func() map[int]string {
	m := map[int]string{keycodeSpace: " ", 55: ",", 56: ".", 61: "\t", 68: "`", 69: "-", 70: "=",
		71: "[", 72: "]", 73: "\\", 74: ";", 75: "'", 76: "/", 77: "@", 81: "+"}
	for i := 0; i < 26; i++ {
		m[29+i] = string(rune('a' + i))
	}
	for i := 0; i < 10; i++ {
		m[7+i] = strconv.Itoa(i)
	}
	return m
}()

// keycodeNames maps KEYCODE_* names to codes for `input keyevent`.
var keycodeNames = func() map[string]int {
	m := map[string]int{"HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20,
		"DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25,
		"POWER": 26, "CAMERA": 27, "CLEAR": 28, "COMMA": 55, "PERIOD": 56, "TAB": 61, "SPACE": 62,
		"ENTER": 66, "DEL": 67, "GRAVE": 68, "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71,
		"RIGHT_BRACKET": 72, "BACKSLASH": 73, "SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77,
		"PLUS": 81, "MENU": 82, "NOTIFICATION": 83, "SEARCH": 84, "ESCAPE": 111, "FORWARD_DEL": 112,
		"MOVE_HOME": 122, "MOVE_END": 123, "NUMPAD_ENTER": 160, "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224}
	for i := 0; i < 26; i++ {
		m[string(rune('A'+i))] = 29 + i
	}
	for i := 0; i < 10; i++ {
		m[strconv.Itoa(i)] = 7 + i
	}
	return m
}()

func (p *Phone) checkPoint(x, y int) error {
	if x < 0 || y < 0 || x >= p.cfg.Width || y >= p.cfg.Height {
		return fmt.Errorf("(%d,%d) on a %dx%d screen: %w", x, y, p.cfg.Width, p.cfg.Height, errOutOfScreen)
	}
	return nil
}

// Tap is a short touch at (x, y) in screen pixels.
func (p *Phone) Tap(x, y int) error {
	if err := p.checkPoint(x, y); err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	return p.update(func() error { p.pressLocked(x, y, false); return nil })
}

// LongPress holds a touch at (x, y) for d of simulated time. Shorter than
// LongPressTimeout it is a tap, as on a device.
func (p *Phone) LongPress(x, y int, d time.Duration) error {
	return p.longPress(context.Background(), x, y, d)
}

func (p *Phone) longPress(ctx context.Context, x, y int, d time.Duration) error {
	if err := p.checkPoint(x, y); err != nil {
		return fmt.Errorf("long press: %w", err)
	}
	if err := p.clk.Sleep(ctx, d); err != nil {
		return fmt.Errorf("long press: %w", err)
	}
	return p.update(func() error { p.pressLocked(x, y, d >= longPressTimeout); return nil })
}

// Swipe drags from (x1, y1) to (x2, y2) over d. On a scrollable view it
// scrolls the content by the distance dragged; a drag shorter than the touch
// slop is a tap or, when held long enough, a long press.
func (p *Phone) Swipe(x1, y1, x2, y2 int, d time.Duration) error {
	return p.swipe(context.Background(), x1, y1, x2, y2, d)
}

func (p *Phone) swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	if err := p.checkPoint(x1, y1); err != nil {
		return fmt.Errorf("swipe: %w", err)
	}
	if err := p.clk.Sleep(ctx, d); err != nil {
		return fmt.Errorf("swipe: %w", err)
	}
	return p.update(func() error {
		if abs(x2-x1) < touchSlopPx && abs(y2-y1) < touchSlopPx {
			p.pressLocked(x1, y1, d >= longPressTimeout)
			return nil
		}
		lw := p.topWindowAtLocked(x1, y1)
		if lw == nil || lw.w.Kind != ui.WindowApp {
			return nil
		}
		n := hitLive(lw.root, x1, y1, func(n *liveNode) bool { return n.spec.Scrollable })
		if n != nil {
			p.scrollLocked(n, p.toRefX(x1)-p.toRefX(x2), p.toRefY(y1)-p.toRefY(y2))
		}
		return nil
	})
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// topWindowAtLocked returns the top window containing the point.
func (p *Phone) topWindowAtLocked(x, y int) *liveWindow {
	for _, lw := range p.liveWindowsLocked() {
		if lw.w.Bounds.Contains(x, y) {
			return lw
		}
	}
	return nil
}

// pressLocked delivers a tap or a long press to the top window at (x, y).
func (p *Phone) pressLocked(x, y int, long bool) {
	lw := p.topWindowAtLocked(x, y)
	if lw == nil {
		return
	}
	switch lw.w.Kind {
	case ui.WindowIME:
		if k := hitLive(lw.root, x, y, func(n *liveNode) bool { return n.spec.Clickable }); k != nil {
			p.imeKeyLocked(k.n.Text)
		}
	case ui.WindowApp:
		accept := func(n *liveNode) bool { return n.spec.Clickable || n.spec.Editable || n.launch != "" }
		if long {
			accept = func(n *liveNode) bool { return n.spec.LongClickable || n.spec.Editable }
		}
		if n := hitLive(lw.root, x, y, accept); n != nil {
			p.activateLocked(lw, n, long)
		}
	}
	// Overlays and the status bar swallow the touch.
}

// activateLocked is a click (or long click) on a node of an app window.
func (p *Phone) activateLocked(lw *liveWindow, n *liveNode, long bool) {
	pkg, act := lw.w.Package, lw.w.Activity
	if n.spec.Editable {
		p.focusFieldLocked(pkg, act, n.n.ResourceID)
	}
	if n.launch != "" && !long {
		_, _ = p.startLocked(Intent{Action: actionMain, Categories: []string{categoryLauncher},
			Component: n.launch + "/" + p.apps[n.launch].spec.LauncherActivity})
		return
	}
	effs := n.spec.OnClick
	if long {
		effs = n.spec.OnLongClick
	}
	p.runEffectsLocked(n.app, effs, n.idx)
}

// imeKeyLocked types one soft-keyboard key into the focused field.
func (p *Phone) imeKeyLocked(key string) {
	switch key {
	case "DEL":
		p.deleteCharLocked()
	case "enter":
		p.enterLocked()
	case "space":
		p.typeLocked(" ")
	default:
		p.typeLocked(key)
	}
}

// focusedAppLocked returns the app owning the focused field if its screen
// is in front.
func (p *Phone) focusedAppLocked() *appRuntime {
	if p.focus.field == "" {
		return nil
	}
	pkg, act := p.foregroundLocked()
	if pkg != p.focus.pkg || act != p.focus.activity {
		return nil
	}
	return p.apps[pkg]
}

func (p *Phone) typeLocked(s string) bool {
	a := p.focusedAppLocked()
	if a == nil {
		return false
	}
	a.fields[p.focus.field] += s
	p.afterInputLocked(a)
	return true
}

func (p *Phone) deleteCharLocked() {
	a := p.focusedAppLocked()
	if a == nil {
		return
	}
	r := []rune(a.fields[p.focus.field])
	if len(r) == 0 {
		return
	}
	a.fields[p.focus.field] = string(r[:len(r)-1])
	p.afterInputLocked(a)
}

func (p *Phone) enterLocked() {
	if a := p.focusedAppLocked(); a != nil {
		if n := p.focusedLiveLocked(); n != nil {
			p.runEffectsLocked(a, n.spec.OnEnter, n.idx)
		}
	}
}

func (p *Phone) afterInputLocked(a *appRuntime) {
	p.touchLocked()
	if n := p.focusedLiveLocked(); n != nil {
		p.runEffectsLocked(a, n.spec.OnInput, n.idx)
	}
}

// KeyEvent injects one key press (3 HOME, 4 BACK, 66 ENTER, 67 DEL, letters
// and digits type into the focused field).
func (p *Phone) KeyEvent(code int) error {
	if code <= 0 || code > 400 {
		return fmt.Errorf("key event %d: invalid key code", code)
	}
	return p.update(func() error {
		switch code {
		case KeycodeHome:
			if lw := p.appWindowLocked(); lw != nil && lw.screen != nil {
				p.runEffectsLocked(lw.app, lw.screen.OnHome, 0)
			}
			p.goHomeLocked()
		case keycodeBack, keycodeEscape:
			p.backLocked()
		case keycodeEnter, keycodeNumpadEnter, keycodeDpadCenter:
			p.enterLocked()
		case keycodeDel:
			p.deleteCharLocked()
		default:
			if s, ok := keyChars[code]; ok {
				p.typeLocked(s)
			}
		}
		return nil
	})
}

func (p *Phone) backLocked() {
	if p.ime.shown {
		// The first BACK only closes the keyboard; the field keeps focus.
		p.ime.shown = false
		p.touchLocked()
		return
	}
	if lw := p.appWindowLocked(); lw != nil && lw.screen != nil && len(lw.screen.OnBack) > 0 {
		p.runEffectsLocked(lw.app, lw.screen.OnBack, 0)
		return
	}
	p.finishTopLocked()
}

// InputText types s into the focused text field (like `input text` with the
// default keyboard).
func (p *Phone) InputText(s string) error {
	var ok bool
	_ = p.update(func() error { ok = p.typeLocked(s); return nil })
	if !ok {
		return fmt.Errorf("input text: %w", errNoFocusedField)
	}
	return nil
}

// SetText replaces an editable node's text (AccessibilityNodeInfo
// ACTION_SET_TEXT). It neither focuses the field nor shows the keyboard.
func (p *Phone) SetText(sourceID int64, s string) error {
	return p.update(func() error {
		ln, lw := p.findLiveLocked(sourceID)
		if ln == nil {
			return fmt.Errorf("set text on %d: %w", sourceID, errNodeNotFound)
		}
		if !ln.spec.Editable || ln.app == nil || lw.w.Kind != ui.WindowApp {
			return fmt.Errorf("set text on %d: %w", sourceID, errNotEditable)
		}
		ln.app.fields[ln.n.ResourceID] = s
		p.touchLocked()
		p.runEffectsLocked(ln.app, ln.spec.OnInput, ln.idx)
		return nil
	})
}

// Click performs ACTION_CLICK on a node of the app window.
func (p *Phone) Click(sourceID int64) error { return p.nodeAction(sourceID, false) }

// LongClick performs ACTION_LONG_CLICK on a node of the app window.
func (p *Phone) LongClick(sourceID int64) error { return p.nodeAction(sourceID, true) }

func (p *Phone) nodeAction(sourceID int64, long bool) error {
	return p.update(func() error {
		ln, lw := p.findLiveLocked(sourceID)
		if ln == nil {
			return fmt.Errorf("click %d: %w", sourceID, errNodeNotFound)
		}
		switch lw.w.Kind {
		case ui.WindowApp:
			p.activateLocked(lw, ln, long)
		case ui.WindowIME:
			p.imeKeyLocked(ln.n.Text)
		}
		return nil
	})
}

// ScrollNode scrolls a scrollable node's content by (dx, dy) screen pixels
// (positive dy reveals content further down) and reports whether it moved.
func (p *Phone) ScrollNode(sourceID int64, dx, dy int) (moved bool, err error) {
	err = p.update(func() error {
		ln, _ := p.findLiveLocked(sourceID)
		if ln == nil {
			return fmt.Errorf("scroll %d: %w", sourceID, errNodeNotFound)
		}
		if !ln.spec.Scrollable || ln.app == nil {
			return fmt.Errorf("scroll %d: %w", sourceID, errNotScrollable)
		}
		moved = p.scrollLocked(ln, dx*appspec.RefWidth/p.cfg.Width, dy*appspec.RefHeight/p.cfg.Height)
		return nil
	})
	return moved, err
}

// scrollLocked moves a scrollable node's content by (dx, dy) reference
// pixels, clamped to the content extent.
func (p *Phone) scrollLocked(n *liveNode, dx, dy int) bool {
	view := n.refB
	if len(n.spec.Bounds) == 4 {
		view = ui.Rect{Left: n.spec.Bounds[0], Top: n.spec.Bounds[1], Right: n.spec.Bounds[2], Bottom: n.spec.Bounds[3]}
	}
	right, bottom := contentExtent(n.spec, view)
	maxX, maxY := max(0, right-view.Right), max(0, bottom-view.Bottom)
	old := n.app.scroll[n.key]
	nx, ny := min(max(old[0]+dx, 0), maxX), min(max(old[1]+dy, 0), maxY)
	if nx == old[0] && ny == old[1] {
		return false
	}
	n.app.scroll[n.key] = [2]int{nx, ny}
	p.touchLocked()
	p.runEffectsLocked(n.app, n.spec.OnScroll, n.idx)
	return true
}

// contentExtent is the right and bottom edge of a node's content in spec
// coordinates, repeats included.
func contentExtent(s *appspec.NodeSpec, parent ui.Rect) (right, bottom int) {
	right, bottom = parent.Right, parent.Bottom
	for i := range s.Children {
		c := &s.Children[i]
		box := parent
		if len(c.Bounds) == 4 {
			box = ui.Rect{Left: c.Bounds[0], Top: c.Bounds[1], Right: c.Bounds[2], Bottom: c.Bounds[3]}
		}
		r, b := box.Right, box.Bottom
		if !c.Scrollable {
			r, b = contentExtent(c, box)
		}
		if c.Repeat != nil {
			r += max(0, (c.Repeat.Count-1)*c.Repeat.DX)
			b += max(0, (c.Repeat.Count-1)*c.Repeat.DY)
		}
		right, bottom = max(right, r), max(bottom, b)
	}
	return right, bottom
}

// runEffectsLocked executes a transition of app a.
func (p *Phone) runEffectsLocked(a *appRuntime, effs []appspec.Effect, idx int) {
	if a == nil {
		return
	}
	pkg := a.spec.Package
	for i := range effs {
		e := &effs[i]
		p.touchLocked()
		switch {
		case e.Set != "":
			if e.FromField != "" {
				a.vars[e.Set] = a.fields[e.FromField]
			} else {
				a.vars[e.Set] = appspec.Expand(*e.Value, a.vars, idx)
			}
		case e.Add != "":
			n, _ := strconv.ParseInt(strings.TrimSpace(a.vars[e.Add]), 10, 64)
			a.vars[e.Add] = strconv.FormatInt(n+e.By, 10)
		case e.SetField != "":
			a.fields[e.SetField] = appspec.Expand(*e.Value, a.vars, idx)
		case e.Goto != "":
			_, _ = p.startLocked(Intent{Component: pkg + "/" + e.Goto})
		case e.Replace != "":
			if t := p.topTaskLocked(); t != nil && t.pkg == pkg && len(t.stack) > 0 {
				t.stack = t.stack[:len(t.stack)-1]
			}
			_, _ = p.startLocked(Intent{Component: pkg + "/" + e.Replace})
		case e.Finish:
			if t := p.topTaskLocked(); t != nil && t.pkg == pkg {
				p.finishTopLocked()
			}
		case e.Launch != "":
			if b := p.apps[e.Launch]; b != nil && b.spec.LauncherActivity != "" {
				_, _ = p.startLocked(Intent{Action: actionMain, Categories: []string{categoryLauncher},
					Component: e.Launch + "/" + b.spec.LauncherActivity})
			}
		case e.Home:
			p.goHomeLocked()
		case e.HideIME:
			p.ime.shown = false
		case e.Log != "":
			pid := a.pid
			if pid == 0 {
				pid = systemServerPID
			}
			p.logs.add(pid, 'I', a.spec.Label, appspec.Expand(e.Log, a.vars, idx))
		case e.If != nil:
			if e.If.Eval(a.vars, a.fields, idx) {
				p.runEffectsLocked(a, e.Then, idx)
			} else {
				p.runEffectsLocked(a, e.Else, idx)
			}
		}
	}
}
