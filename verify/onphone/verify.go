package onphone

import (
	"context"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify/execution"
)

// Budgets are verify-run's device budgets, which a farm's shards share:
// whether to restart the app under test before each replay (nil: as the
// plan says) and the phone's timeouts.
type Budgets struct {
	RestartApp *bool
	Phone      Options
}

// SessionOpener opens the SoloPi session of the phone to verify on (with
// the foreground preserved: the app under test stays in front).
type SessionOpener func(ctx context.Context) (*device.Session, error)

// Verify is verify-run's one path to the phone, and a farm shard's: it
// checks every input (execution.Prepare, which runs o.Setup) before the
// phone is touched, then opens the session and runs the plan there.
// observe, when set, follows the segments (a status line); the replays
// inside them then report nothing of their own.
func Verify(ctx context.Context, open SessionOpener, o execution.RunOptions, b Budgets, observe func(execution.SegmentProgress)) (*execution.RunSummary, error) {
	return VerifyAcross(ctx, []SessionOpener{open}, o, b, observe)
}

// VerifyAcross is Verify on several phones (verify-run --devices): the
// inputs are checked once, a session is opened on every phone before
// anything runs, and independent scenarios run on different phones at
// once. The report is the one a single phone gives for the same outcomes.
func VerifyAcross(ctx context.Context, opens []SessionOpener, o execution.RunOptions, b Budgets, observe func(execution.SegmentProgress)) (*execution.RunSummary, error) {
	prep, err := execution.Prepare(o)
	if err != nil {
		return nil, err
	}
	var phones []execution.Ports
	var clk clock.Clock
	for _, open := range opens {
		sess, err := open(ctx)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		po := b.Phone
		po.Foreground = sess.Foreground
		if observe != nil || len(opens) > 1 {
			// Several phones' replays cannot share one terminal line.
			po.Progress = nil
		}
		phone := New(sess.Device, po)
		defer phone.Close()
		phones = append(phones, execution.Ports{Serial: sess.Device.Serial(), Runner: phone, Agent: phone, Screen: sess.Device.RecorderView()})
		if clk == nil {
			clk = sess.Device.Clock()
		}
	}
	return prep.Run(ctx, execution.Engine{Phones: phones, RestartApp: b.RestartApp, Clock: clk, Observe: observe})
}
