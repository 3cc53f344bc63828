package core

import (
	"github.com/solopi-dev/solopi/protocol"
)

// mutationStatus answers history's and plugin's receipt query.
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
		return append(E1(protocol.ErrReceiptNotFound, "Mutation receipt was not found"), Kv{"requestId", id})
	}
	return OK("requestId", id, "state", r.Get("state"), "mutation", r.Clone())
}

// checkRequestID validates a mutation's requestId (missing/invalid).
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
