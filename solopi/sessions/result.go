package sessions

// What the session commands print. The device's snapshot of our session is
// echoed unchanged (Snapshot: its fields are the device's, not ours); what
// the host adds is a typed field of the result, laid over the snapshot by
// canonjson.Overlay, so the object is as flat and as sorted as the merged
// map it replaces.
//
// A result type must not embed another result type: the embedded
// MarshalJSON would be promoted into the `fields` copy each MarshalJSON
// encodes and print the inner result alone. Embed the method-less field
// structs (stopFields) instead.

import (
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// StartResult is what a start prints once our session reached a success
// state: its snapshot with success:true.
type StartResult struct {
	Snapshot map[string]any `json:"-"`
	Success  bool           `json:"success"`
}

// MarshalJSON lays the host's fields over the snapshot.
func (r StartResult) MarshalJSON() ([]byte, error) {
	type fields StartResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.Snapshot, Fields: fields(r)}.MarshalJSON()
}

// ScanStartResult is scan-start's StartResult with scanCompleted: whether
// the start already found content (only `completed` carries it).
type ScanStartResult struct {
	Snapshot      map[string]any `json:"-"`
	ScanCompleted bool           `json:"scanCompleted"`
	Success       bool           `json:"success"`
}

// MarshalJSON lays the host's fields over the snapshot.
func (r ScanStartResult) MarshalJSON() ([]byte, error) {
	type fields ScanStartResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.Snapshot, Fields: fields(r)}.MarshalJSON()
}

// stopFields are what every stop adds to our session's terminal snapshot.
type stopFields struct {
	// AlreadyTerminal: the session had ended before this command; no stop
	// was sent.
	AlreadyTerminal bool `json:"alreadyTerminal,omitempty"`
	// RecoveredWithoutPreflight: the first status could not reach the
	// control server and the stop was sent blind (perf-stop).
	RecoveredWithoutPreflight bool `json:"recoveredWithoutPreflight,omitempty"`
	StopRequests              int  `json:"stopRequests"`
	// StopRetries counts the stops re-sent for a retryable cleanup; absent
	// when the stop never polled (AlreadyTerminal).
	StopRetries *int `json:"stopRetries,omitempty"`
	Success     bool `json:"success"`
}

// addTo puts the fields a failed stop reports into its error (not
// success: an error object's is false).
func (f stopFields) addTo(e *fault.Error) *fault.Error {
	e.With("stopRequests", f.StopRequests)
	if f.AlreadyTerminal {
		e.With("alreadyTerminal", true)
	}
	if f.RecoveredWithoutPreflight {
		e.With("recoveredWithoutPreflight", true)
	}
	if f.StopRetries != nil {
		e.With("stopRetries", *f.StopRetries)
	}
	return e
}

// StopResult is what a stop (or scan-cancel) prints once our session
// ended in a success state.
type StopResult struct {
	Snapshot map[string]any `json:"-"`
	stopFields
}

// MarshalJSON lays the host's fields over the snapshot.
func (r StopResult) MarshalJSON() ([]byte, error) {
	type fields StopResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.Snapshot, Fields: fields(r)}.MarshalJSON()
}

// PerfStopResult is perf-stop's StopResult with what it pulled.
type PerfStopResult struct {
	Snapshot map[string]any `json:"-"`
	stopFields
	// Artifacts is set with --output.
	Artifacts *perfArtifacts `json:"artifacts,omitempty"`
	// PerformanceAssessed is always false: `stopped` means the device
	// saved the CSVs; nothing here judges them.
	PerformanceAssessed bool `json:"performanceAssessed"`
}

// MarshalJSON lays the host's fields over the snapshot.
func (r PerfStopResult) MarshalJSON() ([]byte, error) {
	type fields PerfStopResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.Snapshot, Fields: fields(r)}.MarshalJSON()
}

// perfArtifacts is what perf-stop --output pulled. Performance (the local
// directory) and Files are solopi-ai's; the pull's evidence is ours,
// beside them. Nested objects declare their fields in the order of their
// JSON names, as the maps they replace printed them.
type perfArtifacts struct {
	Files                []pulledFile  `json:"files"`
	Performance          string        `json:"performance"`
	PerformanceDirectory perfDirectory `json:"performanceDirectory"`
}

// perfDirectory is the pulled directory: where it is on both sides, and
// every file in it.
type perfDirectory struct {
	Files      []pulledFile `json:"files"`
	Path       string       `json:"path"`
	RemotePath string       `json:"remotePath"`
}

// pulledFile is one file of a pulled directory.
type pulledFile struct {
	Name      string `json:"name"`
	SHA256    string `json:"sha256"`
	SizeBytes int64  `json:"sizeBytes"`
}

// ScreenStopResult is screen-record-stop's StopResult with what it pulled.
type ScreenStopResult struct {
	Snapshot map[string]any `json:"-"`
	stopFields
	// Artifacts is set with --output.
	Artifacts *screenArtifacts `json:"artifacts,omitempty"`
}

// MarshalJSON lays the host's fields over the snapshot.
func (r ScreenStopResult) MarshalJSON() ([]byte, error) {
	type fields ScreenStopResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.Snapshot, Fields: fields(r)}.MarshalJSON()
}

// screenArtifacts is what screen-record-stop --output pulled.
// ScreenRecording (the local path, null when skipped) is solopi-ai's; the
// pull's evidence is ours, beside it.
type screenArtifacts struct {
	ScreenRecording     *string     `json:"screenRecording"`
	ScreenRecordingFile *screenFile `json:"screenRecordingFile,omitempty"`
	// Skipped says why nothing was pulled.
	Skipped string `json:"skipped,omitempty"`
}

// screenFile is the pulled MP4: where it is on both sides and what was
// checked.
type screenFile struct {
	Path       string `json:"path"`
	RemotePath string `json:"remotePath"`
	SHA256     string `json:"sha256"`
	SizeBytes  int64  `json:"sizeBytes"`
}
