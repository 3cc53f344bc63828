package sim

import "sync"

// What a device received, for tests that check what a host sent and for
// tests that act at the moment it arrives (another client stepping in).

// eventLog records strings in order and tells its watchers about each.
type eventLog struct {
	mu       sync.Mutex
	entries  []string
	watchers map[int]func(string)
	nextID   int
}

func (l *eventLog) add(s string) {
	l.mu.Lock()
	l.entries = append(l.entries, s)
	watchers := make([]func(string), 0, len(l.watchers))
	for _, w := range l.watchers {
		watchers = append(watchers, w)
	}
	l.mu.Unlock()
	for _, w := range watchers {
		w(s)
	}
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

func (l *eventLog) watch(fn func(string)) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchers == nil {
		l.watchers = map[int]func(string){}
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

// Mutations lists the data URIs of every scheme intent sent to SoloPi's
// activities, in the order they arrived (lost ones included).
func (d *Device) Mutations() []string { return d.mutationLog.list() }

// OnMutation calls fn with the data URI of every scheme intent sent to
// SoloPi from now on, before SoloPi sees it; stop ends the calls.
func (d *Device) OnMutation(fn func(uri string)) (stop func()) { return d.mutationLog.watch(fn) }

// Commands lists every command run through the in-process front (Shell
// and Exec), in order.
func (d *Device) Commands() []string { return d.commandLog.list() }

// OnCommand calls fn with every command run through the in-process front
// from now on, before it runs; stop ends the calls.
func (d *Device) OnCommand(fn func(cmd string)) (stop func()) { return d.commandLog.watch(fn) }
