package verify

// newDocument wraps a tree built in a test; objects resolve in sorted key
// order.
func newDocument(tree any) *Document { return &Document{Tree: tree} }
