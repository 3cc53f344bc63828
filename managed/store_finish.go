package managed

import (
	"context"
	"fmt"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
)

// verdictEvents maps a Result Judge verdict to its transition.
var verdictEvents = map[string]protocol.Event{
	string(protocol.ManagedPassed):    protocol.EvPass,
	string(protocol.ManagedFailed):    protocol.EvFailVerdt,
	string(protocol.ManagedNotTested): protocol.EvNotTested,
}

func (s *store) Complete(ctx context.Context, id Identity, c Completion) (Outcome, error) {
	ev, ok := verdictEvents[c.Status]
	if !ok {
		return Outcome{}, storeError(fault.CodeInvalidResult, "a completion's status must be passed, failed or not_tested")
	}
	if c.EvidenceDigest != "" && !validSHA256(c.EvidenceDigest) {
		return Outcome{}, storeError(fault.CodeInvalidEvidence, "the evidence digest must be a SHA-256")
	}
	if c.FailureCategory != "" {
		if _, err := identifier(c.FailureCategory, "failure category"); err != nil {
			return Outcome{}, err
		}
	}
	report := map[string]any{}
	if c.Report != nil {
		m, err := want.Object(c.Report, "verification report")
		if err != nil {
			return Outcome{}, err
		}
		report = redact.New().Value(m).(map[string]any)
	}
	var outcomeFP any
	if v, ok := report["outcomeFingerprint"]; ok && v != nil {
		fp, _ := v.(string)
		if !validSHA256(fp) {
			return Outcome{}, storeError(fault.CodeInvalidReport, "the report's outcomeFingerprint is not a SHA-256")
		}
		outcomeFP = fp
	}
	reportJSON, err := canonjson.Marshal(report)
	if err != nil {
		return Outcome{}, storeError(fault.CodeInvalidReport, "the report is not representable as canonical JSON")
	}
	var out Outcome
	err = s.fenced(ctx, id, false, func(t txn, a *attemptRow, now int64) error {
		var cancel int64
		if err := t.queryRow(ctx, `SELECT cancel_requested FROM managed_tasks WHERE task_id = $1`, a.TaskID).Scan(&cancel); err != nil {
			return err
		}
		if cancel != 0 {
			return storeError(fault.CodeStaleAssignment, "the task was cancelled; its results are not accepted")
		}
		if err := step(attemptMachine, a.status, ev); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = $1, failure_category = $2, report_path = $3,
			report_json = $4, verification_outcome_fingerprint = $5, evidence_digest = $6, finished_at_ms = $7
			WHERE attempt_id = $8`, c.Status, nullable(c.FailureCategory), nullable(c.ReportPath), string(reportJSON),
			outcomeFP, nullable(c.EvidenceDigest), now, a.AttemptID); err != nil {
			return err
		}
		if err := finishShard(ctx, t, a.ShardID, ev, c.Status, c.FailureCategory, a.DeviceID, now); err != nil {
			return err
		}
		if err := releaseDevice(ctx, t, &a.Identity, releaseSucceeded, now); err != nil {
			return err
		}
		if err := appendEvent(ctx, t, a.TaskID, EventAttemptCompleted, now, a.ShardID, a.AttemptID, map[string]any{
			"attemptId": a.AttemptID, "status": c.Status, "failureCategory": nullable(c.FailureCategory),
			"evidenceDigest": nullable(c.EvidenceDigest),
		}); err != nil {
			return err
		}
		out, err = shardOutcome(ctx, t, a, c.Status, now)
		return err
	})
	return out, err
}

func (s *store) Fail(ctx context.Context, id Identity, category string, retryable bool) (Outcome, error) {
	cat, err := identifier(category, "failure category")
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	err = s.fenced(ctx, id, false, func(t txn, a *attemptRow, now int64) error {
		maxRetries, cancel, counted, err := retryBudget(ctx, t, a)
		if err != nil {
			return err
		}
		retry := retryable && cancel == 0 && counted <= maxRetries
		ev := protocol.EvGiveUp
		if retry {
			ev = protocol.EvRetryable
		}
		next, err := attemptMachine.Step(protocol.State(a.status), ev)
		if err != nil {
			return fmt.Errorf("managed store: %w", err)
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = $1, failure_category = $2, finished_at_ms = $3 WHERE attempt_id = $4`,
			string(next), cat, now, a.AttemptID); err != nil {
			return err
		}
		if err := releaseDevice(ctx, t, &a.Identity, releaseFailed, now); err != nil {
			return err
		}
		shardStatus, err := endAttemptOnShard(ctx, t, a.ShardID, retry, cancel != 0, cat, now, counted)
		if err != nil {
			return err
		}
		if err := appendEvent(ctx, t, a.TaskID, EventAttemptFailed, now, a.ShardID, a.AttemptID, map[string]any{
			"attemptId": a.AttemptID, "failureCategory": cat, "retryable": retry, "shardStatus": shardStatus,
		}); err != nil {
			return err
		}
		out, err = shardOutcome(ctx, t, a, shardStatus, now)
		return err
	})
	return out, err
}

func (s *store) Release(ctx context.Context, id Identity) (Outcome, error) {
	var out Outcome
	err := s.fenced(ctx, id, false, func(t txn, a *attemptRow, now int64) error {
		if err := step(attemptMachine, a.status, protocol.EvRelease); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = 'retryable_failed', failure_category = $1, finished_at_ms = $2 WHERE attempt_id = $3`,
			CategoryWorkerStopped, now, a.AttemptID); err != nil {
			return err
		}
		if err := releaseDevice(ctx, t, &a.Identity, releaseNeutral, now); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_shards SET status = 'queued', current_attempt_id = NULL,
			assigned_device_id = NULL, owner_generation = NULL, lease_id = NULL, lease_expires_ms = NULL,
			next_attempt_ms = $1, released_count = released_count + 1, updated_at_ms = $1 WHERE shard_id = $2`, now, a.ShardID); err != nil {
			return err
		}
		if err := appendEvent(ctx, t, a.TaskID, eventAttemptReleased, now, a.ShardID, a.AttemptID, map[string]any{
			"attemptId": a.AttemptID, "reason": CategoryWorkerStopped,
		}); err != nil {
			return err
		}
		var err error
		out, err = shardOutcome(ctx, t, a, string(protocol.ManagedQueued), now)
		return err
	})
	return out, err
}

func shardOutcome(ctx context.Context, t txn, a *attemptRow, shardStatus string, now int64) (Outcome, error) {
	taskStatus, err := refreshTask(ctx, t, a.TaskID, now)
	return Outcome{TaskID: a.TaskID, ShardID: a.ShardID, ShardStatus: shardStatus, TaskStatus: taskStatus}, err
}

// finishShard makes a shard terminal by ev (keeping the device that ran it).
func finishShard(ctx context.Context, t txn, shardID string, ev protocol.Event, status, category, deviceID string, now int64) error {
	var from string
	if err := t.queryRow(ctx, `SELECT status FROM managed_shards WHERE shard_id = $1`, shardID).Scan(&from); err != nil {
		return err
	}
	if err := step(shardMachine, from, ev); err != nil {
		return err
	}
	_, err := t.exec(ctx, `UPDATE managed_shards SET status = $1, result_status = $1, failure_category = $2,
		current_attempt_id = NULL, assigned_device_id = $3, owner_generation = NULL, lease_id = NULL,
		lease_expires_ms = NULL, updated_at_ms = $4, finished_at_ms = $4 WHERE shard_id = $5`,
		status, nullable(category), nullable(deviceID), now, shardID)
	return err
}

// endAttemptOnShard requeues the shard of a failed or expired attempt after
// the backoff of counted attempt n, or ends it: cancelled when its task was,
// not_tested otherwise. It returns the shard's new status.
func endAttemptOnShard(ctx context.Context, t txn, shardID string, retry, cancelled bool, category string, now, n int64) (string, error) {
	var from string
	if err := t.queryRow(ctx, `SELECT status FROM managed_shards WHERE shard_id = $1`, shardID).Scan(&from); err != nil {
		return "", err
	}
	if retry {
		if err := step(shardMachine, from, protocol.EvRequeue); err != nil {
			return "", err
		}
		_, err := t.exec(ctx, `UPDATE managed_shards SET status = 'queued', current_attempt_id = NULL,
			assigned_device_id = NULL, owner_generation = NULL, lease_id = NULL, lease_expires_ms = NULL,
			next_attempt_ms = $1, failure_category = $2, updated_at_ms = $3 WHERE shard_id = $4`,
			now+Backoff(int(n)).Milliseconds(), category, now, shardID)
		return string(protocol.ManagedQueued), err
	}
	ev, status := protocol.EvGiveUp, string(protocol.ManagedNotTested)
	if cancelled {
		ev, status = protocol.EvCancelled, string(protocol.ManagedCancelled)
	}
	if err := step(shardMachine, from, ev); err != nil {
		return "", err
	}
	_, err := t.exec(ctx, `UPDATE managed_shards SET status = $1, result_status = $1, failure_category = $2,
		current_attempt_id = NULL, assigned_device_id = NULL, owner_generation = NULL, lease_id = NULL,
		lease_expires_ms = NULL, updated_at_ms = $3, finished_at_ms = $3 WHERE shard_id = $4`, status, category, now, shardID)
	return status, err
}

type releaseMode int

const (
	releaseSucceeded releaseMode = iota // a verdict: the device works; reset its circuit
	releaseFailed                       // an infrastructure failure: count it, maybe open the circuit
	releaseNeutral                      // a cancel or hand-back: the device is not to blame
)

// releaseDevice frees the device of an attempt, only if it still holds that
// attempt's lease and generation.
func releaseDevice(ctx context.Context, t txn, id *Identity, mode releaseMode, now int64) error {
	var q string
	args := []any{now, id.DeviceID, id.LeaseID, id.OwnerGeneration}
	switch mode {
	case releaseSucceeded:
		q = `consecutive_failures = 0, circuit_open_until_ms = 0,`
	case releaseFailed:
		q = `consecutive_failures = consecutive_failures + 1, circuit_open_until_ms = CASE
			WHEN consecutive_failures + 1 >= $5 THEN $6 ELSE circuit_open_until_ms END,`
		args = append(args, int64(CircuitFailureThreshold), now+CircuitOpen.Milliseconds())
	}
	_, err := t.exec(ctx, `UPDATE managed_devices SET lease_id = NULL, lease_task_id = NULL, lease_shard_id = NULL,
		lease_expires_ms = NULL, `+q+` updated_at_ms = $1 WHERE device_id = $2 AND lease_id = $3 AND generation = $4`, args...)
	return err
}

// refreshTask recomputes a task's status from its shards: running while a
// shard is leased or running, queued otherwise; once every shard is
// terminal, failed beats not_tested beats cancelled beats passed.
func refreshTask(ctx context.Context, t txn, taskID string, now int64) (string, error) {
	var status string
	if err := t.queryRow(ctx, `SELECT status FROM managed_tasks WHERE task_id = $1`, taskID).Scan(&status); err != nil {
		return "", err
	}
	if terminal(status) {
		return status, nil
	}
	counts, err := countBy(ctx, t, `SELECT status, COUNT(*) FROM managed_shards WHERE task_id = $1 GROUP BY status`, taskID)
	if err != nil {
		return "", err
	}
	var total, done int64
	for st, n := range counts {
		total += n
		if terminal(st) {
			done += n
		}
	}
	if total > 0 && done == total {
		ev, to := protocol.EvPass, protocol.ManagedPassed
		switch {
		case counts[string(protocol.ManagedFailed)] > 0:
			ev, to = protocol.EvFailVerdt, protocol.ManagedFailed
		case counts[string(protocol.ManagedNotTested)] > 0:
			ev, to = protocol.EvNotTested, protocol.ManagedNotTested
		case counts[string(protocol.ManagedCancelled)] > 0:
			ev, to = protocol.EvCancelled, protocol.ManagedCancelled
		}
		if err := setTaskStatus(ctx, t, taskID, status, ev, now); err != nil {
			return "", err
		}
		return string(to), appendEvent(ctx, t, taskID, EventTaskFinished, now, "", "", map[string]any{"status": string(to)})
	}
	active := counts[string(protocol.ManagedLeased)]+counts[string(protocol.ManagedRunning)] > 0
	switch {
	case active && status == string(protocol.ManagedQueued):
		return string(protocol.ManagedRunning), setTaskStatus(ctx, t, taskID, status, protocol.EvClaim, now)
	case !active && status == string(protocol.ManagedRunning):
		return string(protocol.ManagedQueued), setTaskStatus(ctx, t, taskID, status, protocol.EvRequeue, now)
	}
	return status, nil
}

// countBy runs a "SELECT key, COUNT(*) … GROUP BY key" query.
func countBy(ctx context.Context, q querier, sql string, args ...any) (map[string]int64, error) {
	rs, err := q.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]int64{}
	for rs.Next() {
		var k string
		var n int64
		if err := rs.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rs.Err()
}

// retryBudget reads what decides whether a failed attempt is retried: the
// task's retry budget, whether its owner asked to cancel it, and how many
// attempts of the shard count against the budget (hand-backs do not).
func retryBudget(ctx context.Context, t txn, a *attemptRow) (maxRetries, cancel, counted int64, err error) {
	var released int64
	err = t.queryRow(ctx, `SELECT t.max_retries, t.cancel_requested, s.released_count
		FROM managed_tasks t JOIN managed_shards s ON s.task_id = t.task_id WHERE s.shard_id = $1`, a.ShardID).
		Scan(&maxRetries, &cancel, &released)
	return maxRetries, cancel, a.number - released, err
}
