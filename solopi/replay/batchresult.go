package replay

// BatchResult is the object run-batch and run-repeat print. The fields
// are in the order of their keys, the order the map it replaces printed.
// The command sets what it adds after the batch: each result's exitCode,
// where the summary, the reports and the JUnit went (or why not).
type BatchResult struct {
	ArtifactsRoot     string      `json:"artifactsRoot,omitempty"`
	BatchID           string      `json:"batchId"`
	BatchJSON         string      `json:"batchJson,omitempty"`
	BatchJSONError    string      `json:"batchJsonError,omitempty"`
	CompletedRuns     int         `json:"completedRuns"`
	ContinueOnFailure bool        `json:"continueOnFailure"`
	DurationMs        int64       `json:"durationMs"`
	Error             string      `json:"error,omitempty"`
	ErrorCode         string      `json:"errorCode,omitempty"`
	FailedRuns        *int        `json:"failedRuns,omitempty"` // set (0 too) when the batch did not pass
	Index             string      `json:"index,omitempty"`
	IndexError        string      `json:"indexError,omitempty"`
	JUnit             string      `json:"junit,omitempty"`
	JUnitError        string      `json:"junitError,omitempty"`
	Report            string      `json:"report,omitempty"`
	ReportError       string      `json:"reportError,omitempty"`
	RequestedRuns     int         `json:"requestedRuns"`
	Results           []*batchRun `json:"results"`
	Skipped           []batchSkip `json:"skipped"`
	StoppedEarly      bool        `json:"stoppedEarly"`
	Success           bool        `json:"success"`
}

// batchRun is one sub-run that ran. Its identities are null until the
// device gave them.
type batchRun struct {
	CaseName  string `json:"caseName"`
	ErrorCode string `json:"errorCode,omitempty"`
	// ExitCode is the run command's exit for this run, set by the command
	// (which owns exit codes).
	ExitCode  int        `json:"exitCode"`
	Index     int        `json:"index"`
	RequestID *string    `json:"requestId"`
	Run       *RunResult `json:"run"`
	RunID     *string    `json:"runId"`
	State     *string    `json:"state"`
}

// batchSkip is a requested run the batch never reached.
type batchSkip struct {
	CaseName string `json:"caseName"`
	Index    int    `json:"index"`
}

// Identities are the run's requestId, runId and state as a batch or suite
// row prints them: null until the device gave them.
func (r *RunReport) Identities() (requestID, runID, state *string) {
	return optional(r.RequestID), optional(r.RunID), optional(r.State)
}

// optional is s, or null when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
