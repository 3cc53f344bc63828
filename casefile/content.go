package casefile

// ContentFingerprint is what a case is, apart from the device that holds
// it: caseFingerprint's encoding (Fingerprint) over the fields and the
// snapshot operationLog the device stores and reads back for it (after
// ApplyDeviceImportDefaults), with the device's id and times left out (fed
// as null). A normalised case file and the device's read-back of its
// import have the same content fingerprint, on every phone and for every
// import; two different cases do not. seed decrypts encrypted parameters
// as the device does (paramcrypt.DefaultSeed unless the device's
// KEY_AES_KEY differs).
func ContentFingerprint(c *Case, seed string) (string, error) {
	d := ApplyDeviceImportDefaults(c, 0, 0)
	opLog, err := SnapshotOperationLog(d.Steps, seed)
	if err != nil {
		return "", err
	}
	prio := int64(d.Priority)
	return Fingerprint(FingerprintInput{
		CaseName: &d.CaseName, CaseDesc: &d.CaseDesc, TargetAppPackage: &d.TargetAppPackage, TargetAppLabel: &d.TargetAppLabel,
		RecordMode: &d.RecordMode, AdvanceSettings: &d.AdvanceSettings, OperationLog: &opLog, Priority: &prio,
	}), nil
}
