package managed

import (
	"context"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
)

// InfraFailer is how a worker ends an attempt whose run did not reach a
// product verdict for a reason of the infrastructure (the phone went
// offline, adb broke, another owner held the phone, a replay nobody owned
// was in the way): the store implements it; a worker falls back to
// Fail(category, true) on a store that does not.
type InfraFailer interface {
	// FailInfrastructure is Fail(id, category, true) while the task's
	// retries last: the attempt retryable_failed, the device blamed
	// (failures+1, circuit), the shard requeued after the backoff for any
	// free device. With no retry left (or a cancelled task: then as Fail)
	// the attempt ends not_tested, never failed, keeping c's report,
	// digest and path; the device is blamed all the same, and the shard
	// ends not_tested under category. c.Status is ignored.
	FailInfrastructure(ctx context.Context, id Identity, category string, c Completion) (Outcome, error)
}

var _ InfraFailer = (*store)(nil)

func (s *store) FailInfrastructure(ctx context.Context, id Identity, category string, c Completion) (Outcome, error) {
	cat, err := identifier(category, "failure category")
	if err != nil {
		return Outcome{}, err
	}
	if c.EvidenceDigest != "" && !validSHA256(c.EvidenceDigest) {
		return Outcome{}, storeError(fault.CodeInvalidEvidence, "the evidence digest must be a SHA-256")
	}
	reportJSON, outcomeFP, err := storedReport(c.Report)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	var retried bool
	err = s.fenced(ctx, id, false, func(t txn, a *attemptRow, now int64) error {
		maxRetries, cancel, counted, err := retryBudget(ctx, t, a)
		if err != nil {
			return err
		}
		if retried = cancel != 0 || counted <= maxRetries; retried {
			return nil
		}
		if err := step(attemptMachine, a.status, protocol.EvNotTested); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = $1, failure_category = $2, report_path = $3,
			report_json = $4, verification_outcome_fingerprint = $5, evidence_digest = $6, finished_at_ms = $7
			WHERE attempt_id = $8`, string(protocol.ManagedNotTested), cat, nullable(c.ReportPath), reportJSON,
			outcomeFP, nullable(c.EvidenceDigest), now, a.AttemptID); err != nil {
			return err
		}
		if err := releaseDevice(ctx, t, &a.Identity, releaseFailed, now); err != nil {
			return err
		}
		shardStatus, err := endAttemptOnShard(ctx, t, a.ShardID, false, false, cat, now, counted)
		if err != nil {
			return err
		}
		if err := appendEvent(ctx, t, a.TaskID, EventAttemptFailed, now, a.ShardID, a.AttemptID, map[string]any{
			"attemptId": a.AttemptID, "failureCategory": cat, "retryable": false, "shardStatus": shardStatus,
			"status": string(protocol.ManagedNotTested), "evidenceDigest": nullable(c.EvidenceDigest),
		}); err != nil {
			return err
		}
		out, err = shardOutcome(ctx, t, a, shardStatus, now)
		return err
	})
	if err != nil || !retried {
		return out, err
	}
	// A retry (or a cancelled task): Fail's own transaction, which checks
	// the same budget again under the task's lock.
	return s.Fail(ctx, id, cat, true)
}

// storedReport is a verification report as the store keeps it: redacted,
// canonical JSON, with its outcomeFingerprint (nil when absent).
func storedReport(report any) (string, any, error) {
	m := map[string]any{}
	if report != nil {
		obj, err := want.Object(report, "verification report")
		if err != nil {
			return "", nil, err
		}
		m = redact.New().Value(obj).(map[string]any)
	}
	var outcomeFP any
	if v, ok := m["outcomeFingerprint"]; ok && v != nil {
		fp, _ := v.(string)
		if !validSHA256(fp) {
			return "", nil, storeError(fault.CodeInvalidReport, "the report's outcomeFingerprint is not a SHA-256")
		}
		outcomeFP = fp
	}
	b, err := canonjson.Marshal(m)
	if err != nil {
		return "", nil, storeError(fault.CodeInvalidReport, "the report is not representable as canonical JSON")
	}
	return string(b), outcomeFP, nil
}
