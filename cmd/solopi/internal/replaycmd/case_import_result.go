package replaycmd

import (
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// importResult is what case-import adds to SoloPi's import receipt, which
// it prints unchanged beside these fields (the receipt's own success,
// caseId and caseName among them). Error, ErrorCode and Success are set
// only when the staged file could not be confirmed removed: the import
// then reports a failure over the receipt's success.
type importResult struct {
	Cleanup                replay.StagingCleanup   `json:"cleanup"`
	ConfirmedHighRiskSteps []casefile.HighRiskStep `json:"confirmedHighRiskSteps"`
	Error                  string                  `json:"error,omitempty"`
	ErrorCode              string                  `json:"errorCode,omitempty"`
	Redaction              replay.ImportRedaction  `json:"redaction"`
	RequestID              string                  `json:"requestId"`
	Success                *bool                   `json:"success,omitempty"`
}

// over lays the result over the receipt, as one object with sorted keys.
func (r importResult) over(receipt map[string]any) canonjson.Overlay {
	return canonjson.Overlay{Base: receipt, Fields: r}
}
