package android

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// statusBarRefHeight is the status bar height in reference pixels.
const statusBarRefHeight = 63

// liveNode is the phone's internal node: the snapshot plus what input
// handling needs (spec, state owner, repeat index, scroll key).
type liveNode struct {
	n        ui.Node
	spec     *appspec.NodeSpec
	app      *appRuntime
	idx      int
	key      string
	launch   string
	refB     ui.Rect // unclipped bounds in reference pixels
	refVis   ui.Rect // visible bounds in reference pixels
	children []*liveNode
	parent   *liveNode
}

type liveWindow struct {
	w      ui.Window
	root   *liveNode
	app    *appRuntime
	screen *appspec.ScreenSpec
	ovl    *overlay
}

func (p *Phone) sx(x int) int { return x * p.cfg.Width / appspec.RefWidth }
func (p *Phone) sy(y int) int { return y * p.cfg.Height / appspec.RefHeight }
func (p *Phone) scaleRect(r ui.Rect) ui.Rect {
	return ui.Rect{Left: p.sx(r.Left), Top: p.sy(r.Top), Right: p.sx(r.Right), Bottom: p.sy(r.Bottom)}
}

// toRef converts screen pixels into reference pixels (for hit tests and
// scroll distances).
func (p *Phone) toRefX(x int) int { return x * appspec.RefWidth / p.cfg.Width }
func (p *Phone) toRefY(y int) int { return y * appspec.RefHeight / p.cfg.Height }

func hash64(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	// 53 bits keep the id exact in JSON consumers that use doubles.
	v := int64(h.Sum64() & (1<<53 - 1))
	if v == 0 {
		v = 1
	}
	return v
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func renderKind(s *appspec.NodeSpec, inScroll bool, text string) string {
	switch {
	case s.Kind != "":
		return s.Kind
	case s.Editable:
		return "field"
	case strings.Contains(s.Class, "Button"):
		return "button"
	case strings.Contains(s.Class, "Image"):
		return "image"
	case s.Scrollable:
		return "list"
	case inScroll && s.Clickable:
		return "item"
	case s.Clickable && text != "":
		return "button"
	case text != "":
		return "text"
	}
	return "container"
}

// treeBuilder lays out one window's tree.
type treeBuilder struct {
	p      *Phone
	app    *appRuntime // nil for system windows
	pkg    string
	prefix string // window identity for source ids
	focus  string // focused field id in this window
}

func (b *treeBuilder) vars() map[string]string {
	if b.app == nil {
		return nil
	}
	return b.app.vars
}

// build lays out spec inside parent (reference pixels). dx/dy shift the
// spec's own bounds (repeats and scrolling); clip is the visible region.
func (b *treeBuilder) build(s *appspec.NodeSpec, parentRef, clip ui.Rect, dx, dy, idx int, path string, inScroll bool) *liveNode {
	if s.When != nil && (b.app == nil || !s.When.Eval(b.app.vars, b.app.fields, idx)) {
		return nil
	}
	ref := parentRef
	if len(s.Bounds) == 4 {
		ref = ui.Rect{Left: s.Bounds[0] + dx, Top: s.Bounds[1] + dy, Right: s.Bounds[2] + dx, Bottom: s.Bounds[3] + dy}
	}
	vis := ref.Intersect(clip)
	if vis.Empty() {
		return nil // off screen: not in the tree at all, like a recycled list row
	}
	ln := &liveNode{spec: s, app: b.app, idx: idx, refB: ref, refVis: vis}
	vars := b.vars()
	text := appspec.Expand(s.Text, vars, idx)
	if s.Editable && b.app != nil {
		val := b.app.fields[s.ID]
		text = val
		if s.Password {
			text = strings.Repeat("\u2022", len([]rune(val)))
		}
		if val == "" {
			text = s.Hint
		}
	}
	ln.key = s.ID
	if ln.key == "" || s.Repeat != nil {
		ln.key = path
	}
	ln.n = ui.Node{
		ClassName: s.Class, Text: text, Description: appspec.Expand(s.Description, vars, idx),
		ResourceID: s.ID, PackageName: b.pkg, Hint: s.Hint,
		SourceID: hash64(b.prefix + "|" + path), Bounds: b.p.scaleRect(vis),
		Clickable: s.Clickable, LongClickable: s.LongClickable, Editable: s.Editable,
		Scrollable: s.Scrollable, Focusable: s.Focusable || s.Editable, Password: s.Password,
		Focused: s.Editable && s.ID != "" && s.ID == b.focus,
		Kind:    renderKind(s, inScroll, text),
	}
	cdx, cdy, cclip := dx, dy, vis
	childInScroll := inScroll
	if s.Scrollable && b.app != nil {
		off := b.app.scroll[ln.key]
		cdx -= off[0]
		cdy -= off[1]
		childInScroll = true
	}
	if s.AppGrid {
		b.appGrid(ln, ref, cclip, path)
		return ln
	}
	for i := range s.Children {
		c := &s.Children[i]
		copies, sdx, sdy := 1, 0, 0
		if c.Repeat != nil {
			copies, sdx, sdy = c.Repeat.Count, c.Repeat.DX, c.Repeat.DY
		}
		for k := 0; k < copies; k++ {
			cp := path + "/" + strconv.Itoa(i)
			cidx := idx
			if c.Repeat != nil {
				cp += "#" + strconv.Itoa(k+1)
				cidx = k + 1
			}
			// Children without their own bounds fill the parent's content box,
			// which scrolls with the parent.
			if kid := b.build(c, ref.Offset(cdx-dx, cdy-dy), cclip, cdx+k*sdx, cdy+k*sdy, cidx, cp, childInScroll); kid != nil {
				kid.parent = ln
				ln.children = append(ln.children, kid)
			}
		}
	}
	return ln
}

// appGrid fills the launcher's workspace with one icon per launchable app,
// in label order, four per row.
func (b *treeBuilder) appGrid(ln *liveNode, area, clip ui.Rect, path string) {
	type ent struct{ label, pkg string }
	var apps []ent
	for pkg, a := range b.p.apps {
		if a.spec.LauncherActivity != "" && pkg != launcherPackage {
			apps = append(apps, ent{a.spec.Label, pkg})
		}
	}
	slices.SortFunc(apps, func(x, y ent) int {
		if c := strings.Compare(x.label, y.label); c != 0 {
			return c
		}
		return strings.Compare(x.pkg, y.pkg)
	})
	const cols, cellH = 4, 300
	cellW := area.Width() / cols
	for i, e := range apps {
		r := ui.Rect{Left: area.Left + (i%cols)*cellW, Top: area.Top + (i/cols)*cellH, Right: 0, Bottom: 0}
		r.Right, r.Bottom = r.Left+cellW-20, r.Top+cellH-30
		vis := r.Intersect(clip)
		if vis.Empty() {
			continue
		}
		kid := &liveNode{app: b.app, launch: e.pkg, refB: r, refVis: vis, parent: ln, key: path + "/icon/" + e.pkg}
		kid.spec = &appspec.NodeSpec{Class: "android.widget.TextView", Clickable: true, LongClickable: true}
		kid.n = ui.Node{ClassName: "android.widget.TextView", Text: e.label, Description: e.label,
			PackageName: b.pkg, SourceID: hash64(b.prefix + "|" + kid.key), Bounds: b.p.scaleRect(vis),
			Clickable: true, LongClickable: true, Focusable: true, Kind: "icon"}
		ln.children = append(ln.children, kid)
	}
}

// snapshot converts a live tree into a detached ui.Node tree.
func (ln *liveNode) snapshot() *ui.Node {
	n := ln.n
	n.Children = make([]*ui.Node, 0, len(ln.children))
	for _, c := range ln.children {
		n.Children = append(n.Children, c.snapshot())
	}
	return &n
}

// screenLocked returns the spec of an activity, synthesizing an empty screen
// for handler-only components that the app spec does not declare.
func (a *appRuntime) screen(cls string) *appspec.ScreenSpec {
	if sc := a.screens[cls]; sc != nil {
		return sc
	}
	return &appspec.ScreenSpec{Activity: cls, Root: appspec.NodeSpec{Class: "android.widget.FrameLayout"}}
}

// liveWindowsLocked builds every window, top of the z-order first:
// overlays (newest first), the IME, the status bar, the focused app.
func (p *Phone) liveWindowsLocked() []*liveWindow {
	var out []*liveWindow
	for i := len(p.overlays) - 1; i >= 0; i-- {
		out = append(out, p.overlayWindowLocked(p.overlays[i]))
	}
	if w := p.imeWindowLocked(); w != nil {
		out = append(out, w)
	}
	out = append(out, p.statusBarWindowLocked())
	if w := p.appWindowLocked(); w != nil {
		out = append(out, w)
	}
	return out
}

func (p *Phone) appWindowRef() ui.Rect {
	return ui.Rect{Left: 0, Top: statusBarRefHeight, Right: appspec.RefWidth, Bottom: appspec.RefHeight}
}

func (p *Phone) appWindowLocked() *liveWindow {
	pkg, act := p.foregroundLocked()
	a := p.apps[pkg]
	if a == nil {
		return nil
	}
	sc := a.screen(act)
	focus := ""
	if p.focus.pkg == pkg && p.focus.activity == act {
		focus = p.focus.field
	}
	b := &treeBuilder{p: p, app: a, pkg: pkg, prefix: "app|" + pkg + "|" + act, focus: focus}
	wref := p.appWindowRef()
	root := b.build(&sc.Root, wref, wref, 0, 0, 0, "0", false)
	lw := &liveWindow{app: a, screen: sc, root: root}
	lw.w = ui.Window{Package: pkg, Kind: ui.WindowApp, Activity: act, Bounds: p.scaleRect(wref), Focused: true}
	return lw
}

// statusBarSpec builds the status bar's content (a fresh value each time, so
// no shared mutable spec exists).
func statusBarSpec() *appspec.NodeSpec {
	return &appspec.NodeSpec{Class: "android.widget.FrameLayout", ID: "com.android.systemui:id/status_bar",
		Children: []appspec.NodeSpec{
			// Fixed clock text: the screenshot must not depend on the wall clock.
			{Class: "android.widget.TextView", ID: "com.android.systemui:id/clock", Text: "12:00", Kind: "text", Bounds: []int{36, 0, 220, statusBarRefHeight}},
			{Class: "android.widget.TextView", ID: "com.android.systemui:id/battery", Text: "100%", Kind: "text", Bounds: []int{880, 0, 1050, statusBarRefHeight}},
		}}
}

func (p *Phone) statusBarWindowLocked() *liveWindow {
	ref := ui.Rect{Left: 0, Top: 0, Right: appspec.RefWidth, Bottom: statusBarRefHeight}
	b := &treeBuilder{p: p, pkg: systemUIPackage, prefix: "statusbar"}
	root := b.build(statusBarSpec(), ref, ref, 0, 0, 0, "0", false)
	lw := &liveWindow{root: root}
	lw.w = ui.Window{Package: systemUIPackage, Kind: ui.WindowStatusBar, Bounds: p.scaleRect(ref)}
	return lw
}

func (lw *liveWindow) snapshot() ui.Window {
	w := lw.w
	if lw.root != nil {
		w.Root = lw.root.snapshot()
	}
	return w
}

// Windows returns snapshots of all windows, top of the z-order first:
// transient overlays (newest first), the IME (when shown), the status bar
// and the focused app window.
func (p *Phone) Windows() []ui.Window {
	var out []ui.Window
	p.view(func() {
		for _, lw := range p.liveWindowsLocked() {
			out = append(out, lw.snapshot())
		}
	})
	return out
}

// ActiveWindow returns the focused app window (Kind "app"). Before any app
// window exists it returns a zero ui.Window.
func (p *Phone) ActiveWindow() ui.Window {
	var w ui.Window
	p.view(func() {
		if lw := p.appWindowLocked(); lw != nil {
			w = lw.snapshot()
		}
	})
	return w
}

// AccessibilityRoots returns the windows an accessibility service combines
// into the screen's tree, bottom first: the app window, plus the IME and any
// overlays when they are shown. More than one root is the multi-window case
// that SoloPi exports as a FakeNodeTree. The status bar is not included.
func (p *Phone) AccessibilityRoots() []ui.Window {
	var out []ui.Window
	p.view(func() {
		lws := p.liveWindowsLocked()
		for i := len(lws) - 1; i >= 0; i-- {
			if lws[i].w.Kind != ui.WindowStatusBar {
				out = append(out, lws[i].snapshot())
			}
		}
	})
	return out
}

// MultiWindow reports whether AccessibilityRoots has more than one root.
func (p *Phone) MultiWindow() bool { return len(p.AccessibilityRoots()) > 1 }

// FindNode returns a snapshot of the node with the given source id in any
// window.
func (p *Phone) FindNode(sourceID int64) (*ui.Node, bool) {
	var out *ui.Node
	p.view(func() {
		if ln, _ := p.findLiveLocked(sourceID); ln != nil {
			out = ln.snapshot()
		}
	})
	return out, out != nil
}

func (p *Phone) findLiveLocked(sourceID int64) (*liveNode, *liveWindow) {
	for _, lw := range p.liveWindowsLocked() {
		if ln := findLive(lw.root, func(n *liveNode) bool { return n.n.SourceID == sourceID }); ln != nil {
			return ln, lw
		}
	}
	return nil, nil
}

func findLive(ln *liveNode, match func(*liveNode) bool) *liveNode {
	if ln == nil {
		return nil
	}
	if match(ln) {
		return ln
	}
	for _, c := range ln.children {
		if f := findLive(c, match); f != nil {
			return f
		}
	}
	return nil
}

// hitLive finds the deepest node under the screen point (x, y) that accepts
// the interaction, preferring later (drawn on top) siblings.
func hitLive(ln *liveNode, x, y int, accept func(*liveNode) bool) *liveNode {
	if ln == nil || !ln.n.Bounds.Contains(x, y) {
		return nil
	}
	for i := len(ln.children) - 1; i >= 0; i-- {
		if f := hitLive(ln.children[i], x, y, accept); f != nil {
			return f
		}
	}
	if accept(ln) {
		return ln
	}
	return nil
}
