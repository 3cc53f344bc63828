package onphone

import (
	"context"

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
	prep, err := execution.Prepare(o)
	if err != nil {
		return nil, err
	}
	sess, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	po := b.Phone
	po.Foreground = sess.Foreground
	if observe != nil {
		po.Progress = nil
	}
	phone := New(sess.Device, po)
	defer phone.Close()
	return prep.Run(ctx, execution.Engine{Runner: phone, Agent: phone, RestartApp: b.RestartApp,
		Clock: sess.Device.Clock(), Observe: observe})
}
