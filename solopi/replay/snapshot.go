package replay

import (
	"context"
	"maps"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ResultSnapshot is what result prints: the device's latest replay
// snapshot, echoed as it is, with the host's verdict over it.
type ResultSnapshot struct {
	device map[string]any
	// Error is the host's message; empty for a passed run and for a
	// failed one whose device error (in the snapshot) says why.
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
	Success   bool   `json:"success"`
}

// MarshalJSON lays the verdict over the snapshot, keys sorted.
func (r ResultSnapshot) MarshalJSON() ([]byte, error) {
	type fields ResultSnapshot // the typed keys, without this method
	return canonjson.Overlay{Base: r.device, Fields: fields(r)}.MarshalJSON()
}

// failure is the verdict the printed object reports.
func (r *ResultSnapshot) failure(k fault.Kind) *fault.Error {
	msg := r.Error
	if msg == "" {
		msg, _ = r.device["error"].(string)
	}
	return fault.New(k, r.ErrorCode, msg)
}

// Redact hides the case's secrets (RedactSnapshot). The host's message
// goes through it beside the device's: it decides, as the device's text
// does, whether the case is read for its secrets.
func (r *ResultSnapshot) Redact(ctx context.Context, d *device.Device, store SecretsStore) {
	m := r.device
	if r.Error != "" {
		m = maps.Clone(m)
		m["error"] = r.Error
	}
	red := RedactSnapshot(ctx, d, store, m)
	if r.Error != "" {
		r.Error, _ = red["error"].(string)
	}
	r.device = red
}

// CancelResult is what cancel prints: the run's final snapshot, echoed as
// it is, and what the cancel did.
type CancelResult struct {
	device     map[string]any
	CancelSent bool `json:"cancelSent"`
	// Idempotent marks a run that was already cancelled: nothing was sent.
	Idempotent bool `json:"idempotent,omitempty"`
	Success    bool `json:"success"`
}

// MarshalJSON lays the cancel's fields over the snapshot, keys sorted.
func (c CancelResult) MarshalJSON() ([]byte, error) {
	type fields CancelResult // the typed keys, without this method
	return canonjson.Overlay{Base: c.device, Fields: fields(c)}.MarshalJSON()
}

// Redact hides the case's secrets in the snapshot (RedactSnapshot); the
// cancel's own fields are flags.
func (c *CancelResult) Redact(ctx context.Context, d *device.Device, store SecretsStore) {
	c.device = RedactSnapshot(ctx, d, store, c.device)
}
