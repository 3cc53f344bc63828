package casefile

// The device's read-back of a stored case, for the tests that check the
// fingerprint vectors and the read-back round trip: the simulator builds
// its own (sim/soloapp), so no production code needs it.

// caseSnapshot is the `case` object of harness?type=case, fields in the
// device's order. Marshal it with HTML escaping off to match the device.
type caseSnapshot struct {
	ID               *int64 `json:"id,omitempty"`
	CaseName         string `json:"caseName"`
	CaseDesc         string `json:"caseDesc"`
	TargetAppPackage string `json:"targetAppPackage"`
	TargetAppLabel   string `json:"targetAppLabel"`
	RecordMode       string `json:"recordMode"`
	AdvanceSettings  string `json:"advanceSettings"`
	OperationLog     string `json:"operationLog"`
	Priority         int    `json:"priority"`
	GmtCreate        int64  `json:"gmtCreate"`
	GmtModify        int64  `json:"gmtModify"`
	CaseFingerprint  string `json:"caseFingerprint"`
}

// Snapshot builds the device's read-back of a stored case: the snapshot
// operationLog and the fingerprint over it. c holds the case as stored on
// the device (after import normalisation, with its id).
func Snapshot(c *Case, seed string) (caseSnapshot, error) {
	opLog, err := SnapshotOperationLog(c.Steps, seed)
	if err != nil {
		return caseSnapshot{}, err
	}
	prio := int64(c.Priority)
	fp := Fingerprint(FingerprintInput{
		ID: c.ID, CaseName: &c.CaseName, CaseDesc: &c.CaseDesc,
		TargetAppPackage: &c.TargetAppPackage, TargetAppLabel: &c.TargetAppLabel,
		RecordMode: &c.RecordMode, AdvanceSettings: &c.AdvanceSettings,
		OperationLog: &opLog, Priority: &prio, GmtCreate: &c.GmtCreate, GmtModify: &c.GmtModify,
	})
	return caseSnapshot{
		ID: clonePtr(c.ID), CaseName: c.CaseName, CaseDesc: c.CaseDesc,
		TargetAppPackage: c.TargetAppPackage, TargetAppLabel: c.TargetAppLabel,
		RecordMode: c.RecordMode, AdvanceSettings: c.AdvanceSettings,
		OperationLog: opLog, Priority: c.Priority, GmtCreate: c.GmtCreate,
		GmtModify: c.GmtModify, CaseFingerprint: fp,
	}, nil
}
