// Package recent keeps the last few values computed from large inputs: the
// screens a simulated phone rendered, the captures the Agent runtime
// decoded, the images the fake model read. Such inputs repeat in runs (the
// same screen before every step) and are costly to process again; a short
// list searched from the newest is all the memory a repeat needs.
package recent

import "sync"

// List remembers the values of its last Size keys, safe for concurrent use.
// The zero List remembers nothing until Size is set.
type List[K comparable, V any] struct {
	Size    int
	mu      sync.Mutex
	entries []entry[K, V] // most recent last
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// Get returns the value of key and marks it the most recent.
func (l *List[K, V]) Get(key K) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.entries) - 1; i >= 0; i-- {
		if e := l.entries[i]; e.key == key {
			l.entries = append(append(l.entries[:i:i], l.entries[i+1:]...), e)
			return e.val, true
		}
	}
	var zero V
	return zero, false
}

// Put remembers val under key as the most recent, forgetting the oldest
// key beyond Size.
func (l *List[K, V]) Put(key K, val V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.entries {
		if e.key == key {
			l.entries = append(l.entries[:i], l.entries[i+1:]...)
			break
		}
	}
	if l.Size <= 0 {
		return
	}
	if len(l.entries) >= l.Size {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-l.Size+1:]...)
	}
	l.entries = append(l.entries, entry[K, V]{key, val})
}

// Find returns the most recent value match accepts.
func (l *List[K, V]) Find(match func(V) bool) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.entries) - 1; i >= 0; i-- {
		if match(l.entries[i].val) {
			return l.entries[i].val, true
		}
	}
	var zero V
	return zero, false
}
