package core

// Receipts of the mutation resolvers (history, plugin) and the helpers
// every resolver uses to answer and wait.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// MaintenanceLocked reports whether plugin maintenance blocks new runtime
// sessions.
func (p *Process) MaintenanceLocked() bool { return p.Lease.maintenance }

// SleepDevice waits d of device time on the process context; false when
// the process died (restart) meanwhile.
func (a *App) SleepDevice(p *Process, d time.Duration) bool {
	return a.Clk.Sleep(p.Ctx, d) == nil
}

// current reports whether p is still the running process (late callbacks
// of a dead process must not touch anything).
func (a *App) CurrentLocked(p *Process) bool { return a.P == p }

// PermissionDialogLocked is how long a permission request takes to answer
// (the callback arrives about 10 ms after the dialog closes).
func (a *App) PermissionDialogLocked() time.Duration {
	if d := a.Faults.PermDialog; d > 0 {
		return d
	}
	return 10 * time.Millisecond
}

// MissingPermissionsLocked lists the named permissions that are denied.
func (a *App) MissingPermissionsLocked(names ...string) []string {
	var out []string
	for _, n := range names {
		if !a.PermissionLocked(n) {
			out = append(out, n)
		}
	}
	return out
}

// ShellForm replaces the /storage/emulated/0 prefix with /sdcard
// (docs/device-protocol.md#device-files).
func ShellForm(p string) string {
	p = NormPath(p)
	if p == "/storage/emulated/0" || strings.HasPrefix(p, "/storage/emulated/0/") {
		return "/sdcard" + strings.TrimPrefix(p, "/storage/emulated/0")
	}
	return p
}

// Sha256Hex is the lowercase hex SHA-256 of s.
func Sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// JavaParseInt is Integer.parseInt (an int32 with optional sign).
func JavaParseInt(s string) (int64, bool) {
	n, ok := JavaParseLong(s)
	if !ok || n != int64(int32(n)) {
		return 0, false
	}
	return n, true
}

// ReceiptLRU is an access-order LRU of receipts (Java LinkedHashMap with
// accessOrder=true and removeEldestEntry), as the video, history and plugin
// resolvers keep them. pinned keys are never evicted.
type ReceiptLRU struct {
	max   int
	order []string
	M     map[string]Obj
}

func NewReceiptLRU(n int) *ReceiptLRU { return &ReceiptLRU{max: n, M: map[string]Obj{}} }

func (l *ReceiptLRU) touch(k string) {
	for i, o := range l.order {
		if o == k {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append(l.order, k)
}

// Get returns the receipt and refreshes its access order.
func (l *ReceiptLRU) Get(k string) (Obj, bool) {
	o, found := l.M[k]
	if found {
		l.touch(k)
	}
	return o, found
}

// Put stores a receipt and evicts the eldest unpinned entries beyond max.
func (l *ReceiptLRU) Put(k string, o Obj, pinned string) {
	l.M[k] = o
	l.touch(k)
	for len(l.order) > l.max {
		evicted := false
		for i, e := range l.order {
			if e != pinned && e != k {
				delete(l.M, e)
				l.order = append(l.order[:i], l.order[i+1:]...)
				evicted = true
				break
			}
		}
		if !evicted {
			return
		}
	}
}

// Each visits every receipt (no access-order change).
func (l *ReceiptLRU) Each(fn func(k string, o Obj)) {
	for _, k := range l.order {
		fn(k, l.M[k])
	}
}

// MutationStatus answers history's and plugin's receipt query.
func (a *App) MutationStatus(p *Process, q Params, store *ReceiptLRU) Obj {
	id, present := q["requestId"]
	if !present || id == "" {
		return E1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	if !protocol.ValidID(id, 128) {
		return E1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r, found := store.Get(id)
	if !found {
		return append(E1(protocol.ErrReceiptNotFound, "Mutation receipt was not found"), KV{K: "requestId", V: id})
	}
	return OK("requestId", id, "state", r.Get("state"), "mutation", r.Clone())
}

// CheckRequestID validates a mutation's requestId (missing/invalid).
func CheckRequestID(q Params) Obj {
	id := q["requestId"]
	if id == "" {
		return E1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	if !protocol.ValidID(id, 128) {
		return E1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	return nil
}

// ErrNoPendingSession is returned by a control knob that answers a dialog
// when no session is waiting for it.
var ErrNoPendingSession = errors.New("soloapp: no session is waiting for this answer")

// OrDefault returns d unless it is zero.
func OrDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
