package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/solopi-dev/solopi/fault"
)

// sequenceGap is a hole in a timeline: After is the last sequence seen
// before the hole and Next the first one after it.
type sequenceGap struct {
	After   int64 `json:"after"`
	Next    int64 `json:"next"`
	Missing int64 `json:"missing"`
}

// TimelineCheck is what the host verifies about a session's events: the
// sequence starts at 1 and is contiguous, every event belongs to the
// session, and termination happened at most once, immediately followed by
// exactly one lease release.
type TimelineCheck struct {
	EventCount         int            `json:"eventCount"`
	FirstSequence      int64          `json:"firstSequence"`
	LastSequence       int64          `json:"lastSequence"`
	SequenceContiguous bool           `json:"sequenceContiguous"`
	StartsAtOne        bool           `json:"startsAtOne"`
	Gaps               []sequenceGap  `json:"gaps"`
	OutOfOrder         int            `json:"outOfOrder"`
	ForeignEvents      int            `json:"foreignEvents"`
	TerminalEvents     int            `json:"terminalEvents"`
	LeaseReleased      int            `json:"leaseReleasedEvents"`
	ReleaseFollows     bool           `json:"leaseReleaseFollowsTerminal"`
	TypeCounts         map[string]int `json:"typeCounts"`
	// Complete is true for the evidence of a finished session: contiguous
	// from 1, starting with session_started, no foreign events, exactly one
	// session_terminal immediately followed by exactly one lease_released.
	Complete bool `json:"complete"`
}

// checkTimeline checks events (in the order the device gave them) of the
// session sessionID ("" skips the ownership check).
func checkTimeline(events []AgentEvent, sessionID string) TimelineCheck {
	c := TimelineCheck{EventCount: len(events), SequenceContiguous: true, Gaps: []sequenceGap{}, TypeCounts: map[string]int{}}
	for i, ev := range events {
		c.TypeCounts[ev.Type]++
		if sessionID != "" && ev.SessionID != sessionID {
			c.ForeignEvents++
		}
		switch ev.Type {
		case eventSessionTerminal:
			c.TerminalEvents++
			c.ReleaseFollows = i+1 < len(events) && events[i+1].Type == eventLeaseReleased
		case eventLeaseReleased:
			c.LeaseReleased++
		}
		if i == 0 {
			c.FirstSequence = ev.Sequence
			c.LastSequence = ev.Sequence
			continue
		}
		prev := events[i-1].Sequence
		switch {
		case ev.Sequence == prev+1:
		case ev.Sequence > prev+1:
			c.SequenceContiguous = false
			c.Gaps = append(c.Gaps, sequenceGap{After: prev, Next: ev.Sequence, Missing: ev.Sequence - prev - 1})
		default:
			c.SequenceContiguous = false
			c.OutOfOrder++
		}
		c.LastSequence = max(c.LastSequence, ev.Sequence)
	}
	c.StartsAtOne = len(events) > 0 && c.FirstSequence == 1
	if c.TerminalEvents == 0 {
		c.ReleaseFollows = false
	}
	c.Complete = c.StartsAtOne && c.SequenceContiguous && c.ForeignEvents == 0 &&
		events[0].Type == eventSessionStarted && c.TerminalEvents == 1 && c.LeaseReleased == 1 && c.ReleaseFollows
	return c
}

// parseTimelineJSONL parses timeline.jsonl (one event per line; a final
// line without a newline is accepted, blank lines are not).
func parseTimelineJSONL(r io.Reader) ([]AgentEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var out []AgentEvent
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			return out, fault.Newf(fault.Transport, fault.CodeProtocolContractViolation, "timeline.jsonl line %d is empty", line)
		}
		if !json.Valid(b) {
			return out, fault.Newf(fault.Transport, fault.CodeProtocolContractViolation, "timeline.jsonl line %d is not JSON", line)
		}
		ev, err := parseAgentEvent(append(json.RawMessage(nil), b...))
		if err != nil {
			return out, fmt.Errorf("timeline.jsonl line %d: %w", line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return out, fault.Wrap(fault.Transport, fault.CodeProtocolContractViolation, "timeline.jsonl could not be read", err)
	}
	return out, nil
}
