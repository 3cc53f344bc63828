package android

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// Input method ids.
const (
	latinIME = "com.android.inputmethod.latin/.LatinIME"
	adbIME   = "com.android.adbkeyboard/.AdbIME"
)

// errNoFocusedField is returned by text input when no text field has focus.
var errNoFocusedField = errors.New("no focused text field")

// imeInfo describes an input method the phone knows about; it is usable
// only while its package is installed.
type imeInfo struct {
	id      string
	pkg     string
	refTop  int // top of the keyboard window in reference pixels
	label   string
	keyRows [][]string
}

var knownIMEs = []imeInfo{
	{id: latinIME, pkg: "com.android.inputmethod.latin", refTop: 1500, label: "Android Keyboard (AOSP)",
		keyRows: [][]string{
			{"q", "w", "e", "r", "t", "y", "u", "i", "o", "p"},
			{"a", "s", "d", "f", "g", "h", "j", "k", "l"},
			{"z", "x", "c", "v", "b", "n", "m", "DEL"},
			{",", "space", ".", "enter"},
		}},
	// The ADB keyboard shows only a thin strip; it types what arrives by
	// broadcast (ADB_INPUT_TEXT / ADB_INPUT_B64).
	{id: adbIME, pkg: "com.android.adbkeyboard", refTop: 2200, label: "ADB Keyboard"},
}

func imeByID(id string) (imeInfo, bool) {
	for _, m := range knownIMEs {
		if m.id == id || m.pkg+"/"+appspec.FullClass(m.pkg, strings.TrimPrefix(m.id, m.pkg+"/")) == id {
			return m, true
		}
	}
	return imeInfo{}, false
}

// normalizeIMEID accepts both the short and the full class form.
func normalizeIMEID(id string) string {
	pkg, cls, ok := splitComponent(id)
	if !ok {
		return id
	}
	return shortComponent(pkg, cls)
}

type imeState struct {
	current string
	enabled map[string]bool
	shown   bool
}

func newIMEState() imeState {
	return imeState{current: latinIME, enabled: map[string]bool{latinIME: true}}
}

func (s imeState) enabledList() string {
	return strings.Join(slices.Sorted(maps.Keys(s.enabled)), ":")
}

// fieldFocus is the text field holding input focus.
type fieldFocus struct {
	pkg, activity, field string
}

func (p *Phone) clearFocusLocked() {
	if p.focus != (fieldFocus{}) || p.ime.shown {
		p.touchLocked()
	}
	p.focus = fieldFocus{}
	p.ime.shown = false
}

// focusFieldLocked gives a text field input focus and shows the keyboard.
func (p *Phone) focusFieldLocked(pkg, activity, field string) {
	p.focus = fieldFocus{pkg, activity, field}
	if m, ok := imeByID(p.ime.current); ok && p.apps[m.pkg] != nil {
		p.ime.shown = true
	}
	p.touchLocked()
}

// IMEShown reports whether the soft keyboard window is on screen.
func (p *Phone) IMEShown() bool {
	var v bool
	p.view(func() { v = p.ime.shown })
	return v
}

// CurrentIME returns the selected input method id.
func (p *Phone) CurrentIME() string {
	var v string
	p.view(func() { v = p.ime.current })
	return v
}

// FocusedField returns a snapshot of the focused text field, if any.
func (p *Phone) FocusedField() (*ui.Node, bool) {
	var out *ui.Node
	p.view(func() {
		if ln := p.focusedLiveLocked(); ln != nil {
			out = ln.snapshot()
		}
	})
	return out, out != nil
}

func (p *Phone) focusedLiveLocked() *liveNode {
	if p.focus.field == "" {
		return nil
	}
	lw := p.appWindowLocked()
	if lw == nil {
		return nil
	}
	return findLive(lw.root, func(n *liveNode) bool { return n.spec.Editable && n.n.ResourceID == p.focus.field })
}

// IMEs lists the available input methods (installed packages only) and
// whether each is enabled.
func (p *Phone) IMEs() map[string]bool {
	out := map[string]bool{}
	p.view(func() {
		for _, m := range knownIMEs {
			if p.apps[m.pkg] != nil {
				out[m.id] = p.ime.enabled[m.id]
			}
		}
	})
	return out
}

// EnableIME is `ime enable ID`; it reports whether the IME was already
// enabled.
func (p *Phone) EnableIME(id string, enable bool) (already bool, err error) {
	id = normalizeIMEID(id)
	err = p.update(func() error {
		m, ok := imeByID(id)
		if !ok || p.apps[m.pkg] == nil {
			return fmt.Errorf("ime %s: unknown input method", id)
		}
		already = p.ime.enabled[m.id] == enable
		if enable {
			p.ime.enabled[m.id] = true
		} else {
			delete(p.ime.enabled, m.id)
			if p.ime.current == m.id {
				p.ime.current = latinIME
				p.ime.enabled[latinIME] = true
				p.touchLocked()
			}
		}
		p.settings["secure/enabled_input_methods"] = p.ime.enabledList()
		p.settings["secure/default_input_method"] = p.ime.current
		return nil
	})
	return already, err
}

// SetIME is `ime set ID`: the IME must be installed and enabled.
func (p *Phone) SetIME(id string) error {
	id = normalizeIMEID(id)
	return p.update(func() error {
		m, ok := imeByID(id)
		if !ok || p.apps[m.pkg] == nil || !p.ime.enabled[m.id] {
			return fmt.Errorf("ime set %s: unknown or disabled input method", id)
		}
		if p.ime.current != m.id {
			p.ime.current = m.id
			p.touchLocked()
		}
		p.settings["secure/default_input_method"] = m.id
		return nil
	})
}

func (p *Phone) imeWindowLocked() *liveWindow {
	if !p.ime.shown || p.focus.field == "" {
		return nil
	}
	m, ok := imeByID(p.ime.current)
	if !ok {
		return nil
	}
	ref := ui.Rect{Left: 0, Top: m.refTop, Right: appspec.RefWidth, Bottom: appspec.RefHeight}
	root := appspec.NodeSpec{Class: "android.widget.FrameLayout", ID: m.pkg + ":id/keyboard_view", Bounds: []int{ref.Left, ref.Top, ref.Right, ref.Bottom}}
	if len(m.keyRows) == 0 {
		root.Children = []appspec.NodeSpec{{Class: "android.widget.TextView", Text: "ADB Keyboard {ON}", Kind: "text",
			Bounds: []int{40, ref.Top + 20, appspec.RefWidth - 40, appspec.RefHeight - 20}}}
	}
	const keyH, gap = 170, 10
	for r, row := range m.keyRows {
		top := ref.Top + 30 + r*(keyH+gap)
		widths := make([]int, len(row))
		total := 0
		for i, k := range row {
			widths[i] = appspec.RefWidth / 10
			if r == len(m.keyRows)-1 { // bottom row: a wide space bar
				widths[i] = 150
				if k == "space" {
					widths[i] = appspec.RefWidth - 3*150 - 60
				}
			}
			total += widths[i]
		}
		left := (appspec.RefWidth - total) / 2
		for i, k := range row {
			root.Children = append(root.Children, appspec.NodeSpec{Class: "android.inputmethodservice.Keyboard$Key",
				Text: k, Description: k, Kind: "key", Clickable: true, Bounds: []int{left + 4, top, left + widths[i] - 4, top + keyH}})
			left += widths[i]
		}
	}
	b := &treeBuilder{p: p, pkg: m.pkg, prefix: "ime|" + m.id}
	lw := &liveWindow{root: b.build(&root, ref, ref, 0, 0, 0, "0", false)}
	lw.w = ui.Window{Package: m.pkg, Kind: ui.WindowIME, Bounds: p.scaleRect(ref)}
	return lw
}
