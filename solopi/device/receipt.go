package device

import (
	"context"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// ReceiptQuery is the query that publishes one mutation's outcome and the
// identifier the outcome must carry (docs/device-protocol.md#receipt-discipline).
type ReceiptQuery struct {
	Action string // the query's action: harness, history, plugin, video-analysis, agent
	Params Params // its parameters, the identifier included
	// Key is the field that carries the identifier (default requestId)
	// and ID the one we sent.
	Key, ID string
	// In names the answer's field that holds the receipt ("": the answer
	// is the receipt; "receipt" for the Agent's act receipts).
	In string
	// ForeignCode is the error code of a receipt for another identifier
	// (default protocol_contract_violation; exit 4 either way).
	ForeignCode string
	// Lost, when set, is returned for a receipt that is not there: the
	// caller saw it before, so the device lost it (an app restart) and
	// waiting would only time out.
	Lost error
}

// Receipt is one answer of a receipt query.
type Receipt struct {
	Raw    []byte     // the answer as the device sent it
	Answer WireObject // the answer decoded
	Object WireObject // the receipt in it: the answer itself or its In field
}

// ReadReceipt reads q once. Its answer is one of four things:
//
//   - not there yet: success is not true and errorCode is a not-found code
//     (protocol.KeepPolling); found is false (or q.Lost is returned). An
//     identifier it echoes must be ours;
//   - our receipt: it carries q.ID in q.Key, whatever its state says;
//   - a receipt for another identifier (or none, with success true): a
//     contract violation, never accepted and never waited out;
//   - a refusal of the query (success false, no identifier): the device's
//     error, exit 2 with its errorCode (an Agent session that expired or
//     belongs to another owner).
func ReadReceipt(ctx context.Context, d *Device, q ReceiptQuery) (r Receipt, found bool, err error) {
	r.Raw, err = d.QueryRaw(ctx, q.Action, q.Params)
	if err != nil {
		return r, false, err
	}
	if r.Answer, err = DecodeObject(r.Raw); err != nil {
		return r, false, notAnObject(q.Action, r.Raw)
	}
	r.Object, found, err = q.judge(r.Answer)
	return r, found, err
}

// judge applies the one rule of ReadReceipt to a decoded answer.
func (q ReceiptQuery) judge(a WireObject) (WireObject, bool, error) {
	key := q.Key
	if key == "" {
		key = protocol.ParamRequestID
	}
	obj := a
	if q.In != "" {
		inner, _ := a[q.In].(map[string]any)
		obj = inner
	}
	foreign := func(got string) error {
		code := q.ForeignCode
		if code == "" {
			code = fault.CodeProtocolContractViolation
		}
		msg := "the device answered with the receipt of another request (" + key + " " + strconv.Quote(got) + ")"
		if got == "" {
			msg = "the device answered with a receipt that does not carry our " + key
		}
		return fault.New(fault.Transport, code, msg).With(key, q.ID).
			With("receipt"+strings.ToUpper(key[:1])+key[1:], got).With("lastResponse", map[string]any(a))
	}
	ok, _ := a.Flag("success")
	if !ok && protocol.KeepPolling(a.Str("errorCode")) {
		if got := a.Str(key); got != "" && got != q.ID {
			return obj, false, foreign(got)
		}
		return obj, false, q.Lost
	}
	switch got := obj.Str(key); {
	case got == q.ID:
		return obj, true, nil
	case got == "" && !ok:
		return obj, false, DeviceRefusal(a, "the device refused the receipt query").With(key, q.ID)
	default:
		return obj, false, foreign(got)
	}
}

// AwaitReceipt polls q (PollUntil with o, on d's clock) until final
// reports our receipt final or fails; pending states (in progress,
// connecting, analyzing, accepted) are final's to recognise. last is the
// last answer read, a not-found one included, also on error.
func AwaitReceipt(ctx context.Context, d *Device, q ReceiptQuery, o PollOptions, final func(Receipt) (bool, error)) (last Receipt, err error) {
	o.Clock = d.Clock()
	err = PollUntil(ctx, o, func(ctx context.Context) (bool, error) {
		r, found, err := ReadReceipt(ctx, d, q)
		if r.Answer != nil {
			last = r
		}
		if err != nil || !found {
			return false, err
		}
		return final(r)
	})
	return last, err
}

// MutationReceipt is the receipt query of a history or plugin mutation:
// action's mutationStatus for requestID.
func MutationReceipt(action, requestID string) ReceiptQuery {
	return ReceiptQuery{Action: action, ID: requestID,
		Params: P(protocol.ParamAction, "mutationStatus", protocol.ParamRequestID, requestID)}
}
