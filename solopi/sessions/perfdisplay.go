package sessions

// Live performance monitor (docs/device-protocol.md): perf-display-start,
// -status, -stop. The display lease and a performance recording share one
// metric provider with a single owner. Another owner's lease can neither
// be stopped nor read: a status naming another sessionId is exit 2 and
// the lease's values are withheld from the output.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// displaySpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func displaySpec() *sessionSpec {
	return &sessionSpec{
		Name:     "performance display",
		Kind:     "performance-display",
		Action:   protocol.ActionPerformance,
		Status:   device.P(protocol.ParamMode, "display", protocol.ParamAction, "status"),
		Machine:  protocol.PerformanceDisplay(),
		Validate: validateDisplay,
		Latest:   "latestPerformanceDisplay",
		Key:      "performanceDisplay",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamMode, "display", protocol.ParamAction, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.SessionRunning},
		Retryable: true,
	}
}

// validateDisplay is the host validator.
func validateDisplay(o device.WireObject) error {
	var v device.Violations
	m := protocol.PerformanceDisplay()
	s := v.MachineFlags(o, m, map[string]protocol.State{"running": protocol.SessionRunning})
	if o.Has("stopRetryable") {
		r, ok := o.Flag("stopRetryable")
		v.Check(ok && (!r || s == protocol.SessionStopping), "stopRetryable must be a boolean, true only in stopping")
	}
	lists := map[string][]string{}
	for _, k := range []string{"items", "ownedDisplayNames", "runningItems"} {
		if !o.Has(k) {
			continue
		}
		l, ok := o.Strings(k)
		v.Check(ok, "%s is not a list of strings", k)
		seen := map[string]bool{}
		for _, x := range l {
			v.Check(x != "" && !seen[x], "%s holds an empty or repeated name %q", k, x)
			seen[x] = true
		}
		lists[k] = l
	}
	n, ok := o.Integer("sampledAt")
	v.Check(ok && n >= 0, "sampledAt is not an integer")
	vals, isObj := o["values"].(map[string]any)
	if o.Has("values") {
		v.Check(isObj, "values is not an object")
	}
	for k, x := range vals {
		_, isStr := x.(string)
		v.Check(isStr, "values[%q] is not a string", k)
		v.Check(slices.Contains(lists["ownedDisplayNames"], k), "values key %q is not an owned display name", k)
	}
	for _, k := range []string{"startedAt", "finishedAt", "durationMs"} {
		if o.Has(k) {
			_, ok := o.Integer(k)
			v.Check(ok, "%s is not an integer", k)
		}
	}
	switch s {
	case protocol.SessionIdle:
		v.AbsentAll(o, "idle", "sessionId", "targetPackage", "startedAt", "finishedAt", "durationMs", "error")
		v.Check(len(lists["items"]) == 0 && len(lists["ownedDisplayNames"]) == 0 && len(vals) == 0, "idle but items, ownedDisplayNames or values are not empty")
	case protocol.SessionRunning:
		v.Check(o.Has("startedAt") && !o.Has("finishedAt"), "a running display needs startedAt and no finishedAt")
	case protocol.SessionStarting:
		v.Check(!o.Has("startedAt") && !o.Has("durationMs"), "a starting display has startedAt or durationMs")
	}
	if s != "" && s != protocol.SessionIdle {
		id, _ := o.Text("sessionId")
		v.Check(id != "", "a %s display has no sessionId", s)
	}
	if m.IsTerminal(s) {
		v.Check(o.Has("finishedAt"), "a terminal display has no finishedAt")
	}
	if s == protocol.SessionFailed {
		v.Check(o.Has("error"), "a failed display has no error")
	}
	if s == protocol.SessionIdle || s == protocol.SessionStarting || s == protocol.SessionRunning || s == protocol.SessionStopped {
		v.Check(!o.Has("error"), "error present in state %s", s)
	}
	st, hasSt := o.Integer("startedAt")
	fin, hasFin := o.Integer("finishedAt")
	if dur, ok := o.Integer("durationMs"); ok && hasSt && hasFin {
		v.Check(dur == fin-st, "durationMs %d != finishedAt - startedAt", dur)
	}
	return v.Err("performance display status", o)
}

// StartPerfDisplay starts a live monitor lease under a fresh sessionId and
// waits for `running`; the running lease must echo our target and items.
func StartPerfDisplay(ctx context.Context, d *device.Device, o PerfStartOptions) (*StartResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	_, keys, err := PerfItems(ctx, d)
	if err != nil {
		return nil, err
	}
	if err := checkItems(o.Items, keys); err != nil {
		return nil, err
	}
	// The provider has one owner: a performance recording blocks the lease.
	rec, err := perfSpec().fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	if a, _ := rec.Flag("active"); a {
		return nil, fault.New(fault.Failed, fault.CodeSessionActive, "a performance recording owns the metric provider; no display was started").
			With("latestPerformance", map[string]any(rec)).With("performance", map[string]any(rec))
	}
	t := o.SessionTimings.or(30*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	res, err := displaySpec().start(ctx, d, startPlan{
		SessionID: id,
		Params: device.P(protocol.ParamMode, "display", protocol.ParamAction, "start", protocol.ParamTargetApp, o.targetApp(),
			protocol.ParamItems, strings.Join(o.Items, ","), protocol.ParamSessionID, id),
		Done:    []protocol.State{protocol.SessionRunning, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRunning},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 15 * time.Second, Phase: "performance-display-start",
		Check: func(w device.WireObject) error {
			if device.StateOf(w) != protocol.SessionRunning {
				return nil
			}
			tp, _ := w.Text("targetPackage")
			items, _ := w.Strings("items")
			targetOK := tp == o.TargetPackage || (o.Global && (tp == "" || tp == "-"))
			if !targetOK || !slices.Equal(items, o.Items) {
				return device.ContractError("the running display does not echo the requested targetPackage and items", map[string]any(w))
			}
			return nil
		},
	})
	return res, withholdForeign(err, id)
}

// PerfDisplayStatus reads the display snapshot. A sessionId other than the
// caller's is exit 2, and that lease's values are not shown.
func PerfDisplayStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	if err := CheckPerfSessionID(sessionID, false); err != nil {
		return nil, err
	}
	o, err := displaySpec().fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	if sessionID != "" && device.SessionIDOf(o) != sessionID {
		withheld := o.Clone()
		if _, ok := withheld["values"]; ok {
			withheld["values"] = map[string]any{}
			withheld["valuesWithheld"] = true
		}
		return nil, displaySpec().mismatch(sessionID, device.WireObject(withheld))
	}
	return o.Clone(), nil
}

// StopPerfDisplay stops our display lease with the same bounded retry as
// perf-stop; another owner's lease is never stopped.
func StopPerfDisplay(ctx context.Context, d *device.Device, sessionID string, t SessionTimings) (*StopResult, error) {
	if err := CheckPerfSessionID(sessionID, true); err != nil {
		return nil, err
	}
	t = t.or(60*time.Second, 500*time.Millisecond)
	res, err := displaySpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "performance-display-stop", Success: []protocol.State{protocol.SessionStopped},
		FailureCode: fault.CodeSessionFailed})
	return res, withholdForeign(err, sessionID)
}

// withholdForeign removes another owner's values from a mismatch error.
func withholdForeign(err error, sessionID string) error {
	if err == nil {
		return nil
	}
	e := fault.From(err)
	if e.Code != fault.CodeSessionMismatch && e.Code != fault.CodeSessionReplaced && e.Code != fault.CodeSessionActive {
		return err
	}
	for _, key := range []string{displaySpec().Latest, displaySpec().Key} {
		latest, ok := e.Details[key].(map[string]any)
		if !ok || device.SessionIDOf(device.WireObject(latest)) == sessionID {
			continue
		}
		cp := device.WireObject(latest).Clone()
		if _, ok := cp["values"]; ok {
			cp["values"] = map[string]any{}
			cp["valuesWithheld"] = true
		}
		e.Details[key] = cp
	}
	return e
}
