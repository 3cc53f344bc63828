package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// rsaHint is the device's own fixed user-action text for a failed internal
// connection (docs/device-protocol.md), reused for our timeout.
const rsaHint = "请确认 SoloPi 配置的内部 ADB 地址可连接，并在设备上确认 RSA 授权弹窗"

const actionAdbConnect = "Unlock the phone and tap Allow on the USB debugging (RSA) prompt, and make sure the internal " +
	"ADB address configured in SoloPi (default localhost:5555) accepts connections; then run `solopi adb-connect` again. " +
	"(" + rsaHint + ")"

// AdbConnectOptions configure AdbConnect.
type AdbConnectOptions struct {
	ConnectTimeout time.Duration // --connect-timeout, default 20 s
	ReadyTimeout   time.Duration // --ready-timeout, default 5 s
	PollInterval   time.Duration // --poll-interval, default 250 ms
	// Device describes the selected device for the doctor reports.
	Device map[string]any
	// NewRequestID mints the requestId (tests pin it); default NewRequestID.
	NewRequestID func() string
}

// AdbReceipt is one adb-connect receipt as the device publishes it.
type AdbReceipt struct {
	Success            bool       `json:"success"`
	RequestID          string     `json:"requestId"`
	State              string     `json:"state"`
	Connected          bool       `json:"connected"`
	Terminal           bool       `json:"terminal"`
	UserActionRequired bool       `json:"userActionRequired"`
	RequiredUserAction nullString `json:"requiredUserAction"`
	StartedAt          int64      `json:"startedAt,omitempty"`
	FinishedAt         int64      `json:"finishedAt,omitempty"`
	ErrorCode          string     `json:"errorCode,omitempty"`
	Error              string     `json:"error,omitempty"`
}

// nullString is a text printed as JSON null when empty: solopi-ai prints
// requiredUserAction:null when nothing is required, and null is a value a
// script may test for.
type nullString string

// MarshalJSON writes null for "" and the string otherwise.
func (n nullString) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(n))
}

// adbConnectResult is the adb-connect command's object: the receipt, plus
// alreadyConnected and the doctor report after the connection.
type adbConnectResult struct {
	AdbReceipt
	AlreadyConnected bool          `json:"alreadyConnected"`
	Doctor           *doctorReport `json:"doctor"`
}

// parseAdbReceipt checks a receipt against the device protocol's consistency
// rules; any violation is a protocol error.
func parseAdbReceipt(r device.WireObject) (AdbReceipt, error) {
	var rc AdbReceipt
	bad := func(format string, args ...any) (AdbReceipt, error) {
		return rc, fault.Newf(fault.Transport, fault.CodeAdbConnectReceiptInvalid, "inconsistent adb-connect receipt: "+format, args...).
			With("receipt", map[string]any(r)).With("response", map[string]any(r))
	}
	for k, dst := range map[string]*bool{"success": &rc.Success, "connected": &rc.Connected, "terminal": &rc.Terminal,
		"userActionRequired": &rc.UserActionRequired} {
		b, ok := r.Flag(k)
		if !ok {
			return bad("%s is not a boolean", k)
		}
		*dst = b
	}
	var required string
	for k, dst := range map[string]*string{"requestId": &rc.RequestID, "state": &rc.State, "requiredUserAction": &required,
		"errorCode": &rc.ErrorCode, "error": &rc.Error} {
		if k == "requiredUserAction" && r.Has(k) && r[k] == nil {
			continue
		}
		if !r.Has(k) {
			continue
		}
		s, ok := r.Text(k)
		if !ok {
			return bad("%s is not a string", k)
		}
		*dst = s
	}
	rc.RequiredUserAction = nullString(required)
	for k, dst := range map[string]*int64{"startedAt": &rc.StartedAt, "finishedAt": &rc.FinishedAt} {
		if !r.Has(k) {
			continue
		}
		n, ok := r.Integer(k)
		if !ok {
			return bad("%s is not an integer", k)
		}
		*dst = n
	}
	st := protocol.State(rc.State)
	m := protocol.AdbConnect()
	if !m.Has(st) || st == protocol.ReceiptNew {
		return bad("unknown state %q", rc.State)
	}
	switch {
	case rc.Success != (st != protocol.AdbFailed):
		return bad("success=%v with state %s", rc.Success, rc.State)
	case rc.Connected != (st == protocol.AdbConnected):
		return bad("connected=%v with state %s", rc.Connected, rc.State)
	case rc.Terminal != m.IsTerminal(st):
		return bad("terminal=%v with state %s", rc.Terminal, rc.State)
	case rc.UserActionRequired != (required != ""):
		return bad("userActionRequired=%v but requiredUserAction is %q", rc.UserActionRequired, required)
	case st == protocol.AdbFailed && (rc.ErrorCode == "" || rc.Error == ""):
		return bad("a failed receipt needs errorCode and error")
	}
	return rc, nil
}

// AdbConnect opens SoloPi's internal ADB connection when it is the only
// thing missing, and proves it with a ready doctor. It never answers an
// RSA dialog, never changes the internal address and never runs adb tcpip.
func AdbConnect(ctx context.Context, s *device.Session, opts AdbConnectOptions) (*adbConnectResult, error) {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 20 * time.Second
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 5 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.NewRequestID == nil {
		opts.NewRequestID = device.NewRequestID
	}
	doc, err := doctorOnSession(ctx, s, opts.Device)
	if err != nil {
		return nil, err
	}
	if doc.Ready {
		return &adbConnectResult{
			AdbReceipt:       AdbReceipt{Success: true, State: string(protocol.AdbConnected), Connected: true, Terminal: true},
			AlreadyConnected: true, Doctor: doc,
		}, nil
	}
	if len(doc.FailedChecks) != 0 || len(doc.MissingPermissions) != 1 || doc.MissingPermissions[0] != device.CheckAdb {
		// Connecting cannot fix anything else; refuse before any mutation.
		act := joinActions(doc.Checks, device.CheckAdb)
		return nil, notConnected(fault.New(fault.Failed, fault.CodeAdbConnectPreconditionFailed,
			"adb-connect only runs when SoloPi's internal ADB connection is the only missing item").
			With("missingPermissions", doc.MissingPermissions).With("failedChecks", doc.FailedChecks).
			With("doctor", doc).WithUserAction(act).With("requiredUserAction", act))
	}
	id := opts.NewRequestID()
	if !protocol.ValidID(id, 128) {
		return nil, fault.Usagef(fault.CodeInvalidRequestID, "requestId %q does not match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", id)
	}
	s.Options().Device.Progress.Reportf("adb-connect", "asking SoloPi to open its internal ADB connection (requestId %s)", id)
	cctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	rc, err := awaitAdbReceipt(s, ctx, cctx, id, opts)
	if err != nil {
		return nil, err
	}
	res := &adbConnectResult{AdbReceipt: rc}
	if rc.State == string(protocol.AdbFailed) {
		act := string(rc.RequiredUserAction)
		if act == "" {
			act = actionAdbConnect
		}
		e := notConnected(fault.New(fault.Failed, rc.ErrorCode, rc.Error).WithUserAction(act).
			With("requestId", id).With("state", rc.State).With("terminal", true).
			With("receipt", rc))
		if rc.RequiredUserAction != "" {
			// Present only with the device's own action (busy and schedule
			// failures carry none), never as an empty string.
			e.With("requiredUserAction", rc.RequiredUserAction)
		}
		return nil, e
	}
	// connected: only a full, ready doctor passes the gate.
	doc, lastErr, err := awaitReadyDoctor(ctx, s, opts)
	if err != nil {
		return nil, fault.From(err).With("requestId", id).With("receipt", rc)
	}
	if doc == nil || !doc.Ready {
		e := fault.New(fault.Failed, fault.CodeDoctorNotReadyAfterAdbConnect,
			"the internal ADB connection opened but doctor is still not ready").
			With("requestId", id).With("receipt", rc).WithUserAction(device.ActionOpenSoloPi).
			With("state", rc.State).With("connected", true).With("alreadyConnected", false)
		if doc != nil {
			e.With("doctor", doc).With("missingPermissions", doc.MissingPermissions).
				With("failedChecks", doc.FailedChecks).WithUserAction(joinActions(doc.Checks))
		}
		if lastErr != nil {
			device.WithLastError(e, lastErr)
		}
		return nil, e
	}
	res.Doctor = doc
	return res, nil
}

// notConnected adds the fields solopi-ai prints on every adb-connect that
// did not connect: connected:false, alreadyConnected:false.
func notConnected(e *fault.Error) *fault.Error {
	return e.With("connected", false).With("alreadyConnected", false)
}

// awaitAdbReceipt sends the mutation and polls the receipt of our requestId
// until it is terminal or cctx (the connect budget) ends.
func awaitAdbReceipt(s *device.Session, ctx, cctx context.Context, id string, opts AdbConnectOptions) (AdbReceipt, error) {
	var last *AdbReceipt
	timeout := func() error {
		if ctx.Err() != nil {
			return interruptedWith(ctx, id, last)
		}
		e := notConnected(fault.New(fault.Timeout, fault.CodeAdbConnectTimeout, "SoloPi's internal ADB connection did not finish within --connect-timeout").
			WithUserAction(actionAdbConnect).With("requestId", id).With("requiredUserAction", rsaHint).With("lastStatus", nil))
		if last != nil {
			// lastStatus is solopi-ai's name for the last receipt.
			e.With("lastReceipt", *last).With("lastStatus", *last)
		}
		return e
	}
	if err := s.Device.Mutate(cctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessAdbConnect, protocol.ParamRequestID, id)); err != nil {
		if cctx.Err() != nil {
			return AdbReceipt{}, timeout()
		}
		return AdbReceipt{}, err
	}
	m := protocol.AdbConnect()
	prev := protocol.ReceiptNew
	var final AdbReceipt
	q := device.ReceiptQuery{Action: protocol.ActionHarness, ID: id, ForeignCode: fault.CodeAdbConnectReceiptMismatch,
		Params: device.P(protocol.ParamType, protocol.HarnessAdbConnectStatus, protocol.ParamRequestID, id)}
	_, err := device.AwaitReceipt(cctx, s.Device, q, device.PollOptions{Timeout: opts.ConnectTimeout, Interval: opts.PollInterval, Initial: opts.PollInterval},
		func(r device.Receipt) (bool, error) {
			rc, err := parseAdbReceipt(r.Object)
			final = rc
			if err != nil {
				return false, err
			}
			st := protocol.State(rc.State)
			if st != prev {
				if err := stepAdb(m, prev, st); err != nil {
					return false, fault.Wrap(fault.Transport, fault.CodeAdbConnectReceiptInvalid, "the adb-connect receipt moved backwards", err).
						With("requestId", id).With("receipt", rc)
				}
				prev = st
			}
			last = &rc
			return rc.Terminal, nil
		})
	switch {
	case err == nil:
		return final, nil
	case errors.Is(err, device.ErrPollTimeout) || cctx.Err() != nil && fault.CodeOf(err) != fault.CodeAdbConnectTimeout:
		return AdbReceipt{}, timeout()
	}
	return final, err
}

// stepAdb validates an observed state change. The host may miss the
// connecting receipt, so from "new" any state is a valid first sighting.
func stepAdb(m *protocol.Machine, from, to protocol.State) error {
	if from == protocol.ReceiptNew {
		return nil
	}
	for _, ev := range m.Events() {
		if next, err := m.Step(from, ev); err == nil && next == to {
			return nil
		}
	}
	return &protocol.TransitionError{Machine: m.Name, From: from, Event: protocol.Event("observed:" + string(to))}
}

// awaitReadyDoctor re-runs doctor until ready or the ready budget ends;
// it returns the last report (nil if none came back) and the last query
// error, so the caller can say why the gate did not pass.
func awaitReadyDoctor(ctx context.Context, s *device.Session, opts AdbConnectOptions) (*doctorReport, error, error) {
	rctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()
	var last *doctorReport
	var lastErr error
	err := device.PollUntil(rctx, device.PollOptions{Timeout: opts.ReadyTimeout, Interval: opts.PollInterval, Initial: opts.PollInterval, Clock: s.Device.Clock()}, func(_ context.Context) (bool, error) {
		doc, err := doctorOnSession(rctx, s, opts.Device)
		if ctx.Err() != nil {
			return false, device.Interrupted(ctx)
		}
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = doc
		return doc.Ready, nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, nil, device.Interrupted(ctx)
	case err == nil:
		return last, nil, nil
	}
	return last, lastErr, nil
}

func interruptedWith(ctx context.Context, id string, last *AdbReceipt) error {
	e := fault.From(device.Interrupted(ctx)).With("requestId", id)
	if last != nil {
		e.With("lastReceipt", *last)
	}
	return e
}
