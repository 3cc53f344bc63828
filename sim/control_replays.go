package sim

import "fmt"

// failReplays is the fail-replays fault: {"caseName": s, "count": n} makes
// the next n replays of that case on the device fail at their first step
// with "injected failure" (count 0 clears it). It answers the count now due.
func failReplays(f *Farm, d *Device, b []byte) (map[string]any, error) {
	var in struct {
		CaseName string
		Count    *int
	}
	if err := decode(b, &in); err != nil {
		return nil, err
	}
	if in.Count == nil {
		return nil, fmt.Errorf("fail-replays needs a count")
	}
	if err := d.App.FailReplays(in.CaseName, *in.Count); err != nil {
		return nil, err
	}
	return map[string]any{"caseName": in.CaseName, "pending": d.App.PendingReplayFailures(in.CaseName)}, nil
}
