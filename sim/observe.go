package sim

import (
	"net/url"
	"strings"
	"sync"
)

// What a device received and answered, for tests that check what a host
// sent and for tests that act at the moment something arrives (another
// client stepping in, an operator pressing Ctrl-C).

// logCap bounds what a device remembers: a long `sim serve` keeps the
// newest entries only.
const logCap = 4096

// eventLog records events in order (the newest logCap) and tells its
// watchers about each.
type eventLog[T any] struct {
	mu       sync.Mutex
	keep     bool
	entries  []T
	watchers map[int]func(T)
	nextID   int
}

func (l *eventLog[T]) add(e T) {
	l.mu.Lock()
	if l.keep {
		if len(l.entries) == logCap {
			l.entries = append(l.entries[:0], l.entries[1:]...)
		}
		l.entries = append(l.entries, e)
	}
	watchers := make([]func(T), 0, len(l.watchers))
	for _, w := range l.watchers {
		watchers = append(watchers, w)
	}
	l.mu.Unlock()
	for _, w := range watchers {
		w(e)
	}
}

func (l *eventLog[T]) watched() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.watchers) > 0
}

func (l *eventLog[T]) list() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.entries...)
}

func (l *eventLog[T]) watch(fn func(T)) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchers == nil {
		l.watchers = map[int]func(T){}
	}
	id := l.nextID
	l.nextID++
	l.watchers[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.watchers, id)
	}
}

// Answer is one answer of SoloPi's query channel, as the host receives it
// (after any AnswerFault).
type Answer struct {
	Action string
	Query  url.Values
	Body   []byte
}

// Mutations lists the data URIs of the scheme intents sent to SoloPi's
// activities (the newest 4096), in the order they arrived, lost ones
// included.
func (d *Device) Mutations() []string { return d.mutationLog.list() }

// MutationsWith lists the received data URIs that contain every part (raw,
// as sent: query values stay percent-encoded).
func (d *Device) MutationsWith(parts ...string) []string {
	var out []string
	for _, m := range d.Mutations() {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(m, p)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// OnMutation calls fn with the data URI of every scheme intent sent to
// SoloPi from now on, before SoloPi sees it; stop ends the calls.
func (d *Device) OnMutation(fn func(uri string)) (stop func()) { return d.mutationLog.watch(fn) }

// Commands lists the commands run through the in-process front (Shell and
// Exec; the newest 4096), in order.
func (d *Device) Commands() []string { return d.commandLog.list() }

// OnCommand calls fn with every command run through the in-process front
// from now on, before it runs; stop ends the calls.
func (d *Device) OnCommand(fn func(cmd string)) (stop func()) { return d.commandLog.watch(fn) }

// OnAnswer calls fn with every answer of the query channel from now on,
// before the host receives it: what fn changes on the device is in place
// when the host reads the answer. stop ends the calls.
func (d *Device) OnAnswer(fn func(Answer)) (stop func()) { return d.answers.log.watch(fn) }
