package pyre

// widths computes how many characters an item can match, at least and at
// most: a look-behind must have one fixed width. A backreference is as
// wide as its group. The arithmetic saturates far above anything sre can
// encode, so a width too large to look behind stays too large.
type widths struct {
	byNum []*node
	memo  map[*node][2]uint64
}

const widthCap = 1 << 62

func satAdd(a, b uint64) uint64 { return min(a+b, widthCap) }

func satMul(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > widthCap/b {
		return widthCap
	}
	return min(a*b, widthCap)
}

func (w *widths) of(n *node) [2]uint64 {
	if n == nil {
		return [2]uint64{}
	}
	if v, ok := w.memo[n]; ok {
		return v
	}
	var v [2]uint64
	switch n.kind {
	case kChar:
		v = [2]uint64{1, 1}
	case kCat:
		for _, s := range n.subs {
			x := w.of(s)
			v = [2]uint64{satAdd(v[0], x[0]), satAdd(v[1], x[1])}
		}
	case kAlt:
		v = [2]uint64{widthCap, 0}
		for _, s := range n.subs {
			x := w.of(s)
			v = [2]uint64{min(v[0], x[0]), max(v[1], x[1])}
		}
	case kGroup, kAtomic:
		v = w.of(n.subs[0])
	case kRepeat:
		x := w.of(n.subs[0])
		v = [2]uint64{satMul(x[0], uint64(n.min)), satMul(x[1], uint64(n.max))}
	case kRef:
		v = w.of(w.byNum[n.num])
	case kCond:
		// Without a "no" branch the conditional can match nothing.
		yes, no := w.of(n.subs[0]), w.of(n.subs[1])
		v = [2]uint64{min(yes[0], no[0]), max(yes[1], no[1])}
	}
	if w.memo == nil {
		w.memo = map[*node][2]uint64{}
	}
	w.memo[n] = v
	return v
}
