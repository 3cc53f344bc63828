package core

import (
	"errors"
	"time"
)

// ErrNoPendingSession is returned by a control knob that answers a dialog
// when no session is waiting for it.
var ErrNoPendingSession = errors.New("soloapp: no session is waiting for this answer")

// orDefault returns d unless it is zero.
func OrDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
