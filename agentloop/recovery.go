package agentloop

import "github.com/solopi-dev/solopi/agentloop/action"

// recovery is what the runtime does after a failed step: one of exactly five
// outcomes, chosen by the runtime, never by the model.
type recovery string

// The five recovery outcomes.
const (
	recoverReplan    recovery = "replan"
	recoverReobserve recovery = "reobserve"
	recoverRetrySafe recovery = "retry_safe_action"
	recoverTakeover  recovery = "ask_human_takeover"
	recoverTerminate recovery = "terminate"
)

// Failure classes. Hard classes consume the recovery budget; soft ones
// (stale screens, failed completion reviews, zero-touch rejections) are
// counted separately and never do.
const (
	failProtocol    = "protocol"
	failDevice      = "device"
	failObservation = "observation"
	failModel       = "model"

	softStale      = "stale_screen"
	softCompletion = "completion_review"
	softRejected   = "rejected_action"
	softUnmappable = "not_mappable"
)

// autoRetryable lists the only actions replayed automatically: a bounded
// Wait and Home are idempotent. Tap, Type, Swipe, Back and the others are
// never replayed blindly; the model decides again from a new screenshot.
func autoRetryable(name string) bool { return name == action.Wait || name == action.Home }

// decideRecovery maps a structured failure to an outcome. Only the error
// class, the name type and the counts matter: no package, app alias or
// hidden system state takes part.
func decideRecovery(class, name string, count, budget int, retriedAlready bool) recovery {
	if count >= budget {
		return recoverTerminate
	}
	switch class {
	case failObservation:
		return recoverReobserve
	case failDevice:
		if autoRetryable(name) && !retriedAlready {
			return recoverRetrySafe
		}
		return recoverReplan
	case failProtocol, failModel:
		return recoverReplan
	}
	return recoverReplan
}
