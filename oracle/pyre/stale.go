package pyre

// sre restores the groups a failed alternative wrote only inside a
// greedy or lazy repeat (state->repeat set: BRANCH and ASSERT_NOT push
// and pop the marks). In a possessive repeat outside any such repeat, a
// group that an earlier iteration set and a later one entered on a path
// that failed keeps what that path wrote: (?:(a)|$)++\1 matches "a",
// since \1 then reads "". regexp2 always undoes a failed path, so when
// such a group is read (by a backreference or a conditional) the
// pattern is refused rather than answered differently.

const msgStaleGroup = "a group inside an alternative or a negative look-around of a possessive repeat, read by a backreference or a conditional, is not supported"

// checkStaleGroups panics with KindUnsupported when a group that sre can
// leave stale is read.
func checkStaleGroups(top *node) {
	stale := map[int]bool{}
	read := map[int]bool{}
	var walk func(n *node, possLoop, inRepeat, exposed bool)
	walk = func(n *node, possLoop, inRepeat, exposed bool) {
		if n == nil {
			return
		}
		switch n.kind {
		case kGroup:
			if n.num > 0 && exposed {
				stale[n.num] = true
			}
		case kRef, kCond:
			read[n.num] = true
		}
		p, r, e := possLoop, inRepeat, exposed
		switch {
		case n.kind == kRepeat && n.mode == possessive && n.max >= 2:
			p = true
		case n.kind == kRepeat:
			r = true
		case n.kind == kAlt, n.kind == kLook && n.neg:
			e = e || p && !r
		}
		for _, s := range n.subs {
			walk(s, p, r, e)
		}
	}
	walk(top, false, false, false)
	for g := range read {
		if stale[g] {
			panic(&Error{Kind: kindUnsupported, Msg: msgStaleGroup, Pos: -1})
		}
	}
}
