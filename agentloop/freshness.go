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
	RegionMeanLimit      = 0.025
	RegionChangedLimit   = 0.15
	ReplaceMeanLimit     = 0.15
	ReplaceChangedLimit  = 0.80
	localStableLimit     = 0.05
	DefaultFreshRechecks = 2
	DefaultRecheckDelay  = 150 * time.Millisecond
)

// Freshness verdicts.
const (
	FreshOK              = "fresh"
	StaleDisplay         = "display_changed"
	StaleReplaced        = "full_screen_replaced"
	StaleTarget          = "target_region_changed"
	StaleDeviceRejection = "device_stale_observation"
)

// FreshnessResult is the precondition evidence of one coordinate action.
type FreshnessResult struct {
	Verdict  string      `json:"verdict"`
	Global   DiffStats   `json:"global"`
	Regions  []DiffStats `json:"target_regions"`
	Rechecks int         `json:"rechecks"`
	// Screen is the observation the action may be dispatched on (fresh)
	// or the newest one to replan from (stale).
	Screen *Screen `json:"-"`
}

// Fresh reports whether the action may be dispatched.
func (f FreshnessResult) Fresh() bool { return f.Verdict == FreshOK }

// compareFresh applies the strict checks of planned against now.
func compareFresh(planned, now *Screen, targets [][2]int) FreshnessResult {
	res := FreshnessResult{Screen: now}
	if planned.Width() != now.Width() || planned.Height() != now.Height() {
		res.Verdict = StaleDisplay
		return res
	}
	res.Global = CompareContent(planned, now)
	if res.Global.MeanDiff > ReplaceMeanLimit && res.Global.ChangedRatio > ReplaceChangedLimit {
		res.Verdict = StaleReplaced
		return res
	}
	res.Verdict = FreshOK
	for _, t := range targets {
		r := TargetRegion(t[0], t[1], now.Width(), now.Height()).Intersect(ContentRect(now.Width(), now.Height()))
		if r.Empty() {
			// A target on the status or navigation bar is judged on its
			// uncropped neighbourhood.
			r = TargetRegion(t[0], t[1], now.Width(), now.Height())
		}
		d := CompareRegion(planned.Image, now.Image, r)
		res.Regions = append(res.Regions, d)
		if d.MeanDiff > RegionMeanLimit || d.ChangedRatio > RegionChangedLimit {
			res.Verdict = StaleTarget
		}
	}
	return res
}

// checkFreshness re-observes before dispatch. When the whole screen is
// stable and only the target region moved (a local animation), it
// re-observes up to rechecks more times; the first frame that meets the
// strict checks is the one the action is dispatched on.
func checkFreshness(ctx context.Context, clk clock.Clock, dev Device, planned *Screen, targets [][2]int, rechecks int, delay time.Duration) (FreshnessResult, error) {
	now, err := dev.Observe(ctx)
	if err != nil {
		return FreshnessResult{}, err
	}
	res := compareFresh(planned, now, targets)
	for i := 0; i < rechecks && res.Verdict == StaleTarget && res.Global.ChangedRatio < localStableLimit; i++ {
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
	VerifyInconclusive = "inconclusive"
	VerifyFailed       = "failed"
	VerifySkipped      = "skipped"
)

// Verification keeps command success, observable effect and semantics
// apart: a changed screen is not proof that the right thing happened.
type Verification struct {
	Status           string    `json:"status"`
	CommandSuccess   bool      `json:"command_success"`
	ObservableEffect string    `json:"observable_effect"`
	Diff             DiffStats `json:"diff"`
	Warning          string    `json:"warning,omitempty"`
}

// verifyEffect judges the pixels after an action: coordinate and text actions
// should change the screen, Wait and Home need a trusted observation, Note
// and finish need nothing.
func verifyEffect(name string, before, after *Screen) Verification {
	v := Verification{CommandSuccess: true}
	if after == nil || after.Unobservable() {
		v.Status, v.ObservableEffect = VerifyInconclusive, "unobservable"
		v.Warning = "the screen after the name cannot be observed (black or protected)"
		return v
	}
	v.Diff = CompareContent(before, after)
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
			v.Status, v.ObservableEffect = VerifyInconclusive, "unchanged"
			v.Warning = "the command was dispatched but the screen did not visibly change"
		}
	}
	return v
}
