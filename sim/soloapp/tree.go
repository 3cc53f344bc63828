package soloapp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// flatNode is a node with its SoloPi xpath and depth (root = 1).
type flatNode struct {
	n     *Node
	xpath string
	depth int
}

// flatten walks n in pre-order. xpath is n's own xpath ("" for a root):
// class names with a 1-based index when several siblings share the class,
// starting with a single "/" like AccessibilityNodeTree.getXpath.
func flatten(n *Node, xpath string, depth int, out []flatNode) []flatNode {
	if n == nil {
		return out
	}
	if xpath == "" {
		xpath = "/" + n.ClassName
	}
	out = append(out, flatNode{n: n, xpath: xpath, depth: depth})
	for i, c := range n.Children {
		out = flatten(c, childXPath(n, i, xpath), depth+1, out)
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

// pageRoot is what SoloPi's accessibility tree provider returns: one window
// root, or a FakeNodeTree combining several windows (IME visible, …).
type pageRoot struct {
	roots []*Node
	fake  bool
}

func (r *pageRoot) pkg() string {
	if r == nil || r.fake || len(r.roots) == 0 {
		return ""
	}
	return r.roots[0].PackageName
}

// readRoot builds the current root from the phone's windows. ignoreSoloPi
// drops windows whose root package is SoloPi's, as the provider the Agent
// uses does (docs/device-protocol.md#known-device-quirks). The status bar is
// a root only when nothing else is visible (for example while SoloPi's own
// activity covers the screen).
func (a *appCore) readRoot(ignoreSoloPi bool) *pageRoot {
	fg, _ := a.phone.Foreground()
	var content []*Node
	var bar *Node
	for _, w := range a.phone.Windows() {
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
		if ignoreSoloPi && pkg == a.cfg.Package {
			continue
		}
		content = append(content, w.Root)
	}
	switch {
	case len(content) == 1:
		return &pageRoot{roots: content}
	case len(content) > 1:
		return &pageRoot{roots: content, fake: true}
	case bar != nil:
		return &pageRoot{roots: []*Node{bar}}
	}
	return nil
}

// controllable applies the controllable-root rule
// (docs/device-protocol.md#observations-and-the-ui-tree): a non-empty package
// other than SoloPi, bounds present, at least a third of the screen in each
// dimension. FakeNodeTree roots have no package and are never controllable.
func (a *appCore) controllable(r *pageRoot) bool {
	if r == nil || r.fake || len(r.roots) == 0 {
		return false
	}
	root := r.roots[0]
	if root.PackageName == "" || root.PackageName == a.cfg.Package {
		return false
	}
	w, h := a.phone.ScreenSize()
	return root.Bounds.Width() >= max(1, w/3) && root.Bounds.Height() >= max(1, h/3)
}

// nodeSelector is the frame's snapshot of one node, used to re-locate it
// in a fresh tree at act time.
type nodeSelector struct {
	xpath, resourceID, text, description, id, className, packageName string
	depth                                                            int
	bounds                                                           Rect
}

func selectorOf(f flatNode) nodeSelector {
	return nodeSelector{xpath: f.xpath, resourceID: f.n.ResourceID, text: f.n.Text, description: f.n.Description,
		id: strconv.FormatInt(f.n.SourceID, 10), className: f.n.ClassName, packageName: f.n.PackageName,
		depth: f.depth, bounds: f.n.Bounds}
}

// locate finds the node matching every field of the selector in r.
func (s nodeSelector) locate(r *pageRoot) *Node {
	if r == nil {
		return nil
	}
	for _, root := range r.roots {
		for _, f := range flatten(root, "", 1, nil) {
			if selectorOf(f) == s {
				return f.n
			}
		}
	}
	return nil
}

// exportedPage is a page JSON with its hash and, when numbered, the frame.
type exportedPage struct {
	page  obj
	sha   string
	frame map[string]nodeSelector
	order []string
}

// exportPage builds the page JSON of an observation. The hash is over the
// compact, key-sorted JSON WITHOUT nodeIds; numbered adds "nodeId":"node-<n>"
// in pre-order and records the frame.
func exportPage(r *pageRoot, numbered bool) exportedPage {
	plain := buildPage(r, nil)
	sum := sha256.Sum256(encode(plain, true))
	out := exportedPage{page: plain, sha: hex.EncodeToString(sum[:])}
	if numbered {
		nb := &numbering{frame: map[string]nodeSelector{}}
		out.page = buildPage(r, nb)
		out.frame, out.order = nb.frame, nb.order
	}
	return out
}

type numbering struct {
	next  int
	frame map[string]nodeSelector
	order []string
}

func (nb *numbering) id() string {
	nb.next++
	id := "node-" + strconv.Itoa(nb.next)
	nb.order = append(nb.order, id)
	return id
}

func buildPage(r *pageRoot, nb *numbering) obj {
	if r == nil || len(r.roots) == 0 {
		return obj{}
	}
	if !r.fake {
		return buildNode(r.roots[0], "", 1, nb)
	}
	o := obj{}
	if nb != nil {
		o.set("nodeId", nb.id())
	}
	children := make([]any, 0, len(r.roots))
	for _, c := range r.roots {
		children = append(children, buildNode(c, "", 1, nb))
	}
	o.set("type", "FakeNodeTree")
	o.set("children", children)
	return o
}

func buildNode(n *Node, xpath string, depth int, nb *numbering) obj {
	if xpath == "" {
		xpath = "/" + n.ClassName
	}
	o := newObj("depth", depth, "className", n.ClassName, "nodeBound", rectValue(n.Bounds),
		"text", n.Text, "description", n.Description)
	if n.ResourceID != "" {
		o.set("resourceId", n.ResourceID)
	}
	o.set("id", strconv.FormatInt(n.SourceID, 10))
	o.set("packageName", n.PackageName)
	o.set("visible", n.Bounds.Width()*n.Bounds.Height() > 0)
	o.set("type", "AccessibilityNodeTree")
	if nb != nil {
		id := nb.id()
		nb.frame[id] = selectorOf(flatNode{n: n, xpath: xpath, depth: depth})
		o.set("nodeId", id)
	}
	children := make([]any, 0, len(n.Children))
	for i, c := range n.Children {
		if c == nil {
			continue
		}
		children = append(children, buildNode(c, childXPath(n, i, xpath), depth+1, nb))
	}
	o.set("children", children)
	return o
}
