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
func checkStaleGroups(top *seq) {
	stale := map[int]bool{}
	read := map[int]bool{}
	var walk func(s *seq, possLoop, inRepeat, exposed bool)
	walk = func(s *seq, possLoop, inRepeat, exposed bool) {
		if s == nil {
			return
		}
		for _, n := range s.items {
			switch n.op {
			case opSubpattern:
				if n.group > 0 && exposed {
					stale[n.group] = true
				}
			case opGroupRef, opGroupRefExists:
				read[n.group] = true
			}
			p, r, e := possLoop, inRepeat, exposed
			switch {
			case n.op == opRepeat && n.kind == possessive && n.max >= 2:
				p = true
			case n.op == opRepeat:
				r = true
			case n.op == opBranch, n.op == opAssert && n.negate:
				e = e || p && !r
			}
			for _, a := range n.alts {
				walk(a, p, r, e)
			}
		}
	}
	walk(top, false, false, false)
	for g := range read {
		if stale[g] {
			panic(&Error{Kind: KindUnsupported, Msg: msgStaleGroup, Pos: -1})
		}
	}
}
