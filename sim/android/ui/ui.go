// Package ui holds what the simulated phone shows: snapshots of its windows
// and accessibility nodes, the screen geometry they are measured in, and
// how one node is painted into a screenshot.
//
// It is separate from the phone so that the phone's readers (SoloPi's
// device side through the sim adapter, the fault injection of sim) get
// plain values that never share memory with the phone, and so that the
// painting rules can be read apart from the window management.
package ui

// Node is a plain snapshot of one accessibility node. Snapshots never share
// memory with the phone, so callers may keep and modify them.
type Node struct {
	ClassName   string
	Text        string // shown text; an empty text field reports its hint (Android 8+)
	Description string
	ResourceID  string
	PackageName string
	Hint        string
	// SourceID is the accessibility source id: stable for the same view of
	// the same screen across snapshots, different between views.
	SourceID      int64
	Bounds        Rect // in screen pixels, clipped to what is visible
	Clickable     bool
	LongClickable bool
	Editable      bool
	Scrollable    bool
	Focusable     bool
	Focused       bool
	Password      bool
	// Kind is the render category: button, field, text, item, image, list,
	// icon, toolbar, key or container.
	Kind     string
	Children []*Node
}

// Window kinds.
const (
	WindowApp       = "app"
	WindowStatusBar = "statusbar"
	WindowIME       = "ime"
	WindowOverlay   = "overlay"
)

// Window is one on-screen window with its accessibility tree.
type Window struct {
	Package  string
	Kind     string // app, statusbar, ime, overlay
	Activity string // full class name, app windows only
	Root     *Node
	Bounds   Rect
	Focused  bool // the window with input focus (the app window)
}

// Walk visits n and its descendants in pre-order until f returns false.
func (n *Node) Walk(f func(*Node) bool) bool {
	if n == nil {
		return true
	}
	if !f(n) {
		return false
	}
	for _, c := range n.Children {
		if !c.Walk(f) {
			return false
		}
	}
	return true
}

// Find returns the first node (pre-order) for which match is true.
func (n *Node) Find(match func(*Node) bool) *Node {
	var found *Node
	n.Walk(func(x *Node) bool {
		if match(x) {
			found = x
			return false
		}
		return true
	})
	return found
}
