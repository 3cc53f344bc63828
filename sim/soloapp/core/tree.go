package core

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// FlatNode is a node with its SoloPi xpath and depth (root = 1).
type FlatNode struct {
	N     *Node
	Xpath string
	depth int
}

// Flatten walks n in pre-order. xpath is n's own xpath ("" for a root):
// class names with a 1-based index when several siblings share the class,
// starting with a single "/" like AccessibilityNodeTree.getXpath.
func Flatten(n *Node, xpath string, depth int, out []FlatNode) []FlatNode {
	if n == nil {
		return out
	}
	if xpath == "" {
		xpath = "/" + n.ClassName
	}
	out = append(out, FlatNode{N: n, Xpath: xpath, depth: depth})
	for i, c := range n.Children {
		out = Flatten(c, childXPath(n, i, xpath), depth+1, out)
	}
	return out
}

func childXPath(parent *Node, i int, parentXPath string) string {
	c := parent.Children[i]
	same, index := 0, 0
	for j, s := range parent.Children {
		if s != nil && s.ClassName == c.ClassName {
			same++
			if j <= i {
				index = same
			}
		}
	}
	p := parentXPath + "/" + c.ClassName
	if same > 1 {
		p += "[" + strconv.Itoa(index) + "]"
	}
	return p
}

// PageRoot is what SoloPi's accessibility tree provider returns: one window
// root, or a FakeNodeTree combining several windows (IME visible, …).
type PageRoot struct {
	Roots []*Node
	fake  bool
}

func (r *PageRoot) Pkg() string {
	if r == nil || r.fake || len(r.Roots) == 0 {
		return ""
	}
	return r.Roots[0].PackageName
}

// ReadRoot builds the current root from the phone's windows. ignoreSoloPi
// drops windows whose root package is SoloPi's, as the provider the Agent
// uses does (docs/device-protocol.md#known-device-quirks). The status bar is
// a root only when nothing else is visible (for example while SoloPi's own
// activity covers the screen).
func (a *App) ReadRoot(ignoreSoloPi bool) *PageRoot {
	fg, _ := a.Phone.Foreground()
	var content []*Node
	var bar *Node
	for _, w := range a.Phone.Windows() {
		if w.Root == nil {
			continue
		}
		pkg := w.Root.PackageName
		if pkg == "" {
			pkg = w.Package
		}
		if w.Kind == WindowStatusBar {
			if bar == nil {
				bar = w.Root
			}
			continue
		}
		// Only the foreground task's app window is visible; anything below
		// it (including the target app while SoloPi's own activity is on
		// top) is covered.
		if w.Kind == WindowApp && fg != "" && pkg != fg {
			continue
		}
		if ignoreSoloPi && pkg == a.Cfg.Package {
			continue
		}
		content = append(content, w.Root)
	}
	switch {
	case len(content) == 1:
		return &PageRoot{Roots: content}
	case len(content) > 1:
		return &PageRoot{Roots: content, fake: true}
	case bar != nil:
		return &PageRoot{Roots: []*Node{bar}}
	}
	return nil
}

// Controllable applies the controllable-root rule
// (docs/device-protocol.md#observations-and-the-ui-tree): a non-empty package
// other than SoloPi, bounds present, at least a third of the screen in each
// dimension. FakeNodeTree roots have no package and are never controllable.
func (a *App) Controllable(r *PageRoot) bool {
	if r == nil || r.fake || len(r.Roots) == 0 {
		return false
	}
	root := r.Roots[0]
	if root.PackageName == "" || root.PackageName == a.Cfg.Package {
		return false
	}
	w, h := a.Phone.ScreenSize()
	return root.Bounds.Width() >= max(1, w/3) && root.Bounds.Height() >= max(1, h/3)
}

// NodeSelector is the frame's snapshot of one node, used to re-locate it
// in a fresh tree at act time.
type NodeSelector struct {
	xpath, resourceID, text, description, id, className, packageName string
	depth                                                            int
	bounds                                                           Rect
}

func selectorOf(f FlatNode) NodeSelector {
	return NodeSelector{xpath: f.Xpath, resourceID: f.N.ResourceID, text: f.N.Text, description: f.N.Description,
		id: strconv.FormatInt(f.N.SourceID, 10), className: f.N.ClassName, packageName: f.N.PackageName,
		depth: f.depth, bounds: f.N.Bounds}
}

// Locate finds the node matching every field of the selector in r.
func (s NodeSelector) Locate(r *PageRoot) *Node {
	if r == nil {
		return nil
	}
	for _, root := range r.Roots {
		for _, f := range Flatten(root, "", 1, nil) {
			if selectorOf(f) == s {
				return f.N
			}
		}
	}
	return nil
}

// exportedPage is a page JSON with its hash and, when numbered, the frame.
type exportedPage struct {
	Page  Obj
	Sha   string
	Frame map[string]NodeSelector
	order []string
}

// ExportPage builds the page JSON of an observation. The hash is over the
// compact, key-sorted JSON WITHOUT nodeIds; numbered adds "nodeId":"node-<n>"
// in pre-order and records the frame.
func ExportPage(r *PageRoot, numbered bool) exportedPage {
	plain := buildPage(r, nil)
	sum := sha256.Sum256(Encode(plain, true))
	out := exportedPage{Page: plain, Sha: hex.EncodeToString(sum[:])}
	if numbered {
		nb := &numbering{frame: map[string]NodeSelector{}}
		out.Page = buildPage(r, nb)
		out.Frame, out.order = nb.frame, nb.order
	}
	return out
}

type numbering struct {
	next  int
	frame map[string]NodeSelector
	order []string
}

func (nb *numbering) id() string {
	nb.next++
	id := "node-" + strconv.Itoa(nb.next)
	nb.order = append(nb.order, id)
	return id
}

func buildPage(r *PageRoot, nb *numbering) Obj {
	if r == nil || len(r.Roots) == 0 {
		return Obj{}
	}
	if !r.fake {
		return buildNode(r.Roots[0], "", 1, nb)
	}
	o := Obj{}
	if nb != nil {
		o.Set("nodeId", nb.id())
	}
	children := make([]any, 0, len(r.Roots))
	for _, c := range r.Roots {
		children = append(children, buildNode(c, "", 1, nb))
	}
	o.Set("type", "FakeNodeTree")
	o.Set("children", children)
	return o
}

func buildNode(n *Node, xpath string, depth int, nb *numbering) Obj {
	if xpath == "" {
		xpath = "/" + n.ClassName
	}
	o := NewObj("depth", depth, "className", n.ClassName, "nodeBound", rectValue(n.Bounds),
		"text", n.Text, "description", n.Description)
	if n.ResourceID != "" {
		o.Set("resourceId", n.ResourceID)
	}
	o.Set("id", strconv.FormatInt(n.SourceID, 10))
	o.Set("packageName", n.PackageName)
	o.Set("visible", n.Bounds.Width()*n.Bounds.Height() > 0)
	o.Set("type", "AccessibilityNodeTree")
	if nb != nil {
		id := nb.id()
		nb.frame[id] = selectorOf(FlatNode{N: n, Xpath: xpath, depth: depth})
		o.Set("nodeId", id)
	}
	children := make([]any, 0, len(n.Children))
	for i, c := range n.Children {
		if c == nil {
			continue
		}
		children = append(children, buildNode(c, childXPath(n, i, xpath), depth+1, nb))
	}
	o.Set("children", children)
	return o
}
