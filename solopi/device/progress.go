package device

import "fmt"

// Event is one progress report of a long operation. Libraries report
// events; cmd/solopi decides how (and whether) to render them: one line per
// event on a terminal today, one updating line later.
type Event struct {
	// Phase names the step: "bootstrap", "preflight", "start", "claimed",
	// "run", "session", "waiting-for-user", "adb-connect".
	Phase string
	// Message is the event as one human line.
	Message string
	// Index and Total place a sub-run in its batch (1-based; 0 outside a
	// batch).
	Index, Total int
	// Case is the case being replayed, RunID its device run, State the
	// last state the device published.
	Case, RunID, State string
}

// Progress receives events. A nil Progress ignores them.
type Progress func(Event)

// Report sends e to p (nothing when p is nil).
func (p Progress) Report(e Event) {
	if p != nil {
		p(e)
	}
}

// Reportf sends an event of phase whose message is formatted.
func (p Progress) Reportf(phase, format string, args ...any) {
	if p != nil {
		p(Event{Phase: phase, Message: fmt.Sprintf(format, args...)})
	}
}
