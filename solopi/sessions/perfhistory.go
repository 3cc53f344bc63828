package sessions

// Performance history (docs/device-protocol.md): perf-history-list, -get,
// -delete. Ids are opaque digests; a delete names the id twice
// (confirmId) and follows the receipt of a fresh requestId only.

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// CheckPerfHistoryID is the local rule for --id (exit 3).
func CheckPerfHistoryID(id string) error {
	if !protocol.ValidPrefixedHex(id, "performance-", 64) {
		return fault.Usage(fault.CodeInvalidHistoryID, "--id must be a performance history id: performance- followed by 64 lowercase hex digits").With("id", id).With("kind", "performance")
	}
	return nil
}

// historyQuery runs a history query and returns the object, refusing a
// device success:false with its own errorCode (exit 2).
func historyQuery(ctx context.Context, d *device.Device, p device.Params, what string) (device.WireObject, error) {
	o, err := d.QuerySucceeded(ctx, protocol.ActionHistory, p, "the "+what+" has no boolean success", "the device refused the "+what)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// ListPerfHistory lists performance records and checks the list contract:
// kind, returned == len(records) <= min(total, limit), truncated ==
// (returned < total), every record a performance id.
func ListPerfHistory(ctx context.Context, d *device.Device, limit int) (map[string]any, error) {
	if limit < 1 || limit > 500 {
		return nil, fault.Usage(fault.CodeInvalidLimit, "--limit must be between 1 and 500").With("limit", limit)
	}
	o, err := historyQuery(ctx, d, device.P(protocol.ParamAction, "listPerformance", protocol.ParamLimit, strconv.Itoa(limit)), "performance history list")
	if err != nil {
		return nil, err
	}
	var v device.Violations
	kind, _ := o.Text("kind")
	v.Check(kind == "performance", "kind %q is not performance", kind)
	records, ok := o["records"].([]any)
	v.Check(ok, "records is not an array")
	returned, rok := o.Integer("returned")
	total, tok := o.Integer("total")
	truncated, trok := o.Flag("truncated")
	v.Check(rok && tok && trok, "returned, total or truncated is missing")
	v.Check(returned == int64(len(records)) && returned <= total && returned <= int64(limit) && truncated == (returned < total),
		"the list counts are inconsistent (returned %d, records %d, total %d, limit %d, truncated %v)", returned, len(records), total, limit, truncated)
	for i, r := range records {
		ro, _ := r.(map[string]any)
		k, _ := ro["kind"].(string)
		id, _ := ro["id"].(string)
		v.Check(k == "performance" && protocol.ValidPrefixedHex(id, "performance-", 64), "record %d is not a performance record with a valid id", i)
	}
	if err := v.Err("performance history list", o); err != nil {
		return nil, err
	}
	return o.Clone(), nil
}

// GetPerfHistory reads one performance record; kind and id must echo.
func GetPerfHistory(ctx context.Context, d *device.Device, id string) (map[string]any, error) {
	if err := CheckPerfHistoryID(id); err != nil {
		return nil, err
	}
	o, err := historyQuery(ctx, d, device.P(protocol.ParamAction, "getPerformance", protocol.ParamID, id), "performance history record")
	if err != nil {
		if e := fault.From(err); e.Kind == fault.Failed {
			e.With("id", id)
		}
		return nil, err
	}
	kind, _ := o.Text("kind")
	gotID, _ := o.Text("id")
	if kind != "performance" || gotID != id {
		return nil, device.ContractError("the history record does not echo the requested kind and id", map[string]any(o))
	}
	if o.Has("files") {
		if _, ok := o["files"].([]any); !ok {
			return nil, device.ContractError("the history record's files is not an array", map[string]any(o))
		}
	}
	return o.Clone(), nil
}

// validatePerfDeleteReceipt is the strict mutationStatus validator.
func validatePerfDeleteReceipt(o device.WireObject, requestID, id string) error {
	var v device.Violations
	rid, _ := o.Text("requestId")
	s := device.StateOf(o)
	m := protocol.HistoryDelete()
	v.Check(rid == requestID, "requestId %q is not ours", rid)
	v.Check(m.Has(s) && s != protocol.ReceiptNew, "state %q is not a history mutation state", s)
	mo, ok := o["mutation"].(map[string]any)
	if !ok {
		v.Add("the receipt has no mutation object")
		return v.Err("history mutation receipt", o)
	}
	mut := device.WireObject(mo)
	mrid, _ := mut.Text("requestId")
	kind, _ := mut.Text("kind")
	act, _ := mut.Text("action")
	mid, _ := mut.Text("id")
	v.Check(mrid == requestID && kind == "performance" && act == "deletePerformance" && mid == id && device.StateOf(mut) == s,
		"the mutation does not match our requestId, kind, action, id and state")
	success, sok := mut.Flag("success")
	v.Check(sok, "mutation.success is not a boolean")
	deleted, _ := mut.Flag("deleted")
	switch s {
	case protocol.MutationCompleted:
		v.Check(success && deleted, "a completed deletion needs success and deleted true")
	case protocol.MutationFailed:
		code, _ := mut.Text("errorCode")
		msg, cok := mut.Text("error")
		v.Check(!success && !deleted && code != "" && cok && msg != "", "a failed deletion needs success and deleted false, an errorCode and an error")
	}
	return v.Err("history mutation receipt", o)
}

// DeletePerfHistory deletes one performance record and polls the receipt
// of a fresh requestId until completed or failed: exit 0 iff
// mutation.success.
func DeletePerfHistory(ctx context.Context, d *device.Device, id string, t SessionTimings) (*PerfHistoryDeleteResult, error) {
	if err := CheckPerfHistoryID(id); err != nil {
		return nil, err
	}
	t = t.or(30*time.Second, 200*time.Millisecond)
	requestID := device.NewRequestID()
	if err := d.Mutate(ctx, protocol.ActionHistory, device.P(protocol.ParamAction, "deletePerformance", protocol.ParamRequestID, requestID,
		protocol.ParamID, id, protocol.ParamConfirmID, id)); err != nil {
		return nil, fault.From(err).With("requestId", requestID).With("id", id)
	}
	var last map[string]any
	final, err := pollMutationReceipt(ctx, d, protocol.ActionHistory, requestID, protocol.HistoryDelete(),
		device.PollOptions{Timeout: t.Timeout, Interval: t.Interval},
		&last, func(o device.WireObject) error {
			return validatePerfDeleteReceipt(o, requestID, id)
		})
	if err != nil {
		if errors.Is(err, device.ErrPollTimeout) {
			err = fault.New(fault.Timeout, fault.CodeHistoryDeleteTimeout, "SoloPi did not finish the history deletion in time; it may still complete")
		}
		// lastResponse: the last receipt read, null when none was.
		e := fault.From(err).With("requestId", requestID).With("id", id).With("kind", "performance").With("phase", "perf-history-delete").
			With("lastResponse", nil)
		if last != nil {
			e.With("lastResponse", last)
		}
		return nil, e
	}
	mut, _ := final["mutation"].(map[string]any)
	state := string(device.StateOf(final))
	if success, _ := mut["success"].(bool); !success {
		code, _ := mut["errorCode"].(string)
		msg, _ := mut["error"].(string)
		return nil, fault.New(fault.Failed, code, msg).With("requestId", requestID).With("state", state).With("mutation", mut)
	}
	return &PerfHistoryDeleteResult{Mutation: mut, RequestID: requestID, State: state, Success: true}, nil
}

// PerfHistoryDeleteResult is what perf-history-delete prints once the
// device deleted the record: the final receipt's state and its mutation
// object, echoed. Fields are in the order of their JSON names, as the map
// it replaces printed them.
type PerfHistoryDeleteResult struct {
	Mutation  map[string]any `json:"mutation"`
	RequestID string         `json:"requestId"`
	State     string         `json:"state"`
	Success   bool           `json:"success"`
}
