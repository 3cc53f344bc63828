package agentloop

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/clock"
)

// Freshness thresholds: how much the screen, and the region around the
// target, may differ from the observation the plan was made on before an
// action is dispatched. They are never relaxed during the re-checks: a
// re-check only gives a passing animation another chance to meet the same
// bar.
const (
	regionMeanLimit      = 0.025
	regionChangedLimit   = 0.15
	replaceMeanLimit     = 0.15
	replaceChangedLimit  = 0.80
	localStableLimit     = 0.05
	defaultFreshRechecks = 2
	defaultRecheckDelay  = 150 * time.Millisecond
)

// Freshness verdicts.
const (
	freshOK              = "fresh"
	staleDisplay         = "display_changed"
	staleReplaced        = "full_screen_replaced"
	staleTarget          = "target_region_changed"
	staleDeviceRejection = "device_stale_observation"
)

// freshnessResult is the precondition evidence of one coordinate action.
type freshnessResult struct {
	Verdict  string      `json:"verdict"`
	Global   diffStats   `json:"global"`
	Regions  []diffStats `json:"target_regions"`
	Rechecks int         `json:"rechecks"`
	// Screen is the observation the action may be dispatched on (fresh)
	// or the newest one to replan from (stale).
	Screen *Screen `json:"-"`
}

// Fresh reports whether the action may be dispatched.
func (f freshnessResult) Fresh() bool { return f.Verdict == freshOK }

// compareFresh applies the strict checks of planned against now.
func compareFresh(planned, now *Screen, targets [][2]int) freshnessResult {
	res := freshnessResult{Screen: now}
	if planned.Width() != now.Width() || planned.Height() != now.Height() {
		res.Verdict = staleDisplay
		return res
	}
	res.Global = compareContent(planned, now)
	if res.Global.MeanDiff > replaceMeanLimit && res.Global.ChangedRatio > replaceChangedLimit {
		res.Verdict = staleReplaced
		return res
	}
	res.Verdict = freshOK
	for _, t := range targets {
		r := targetRegion(t[0], t[1], now.Width(), now.Height()).Intersect(contentRect(now.Width(), now.Height()))
		if r.Empty() {
			// A target on the status or navigation bar is judged on its
			// uncropped neighbourhood.
			r = targetRegion(t[0], t[1], now.Width(), now.Height())
		}
		d := compareRegion(planned.Image, now.Image, r)
		res.Regions = append(res.Regions, d)
		if d.MeanDiff > regionMeanLimit || d.ChangedRatio > regionChangedLimit {
			res.Verdict = staleTarget
		}
	}
	return res
}

// checkFreshness re-observes before dispatch. When the whole screen is
// stable and only the target region moved (a local animation), it
// re-observes up to rechecks more times; the first frame that meets the
// strict checks is the one the action is dispatched on.
func checkFreshness(ctx context.Context, clk clock.Clock, dev Device, planned *Screen, targets [][2]int, rechecks int, delay time.Duration) (freshnessResult, error) {
	now, err := dev.Observe(ctx)
	if err != nil {
		return freshnessResult{}, err
	}
	res := compareFresh(planned, now, targets)
	for i := 0; i < rechecks && res.Verdict == staleTarget && res.Global.ChangedRatio < localStableLimit; i++ {
		if err := clk.Sleep(ctx, delay); err != nil {
			return res, err
		}
		now, err = dev.Observe(ctx)
		if err != nil {
			return res, err
		}
		n := compareFresh(planned, now, targets)
		n.Rechecks = i + 1
		res = n
	}
	return res, nil
}

// targetsOf lists the device points an action depends on.
func targetsOf(cmd Command) [][2]int {
	var out [][2]int
	for _, p := range []*coord.MappedPoint{cmd.Point, cmd.Start, cmd.End} {
		if p != nil {
			out = append(out, p.Device)
		}
	}
	return out
}

// Verification statuses.
const (
	VerifyPassed       = "passed"
	verifyInconclusive = "inconclusive"
	VerifyFailed       = "failed"
	verifySkipped      = "skipped"
)

// verification keeps command success, observable effect and semantics
// apart: a changed screen is not proof that the right thing happened.
type verification struct {
	Status           string    `json:"status"`
	CommandSuccess   bool      `json:"command_success"`
	ObservableEffect string    `json:"observable_effect"`
	Diff             diffStats `json:"diff"`
	Warning          string    `json:"warning,omitempty"`
}

// verifyEffect judges the pixels after an action: coordinate and text actions
// should change the screen, Wait and Home need a trusted observation, Note
// and finish need nothing.
func verifyEffect(name string, before, after *Screen) verification {
	v := verification{CommandSuccess: true}
	if after == nil || after.Unobservable() {
		v.Status, v.ObservableEffect = verifyInconclusive, "unobservable"
		v.Warning = "the screen after the name cannot be observed (black or protected)"
		return v
	}
	v.Diff = compareContent(before, after)
	changed := meaningfulChange(v.Diff)
	switch name {
	case action.Wait, action.Home:
		v.Status = VerifyPassed
		v.ObservableEffect = map[bool]string{true: "changed", false: "unchanged"}[changed]
	default:
		if changed {
			v.Status, v.ObservableEffect = VerifyPassed, "changed"
		} else {
			// A dispatched command without measurable change is a
			// non-blocking warning, never an automatic retry: the tap may
			// have worked on something invisible, and replaying it could
			// do it twice.
			v.Status, v.ObservableEffect = verifyInconclusive, "unchanged"
			v.Warning = "the command was dispatched but the screen did not visibly change"
		}
	}
	return v
}
