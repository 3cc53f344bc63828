package inspector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image/png"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// Snapshot is one look at the phone: its screen and the accessibility
// tree SoloPi reads for it (the tree `solopi inspect` prints), flattened
// in pre-order so that the page names a node by its index.
type Snapshot struct {
	Seq    int    `json:"seq"`
	SHA256 string `json:"sha256"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Nodes  []Node `json:"nodes"`
	png    []byte
}

// Node is one node of a snapshot's tree.
type Node struct {
	Index       int    `json:"index"`
	Parent      int    `json:"parent"` // -1 for the root
	Depth       int    `json:"depth"`
	ClassName   string `json:"className,omitempty"`
	Text        string `json:"text,omitempty"`
	Description string `json:"description,omitempty"`
	ResourceID  string `json:"resourceId,omitempty"`
	PackageName string `json:"packageName,omitempty"`
	// SourceID is the device's AccessibilityNodeInfo id ("id" of the tree).
	SourceID string `json:"id,omitempty"`
	// Bounds are [left, top, right, bottom] in screen pixels; nil when the
	// device gave none.
	Bounds *[4]int `json:"bounds,omitempty"`
}

// capture takes one snapshot: the tree first, then the screen, so that
// the picture is never older than the nodes drawn over it.
func capture(ctx context.Context, s *device.Session) (*Snapshot, error) {
	m, err := readiness.Inspect(ctx, s)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(m["page"])
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeInternalError, "the page tree cannot be re-encoded", err)
	}
	var root agent.UINode
	if err := canonjson.Unmarshal(raw, &root); err != nil {
		return nil, device.ContractError("SoloPi's page tree is not a node tree", map[string]any{"error": err.Error()})
	}
	img, err := s.Device.Screencap(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, device.ContractError("the screenshot is not a PNG", map[string]any{"error": err.Error(), "sizeBytes": len(img)})
	}
	sum := sha256.Sum256(img)
	return &Snapshot{SHA256: hex.EncodeToString(sum[:]), Width: cfg.Width, Height: cfg.Height, Nodes: flatten(&root), png: img}, nil
}

// flatten lists the tree in pre-order.
func flatten(root *agent.UINode) []Node {
	var out []Node
	var walk func(n *agent.UINode, parent, depth int)
	walk = func(n *agent.UINode, parent, depth int) {
		if n == nil {
			return
		}
		i := len(out)
		nd := Node{Index: i, Parent: parent, Depth: depth, ClassName: n.ClassName, Text: n.Text, Description: n.Description,
			ResourceID: n.ResourceID, PackageName: n.PackageName, SourceID: n.ID}
		if b := n.Bounds; b != nil {
			nd.Bounds = &[4]int{b.Left, b.Top, b.Right, b.Bottom}
		}
		out = append(out, nd)
		for _, c := range n.Children {
			walk(c, i, depth+1)
		}
	}
	walk(root, -1, 0)
	return out
}
