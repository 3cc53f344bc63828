package agentloop

import "github.com/solopi-dev/solopi/agentloop/action"

// Recovery is what the runtime does after a failed step: one of exactly five
// outcomes, chosen by the runtime, never by the model.
type Recovery string

// The five recovery outcomes.
const (
	RecoverReplan    Recovery = "replan"
	RecoverReobserve Recovery = "reobserve"
	RecoverRetrySafe Recovery = "retry_safe_action"
	RecoverTakeover  Recovery = "ask_human_takeover"
	RecoverTerminate Recovery = "terminate"
)

// Failure classes. Hard classes consume the recovery budget; soft ones
// (stale screens, failed completion reviews, zero-touch rejections) are
// counted separately and never do.
const (
	FailProtocol    = "protocol"
	FailDevice      = "device"
	FailObservation = "observation"
	FailModel       = "model"

	SoftStale      = "stale_screen"
	SoftCompletion = "completion_review"
	SoftRejected   = "rejected_action"
	SoftUnmappable = "not_mappable"
)

// autoRetryable lists the only actions replayed automatically: a bounded
// Wait and Home are idempotent. Tap, Type, Swipe, Back and the others are
// never replayed blindly; the model decides again from a new screenshot.
func autoRetryable(name string) bool { return name == action.Wait || name == action.Home }

// decideRecovery maps a structured failure to an outcome. Only the error
// class, the name type and the counts matter: no package, app alias or
// hidden system state takes part.
func decideRecovery(class, name string, count, budget int, retriedAlready bool) Recovery {
	if count >= budget {
		return RecoverTerminate
	}
	switch class {
	case FailObservation:
		return RecoverReobserve
	case FailDevice:
		if autoRetryable(name) && !retriedAlready {
			return RecoverRetrySafe
		}
		return RecoverReplan
	case FailProtocol, FailModel:
		return RecoverReplan
	}
	return RecoverReplan
}
