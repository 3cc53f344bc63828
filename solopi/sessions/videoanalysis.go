package sessions

// Visual response-time analysis of a device MP4 (docs/device-protocol.md):
// video-analysis-start and -status. The host names a device MP4 directly
// inside SoloPi's ScreenCaptures directory (never a local file, nothing is
// uploaded); every rejection after the requestId is known is a stored
// failed receipt, and only `completed` carries visualResponseTimeMs.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Error codes of the video-analysis commands.
const (
	measurementVideoDiff  = "SoloPi screen-recording video difference"
	maxActionOffsetMillis = 3600000
)

// isAnalysisErrorCode reports whether an error receipt's errorCode is one
// the device can store or answer.
func isAnalysisErrorCode(code string) bool {
	switch code {
	case "missing_action", "unsupported_action", "adb_required", "invalid_request_id", "invalid_parameter",
		"unsafe_video_path", "plugin_missing", "analysis_busy", "analysis_not_found", "analysis_failed":
		return true
	}
	return false
}

// checkVideoPath is the local rule for --video-path: an absolute device
// path of a safe .mp4 name whose parent is ScreenCaptures, under /sdcard/
// (at least 4 parts) or /storage/emulated/<n>/, without .., backslashes
// or control characters.
func checkVideoPath(p string) error {
	bad := func(why string) error {
		return fault.Usage(fault.CodeInvalidVideoPath, "--video-path must be a device MP4 directly inside SoloPi's ScreenCaptures directory: "+why).With("videoPath", p)
	}
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return bad("not an absolute clean path")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return bad("control character or backslash")
		}
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if slices.Contains(parts, "..") {
		return bad("contains ..")
	}
	if len(parts) < 4 || parts[len(parts)-2] != "ScreenCaptures" || !protocol.ValidIDName(parts[len(parts)-1], ".mp4", 127) {
		return bad("the parent must be ScreenCaptures and the name a safe .mp4")
	}
	switch {
	case parts[0] == "sdcard":
	case len(parts) >= 5 && parts[0] == "storage" && parts[1] == "emulated" && isDigits(parts[2]):
	default:
		return bad("not under /sdcard/ or /storage/emulated/<n>/")
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// formatThreshold renders the threshold like Python's "%.15g".
func formatThreshold(f float64) string { return strconv.FormatFloat(f, 'g', 15, 64) }

// validateAnalysisReceipt is the strict receipt validator (ReadReceipt has
// made sure it carries our requestId).
func validateAnalysisReceipt(o device.WireObject) error {
	var v device.Violations
	success, ok := o.Flag("success")
	v.Check(ok, "success is not a boolean")
	if !o.Has("state") {
		code, _ := o.Text("errorCode")
		msg, _ := o.Text("error")
		v.Check(!success, "a receipt without state must be an error receipt")
		v.Check(isAnalysisErrorCode(code), "errorCode %q is not a video-analysis error code", code)
		v.Check(msg != "", "an error receipt has no error text")
		return v.Err("video analysis receipt", o)
	}
	m := protocol.VideoAnalysis()
	st, _ := o.Text("state")
	s := protocol.State(st)
	v.Check(m.Has(s) && s != protocol.ReceiptNew, "state %q is not a video-analysis state", st)
	v.Check(success == (s != protocol.AnalysisFailed), "success=%v does not match state %s", success, s)
	term, ok := o.Flag("terminal")
	v.Check(ok && term == m.IsTerminal(s), "terminal=%v does not match state %s", o["terminal"], s)
	v.Iff(m.IsTerminal(s), o.Has("completedAt"), "completedAt must be present exactly in terminal states")
	for _, k := range []string{"videoFileName", "videoPath"} {
		t, _ := o.Text(k)
		v.Check(t != "", "a state receipt has no %s", k)
	}
	for _, k := range []string{"sizeBytes", "actionOffsetMs", "startedAt"} {
		_, ok := o.Integer(k)
		v.Check(ok, "%s is not an integer", k)
	}
	_, ok = o.Number("differenceThreshold")
	v.Check(ok, "differenceThreshold is not a number")
	switch s {
	case protocol.AnalysisCompleted:
		ms, ok := o.Integer("visualResponseTimeMs")
		v.Check(ok && ms >= 0, "a completed analysis has no visualResponseTimeMs >= 0")
		meas, _ := o.Text("measurement")
		v.Check(meas == measurementVideoDiff, "measurement must be %q", measurementVideoDiff)
	case protocol.AnalysisFailed:
		code, _ := o.Text("errorCode")
		v.Check(code == protocol.ErrAnalysisFailed, "a failed analysis must have errorCode analysis_failed")
		v.Check(o.Has("error"), "a failed analysis has no error")
		v.Check(!o.Has("visualResponseTimeMs"), "a failed analysis has visualResponseTimeMs")
	default:
		v.Check(!o.Has("visualResponseTimeMs"), "an analysis in progress has visualResponseTimeMs")
	}
	return v.Err("video analysis receipt", o)
}

// VideoAnalysisOptions configure StartVideoAnalysis.
type VideoAnalysisOptions struct {
	VideoPath           string
	ActionOffsetMs      int64
	DifferenceThreshold float64
	Wait                bool
	AckTimeout          time.Duration // default 15 s
	AnalysisTimeout     time.Duration // default 120 s
	Interval            time.Duration // default 0.5 s
}

// Validate checks the request locally (exit 3).
func (o *VideoAnalysisOptions) Validate() error {
	if err := checkVideoPath(o.VideoPath); err != nil {
		return err
	}
	if o.ActionOffsetMs < 0 || o.ActionOffsetMs > maxActionOffsetMillis {
		return fault.Usage(fault.CodeInvalidOption, "--action-offset-ms must be between 0 and 3600000").With("actionOffsetMs", o.ActionOffsetMs)
	}
	if !(o.DifferenceThreshold > 0 && o.DifferenceThreshold <= 1) || math.IsNaN(o.DifferenceThreshold) {
		e := fault.Usage(fault.CodeInvalidOption, "--difference-threshold must be greater than 0 and at most 1")
		if !math.IsNaN(o.DifferenceThreshold) && !math.IsInf(o.DifferenceThreshold, 0) {
			e.With("differenceThreshold", o.DifferenceThreshold)
		}
		return e
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = 15 * time.Second
	}
	if o.AnalysisTimeout <= 0 {
		o.AnalysisTimeout = 120 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	return nil
}

// analysisReceipt is the receipt query of requestID; lost, when set, is
// the error of a receipt that is no longer there.
func analysisReceipt(requestID string, lost error) device.ReceiptQuery {
	return device.ReceiptQuery{Action: protocol.ActionVideoAnalysis, ID: requestID, Lost: lost,
		Params: device.P(protocol.ParamAction, "status", protocol.ParamRequestID, requestID)}
}

// checkAnalysis validates every receipt read.
func checkAnalysis(r device.Receipt) error { return validateAnalysisReceipt(r.Object) }

// analysisOutcome maps a receipt to the command's result: analyzing and
// completed are exit 0; a failed state or an error receipt is exit 2.
func analysisOutcome(o device.WireObject) (map[string]any, error) {
	st := device.StateOf(o)
	if st == protocol.AnalysisAnalyzing || st == protocol.AnalysisCompleted {
		// Printed as the device sent it: the host adds nothing.
		return o.Clone(), nil
	}
	code, _ := o.Text("errorCode")
	if code == "" {
		code = protocol.ErrAnalysisFailed
	}
	msg, _ := o.Text("error")
	if msg == "" {
		msg = "the video analysis failed"
	}
	e := fault.New(fault.Failed, code, msg)
	for k, v := range o {
		if k != "success" && k != "errorCode" && k != "error" {
			e.With(k, v)
		}
	}
	return nil, e
}

// StartVideoAnalysis asks the device to analyse one of its own MP4s under
// a fresh requestId and follows that receipt only.
func StartVideoAnalysis(ctx context.Context, d *device.Device, o VideoAnalysisOptions) (map[string]any, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	id := device.NewRequestID()
	thr := formatThreshold(o.DifferenceThreshold)
	if err := d.Mutate(ctx, protocol.ActionVideoAnalysis, device.P(protocol.ParamAction, "start", protocol.ParamRequestID, id,
		protocol.ParamVideoPath, o.VideoPath, protocol.ParamActionOffsetMs, strconv.FormatInt(o.ActionOffsetMs, 10),
		protocol.ParamDifferenceThreshold, thr)); err != nil {
		return nil, fault.From(err).With("requestId", id).With("phase", "video-analysis-start")
	}
	var last device.WireObject
	_, err := device.AwaitReceipt(ctx, d, analysisReceipt(id, nil), device.PollOptions{Timeout: o.AckTimeout, Interval: o.Interval}, func(r device.Receipt) (bool, error) {
		if err := checkAnalysis(r); err != nil {
			return false, err
		}
		last = r.Object
		return true, nil
	})
	if err != nil {
		return nil, analysisWaitError(err, id, "video-analysis-ack", last,
			"SoloPi did not acknowledge the video analysis request (a rejection before the requestId is known leaves no receipt)")
	}
	if last.Has("state") {
		// The device must echo exactly what we asked it to analyse.
		name, _ := last.Text("videoFileName")
		off, _ := last.Integer("actionOffsetMs")
		thrGot, _ := last.Number("differenceThreshold")
		if name != path.Base(o.VideoPath) || off != o.ActionOffsetMs || math.Abs(thrGot-o.DifferenceThreshold) > 1e-12 {
			return nil, device.ContractError("the analysis receipt does not echo the requested video, offset and threshold", map[string]any(last))
		}
	}
	if !o.Wait || !last.Has("state") || device.StateOf(last) != protocol.AnalysisAnalyzing {
		return analysisOutcome(last)
	}
	lost := fault.New(fault.Failed, fault.CodeSessionLost, "the analysis receipt vanished (was SoloPi restarted?); the analysis is lost").With("requestId", id)
	_, err = device.AwaitReceipt(ctx, d, analysisReceipt(id, lost), device.PollOptions{Timeout: o.AnalysisTimeout, Interval: o.Interval}, func(r device.Receipt) (bool, error) {
		if err := checkAnalysis(r); err != nil {
			return false, err
		}
		if device.StateOf(r.Object) != device.StateOf(last) && !device.Reachable(protocol.VideoAnalysis(), device.StateOf(last), device.StateOf(r.Object)) {
			return false, device.ContractError("the analysis receipt went backwards", map[string]any(r.Object))
		}
		last = r.Object
		return protocol.VideoAnalysis().IsTerminal(device.StateOf(r.Object)), nil
	})
	if err != nil {
		return nil, analysisWaitError(err, id, "video-analysis-wait", last, "the video analysis did not finish in time; the device gives up after 5 minutes")
	}
	return analysisOutcome(last)
}

func analysisWaitError(err error, id, phase string, last device.WireObject, timeoutMsg string) error {
	if errors.Is(err, device.ErrPollTimeout) {
		err = fault.New(fault.Timeout, fault.CodeAnalysisTimeout, timeoutMsg)
	}
	e := fault.From(err).With("requestId", id).With("phase", phase)
	if e.Kind == fault.Timeout {
		e.With("lastResponse", nil) // solopi-ai's: null until a receipt was read
	}
	if last != nil {
		e.With("lastResponse", map[string]any(last))
	}
	return e
}

// VideoAnalysisStatus reads the receipt of a requestId.
func VideoAnalysisStatus(ctx context.Context, d *device.Device, requestID string) (map[string]any, error) {
	if err := CheckAnalysisRequestID(requestID); err != nil {
		return nil, err
	}
	r, found, err := device.ReadReceipt(ctx, d, analysisReceipt(requestID, nil))
	if err == nil && found {
		err = checkAnalysis(r)
	}
	if err != nil {
		return nil, err
	}
	o := r.Object
	if !found {
		return nil, fault.New(fault.Failed, protocol.ErrAnalysisNotFound, fmt.Sprintf("the device has no video analysis %s (receipts do not survive an app restart)", requestID)).
			With("requestId", requestID)
	}
	return analysisOutcome(o)
}

// CheckAnalysisRequestID is the local rule for --request-id (exit 3).
func CheckAnalysisRequestID(id string) error {
	if !protocol.ValidID(id, 128) {
		return fault.Usage(fault.CodeInvalidRequestID, "--request-id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}").With("requestId", id)
	}
	return nil
}
