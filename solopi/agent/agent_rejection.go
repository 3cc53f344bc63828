package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
)

// An Agent start travels as an intent, so the device's answer never
// reaches the query channel; SoloPi does log it, though: its scheme
// activity writes each resolver's result to logcat ("Receive callback:
// {errorCode=…, …}" in SoloPi 1.x, "scheme agent result: {json}" in the
// simulator). A start refused because another owner's session holds the
// device shows up there at once, where start-status would only ever say
// session_not_found until the ack timeout.

// rejectionLogLines is how much of the log tail is read per look.
const rejectionLogLines = 400

var callbackCode = lazyregexp.New(`\berrorCode=([a-z_]+)`)

// startRefusal is one logged answer that refuses an Agent start.
type startRefusal struct {
	line, code string
}

// startRefusals returns the logged start refusals, oldest first, or nil
// when the log cannot be read (the start then goes on as before: the log
// is a hint, never required).
func (c *AgentClient) startRefusals(ctx context.Context) []startRefusal {
	b, err := c.dev.Logcat(ctx, rejectionLogLines, 0)
	if err != nil {
		return nil
	}
	var out []startRefusal
	for _, line := range bytes.Split(b, []byte("\n")) {
		s := string(line)
		code := ""
		if _, rest, ok := strings.Cut(s, "scheme "+protocol.ActionAgent+" result: "); ok {
			var ans struct {
				ErrorCode string `json:"errorCode"`
			}
			if json.Unmarshal([]byte(rest), &ans) == nil {
				code = ans.ErrorCode
			}
		} else if _, rest, ok := strings.Cut(s, "Receive callback: "); ok {
			if m := callbackCode.FindStringSubmatch(rest); m != nil {
				code = m[1]
			}
		}
		// Only the two refusals of a start by someone else's hold:
		// another live session (checked before the lease) or the lease.
		if code == protocol.ErrLeaseConflict || code == protocol.ErrSessionConflict {
			out = append(out, startRefusal{line: strings.TrimSpace(s), code: code})
		}
	}
	return out
}

// newRefusal returns the first refusal logged after the ones in before.
func newRefusal(before, now []startRefusal) (startRefusal, bool) {
	seen := map[string]int{}
	for _, r := range before {
		seen[r.line]++
	}
	for _, r := range now {
		if seen[r.line] > 0 {
			seen[r.line]--
			continue
		}
		return r, true
	}
	return startRefusal{}, false
}
