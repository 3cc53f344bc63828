package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// CheckReplayHistoryID checks an id locally (exit 3): ids are opaque
// digests, so anything path-like is refused before the device sees it.
func CheckReplayHistoryID(id string) error {
	if !protocol.ValidPrefixedHex(id, "replay-", 64) {
		return fault.Usage(fault.CodeInvalidHistoryID, "--id must be a replay history id: replay- followed by 64 lowercase hex digits").With("id", id).With("kind", "replay")
	}
	return nil
}

// CheckReplayHistoryLimit checks --limit locally (exit 3).
func CheckReplayHistoryLimit(limit int) error {
	if limit < 1 || limit > 500 {
		return fault.Usage(fault.CodeInvalidLimit, "--limit must be between 1 and 500").With("limit", limit)
	}
	return nil
}

// secretsOf is the one optional SecretsStore of the history queries (the
// zero store finds no import record: the input-bearing parameters are the
// secrets then).
func secretsOf(stores []SecretsStore) SecretsStore {
	if len(stores) > 0 {
		return stores[0]
	}
	return SecretsStore{}
}

// ListReplayHistory queries history?action=listReplay and checks the list
// contract: kind, returned == len(records) <= min(total, limit),
// truncated == (returned < total), and every record a replay id. The case
// secrets the records quote are hidden (historysecrets.go), with the
// import records of secrets, when given.
func ListReplayHistory(ctx context.Context, d *device.Device, limit int, secrets ...SecretsStore) (map[string]any, error) {
	if err := CheckReplayHistoryLimit(limit); err != nil {
		return nil, err
	}
	m, err := d.Query(ctx, protocol.ActionHistory, device.P(protocol.ParamAction, "listReplay", protocol.ParamLimit, fmt.Sprint(limit)))
	if err != nil {
		return nil, err
	}
	store := secretsOf(secrets)
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return nil, device.DeviceRefusal(m, "the device refused the history list")
	}
	if err := checkHistoryList(m, limit); err != nil {
		return nil, redactHistoryError(ctx, d, store, err)
	}
	return redactHistory(ctx, d, store, m), nil
}

// historyContract is a history answer that breaks the contract; it is
// printed as solopi-ai names it (response) beside ours (lastResponse).
func historyContract(msg string, m map[string]any) *fault.Error {
	return device.ContractError(msg, m).With("response", m)
}

func checkHistoryList(m map[string]any, limit int) error {
	if device.WireObject(m).Str("kind") != "replay" {
		return historyContract("the history list kind is not replay", m)
	}
	records, ok := m["records"].([]any)
	if !ok {
		return historyContract("the history list has no records array", m)
	}
	returned, rok := device.WireObject(m).Integer("returned")
	total, tok := device.WireObject(m).Integer("total")
	truncated, trok := device.WireObject(m).Flag("truncated")
	if !rok || !tok || !trok {
		return historyContract("the history list lacks returned, total or truncated", m)
	}
	if returned != int64(len(records)) || returned > total || returned > int64(limit) || truncated != (returned < total) {
		return historyContract("the history list counts are inconsistent (returned, total, truncated, limit)", m)
	}
	for i, r := range records {
		o, ok := r.(map[string]any)
		if !ok || device.WireObject(o).Str("kind") != "replay" || !protocol.ValidPrefixedHex(device.WireObject(o).Str("id"), "replay-", 64) {
			return historyContract(fmt.Sprintf("history record %d is not a replay record with a valid id", i), m)
		}
	}
	return nil
}

// GetReplayHistory queries history?action=getReplay for exactly id, with
// the case secrets the record quotes hidden (see ListReplayHistory).
func GetReplayHistory(ctx context.Context, d *device.Device, id string, secrets ...SecretsStore) (map[string]any, error) {
	if err := CheckReplayHistoryID(id); err != nil {
		return nil, err
	}
	m, err := d.Query(ctx, protocol.ActionHistory, device.P(protocol.ParamAction, "getReplay", protocol.ParamID, id))
	if err != nil {
		return nil, err
	}
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return nil, device.DeviceRefusal(m, "the device refused the history query").With("id", id)
	}
	store := secretsOf(secrets)
	if device.WireObject(m).Str("kind") != "replay" || device.WireObject(m).Str("id") != id {
		return nil, redactHistoryError(ctx, d, store, historyContract("the history record does not echo the requested kind and id", m))
	}
	return redactHistory(ctx, d, store, m), nil
}

// historyDeleteResult is what replay-history-delete prints: the host's
// summary of the final receipt, with the device's mutation object echoed
// in it (fields in the alphabetical order of their JSON names).
type historyDeleteResult struct {
	// Mutation is the final receipt's mutation object, unchanged.
	Mutation  map[string]any `json:"mutation"`
	RequestID string         `json:"requestId"`
	// State is the final receipt's state: completed or failed.
	State string `json:"state"`
	// Success is mutation.success.
	Success bool `json:"success"`
}

// DeleteReplayHistory deletes one replay record (confirmId = id) and polls
// mutationStatus for our requestId until completed or failed, validating
// every receipt strictly.
func DeleteReplayHistory(ctx context.Context, d *device.Device, id string, timeout, interval time.Duration) (*historyDeleteResult, error) {
	if err := CheckReplayHistoryID(id); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	res := &historyDeleteResult{RequestID: device.NewRequestID()}
	if err := d.Mutate(ctx, protocol.ActionHistory, device.P(protocol.ParamAction, "deleteReplay", protocol.ParamRequestID, res.RequestID,
		protocol.ParamID, id, protocol.ParamConfirmID, id)); err != nil {
		return res, err
	}
	q := device.MutationReceipt(protocol.ActionHistory, res.RequestID)
	q.ForeignCode = fault.CodeReceiptMismatch
	last, err := device.AwaitReceipt(ctx, d, q, device.PollOptions{Timeout: timeout, Interval: interval},
		func(r device.Receipt) (bool, error) {
			if err := checkHistoryReceipt(r.Object, res.RequestID, id); err != nil {
				return false, err
			}
			return r.Object.Str("state") != "in_progress", nil
		})
	if errors.Is(err, device.ErrPollTimeout) {
		return res, fault.New(fault.Timeout, fault.CodeHistoryDeleteTimeout, "SoloPi did not finish the history deletion in time; it may still complete").
			With("requestId", res.RequestID).With("kind", "replay").With("id", id).With("phase", "history-delete").
			With("lastResponse", map[string]any(last.Answer))
	}
	if err != nil {
		if e, ok := err.(*fault.Error); ok && e.Kind != fault.Interrupted {
			// solopi-ai names the deletion in every error of its wait.
			e.With("requestId", res.RequestID).With("kind", "replay").With("id", id).With("phase", "history-delete")
		}
		return res, withResponse(err)
	}
	mut := last.Object["mutation"].(map[string]any)
	res.Mutation, res.State = mut, last.Object.Str("state")
	res.Success, _ = device.WireObject(mut).Flag("success")
	if !res.Success {
		code := device.WireObject(mut).Str("errorCode")
		// The error carries what the object would have printed.
		return res, fault.New(fault.Failed, code, device.WireObject(mut).Str("error")).
			With("requestId", res.RequestID).With("state", res.State).With("mutation", mut)
	}
	return res, nil
}

// checkHistoryReceipt is the strict mutationStatus validator.
func checkHistoryReceipt(m map[string]any, reqID, id string) error {
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return historyContract("the history mutation status is not a receipt", m)
	}
	state := device.WireObject(m).Str("state")
	if state != "in_progress" && state != "completed" && state != "failed" {
		return historyContract(fmt.Sprintf("the history receipt state %q is unknown", state), m)
	}
	mut, ok := m["mutation"].(map[string]any)
	if !ok {
		return historyContract("the history receipt has no mutation object", m)
	}
	if device.WireObject(mut).Str("requestId") != reqID || device.WireObject(mut).Str("kind") != "replay" || device.WireObject(mut).Str("action") != "deleteReplay" ||
		device.WireObject(mut).Str("id") != id || device.WireObject(mut).Str("state") != state {
		return historyContract("the history receipt does not match our requestId, kind, action, id and state", m)
	}
	success, sok := device.WireObject(mut).Flag("success")
	if !sok {
		return historyContract("the history receipt's mutation.success is not a boolean", m)
	}
	deleted, _ := device.WireObject(mut).Flag("deleted")
	switch state {
	case "completed":
		if !success || !deleted {
			return historyContract("a completed history receipt must have success and deleted true", m)
		}
	case "failed":
		_, codeOK := mut["errorCode"].(string)
		_, errOK := mut["error"].(string)
		if success || deleted || !codeOK || !errOK || device.WireObject(mut).Str("errorCode") == "" {
			return historyContract("a failed history receipt must have success and deleted false and an errorCode and error", m)
		}
	}
	return nil
}
