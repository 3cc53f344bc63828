package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/suitereport"
)

// Record is one attempt of a case: names, fingerprints, ids, a verdict and
// times only, never a secret or evidence.
type Record struct {
	BatchID         string
	CaseName        string
	CaseFingerprint string
	Serial          string
	Model           string
	// Shard is the phone a case was bound to ("" when any phone could run
	// it): the attempts of one case in one batch and shard are one run.
	Shard     string
	Attempt   int
	Verdict   suitereport.Verdict
	ErrorCode string
	Started   time.Time
	Ended     time.Time
	Duration  time.Duration
}

func (r Record) check() error {
	var bad []string
	if strings.TrimSpace(r.BatchID) == "" {
		bad = append(bad, "batch id")
	}
	if strings.TrimSpace(r.CaseName) == "" {
		bad = append(bad, "case name")
	}
	if strings.TrimSpace(r.Serial) == "" {
		bad = append(bad, "serial")
	}
	if r.Attempt < 1 {
		bad = append(bad, "attempt number")
	}
	if !r.Verdict.ValidAttempt() {
		bad = append(bad, fmt.Sprintf("verdict %q", r.Verdict))
	}
	if r.Duration < 0 {
		bad = append(bad, "duration")
	}
	if len(bad) > 0 {
		return fault.Usagef(fault.CodeHistoryInvalidRecord, "a history record has no valid %s", strings.Join(bad, ", ")).With("caseName", r.CaseName)
	}
	return nil
}

// Append adds the records in one transaction (all or none).
func (s *Store) Append(ctx context.Context, records ...Record) error {
	if s.readOnly {
		return s.readOnlyError()
	}
	for _, r := range records {
		if err := r.check(); err != nil {
			return err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err, s.path, "cannot write to the history")
	}
	defer tx.Rollback()
	for _, r := range records {
		if _, err := tx.ExecContext(ctx, `INSERT INTO attempts (batch_id, case_name, case_fingerprint, serial, model, shard, attempt,
			verdict, error_code, started_at_ms, ended_at_ms, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.BatchID, r.CaseName, r.CaseFingerprint, r.Serial, r.Model, r.Shard, r.Attempt, string(r.Verdict), r.ErrorCode,
			r.Started.UnixMilli(), r.Ended.UnixMilli(), r.Duration.Milliseconds()); err != nil {
			return classify(err, s.path, "cannot write to the history")
		}
	}
	if err := tx.Commit(); err != nil {
		return classify(err, s.path, "cannot write to the history")
	}
	return nil
}
