package managed

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// Report is a task's matrix report (managed-report, GET …/report).
type Report struct {
	SchemaVersion      string        `json:"schemaVersion"`
	TaskID             string        `json:"taskId"`
	PlanFingerprint    string        `json:"planFingerprint"`
	Status             string        `json:"status"`
	Terminal           bool          `json:"terminal"`
	ExitCode           int           `json:"exitCode"`
	OutcomeFingerprint string        `json:"outcomeFingerprint"`
	Shards             []ReportShard `json:"shards"`
	EventCount         int64         `json:"eventCount"`
	CreatedAt          int64         `json:"createdAt"`
	FinishedAt         *int64        `json:"finishedAt"`
}

// ReportShard is one shard of a report.
type ReportShard struct {
	ShardID         string          `json:"shardId"`
	TargetID        string          `json:"targetId"`
	ReplicaIndex    int64           `json:"replicaIndex"`
	Selector        json.RawMessage `json:"selector"`
	Status          string          `json:"status"`
	DeviceID        *string         `json:"deviceId"`
	FailureCategory *string         `json:"failureCategory"`
	Attempts        []ReportAttempt `json:"attempts"`
}

// ReportAttempt is one attempt of a shard.
type ReportAttempt struct {
	AttemptID                      string  `json:"attemptId"`
	AttemptNumber                  int64   `json:"attemptNumber"`
	WorkerID                       string  `json:"workerId"`
	DeviceID                       string  `json:"deviceId"`
	Serial                         string  `json:"serial"`
	OwnerGeneration                int64   `json:"ownerGeneration"`
	Status                         string  `json:"status"`
	FailureCategory                *string `json:"failureCategory"`
	VerificationOutcomeFingerprint *string `json:"verificationOutcomeFingerprint"`
	EvidenceDigest                 *string `json:"evidenceDigest"`
	ReportPath                     *string `json:"reportPath"`
	EvidencePurgedAt               *int64  `json:"evidencePurgedAt"`
	CreatedAt                      int64   `json:"createdAt"`
	StartedAt                      *int64  `json:"startedAt"`
	FinishedAt                     *int64  `json:"finishedAt"`
}

func str(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func num(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

func (s *store) Health(ctx context.Context) (Health, error) {
	q := s.be.reader()
	h := Health{Ready: true, SchemaVersion: SchemaVersion, Database: s.be.location(), Backend: s.be.name()}
	var err error
	if h.Devices, err = countBy(ctx, q, `SELECT health, COUNT(*) FROM managed_devices GROUP BY health`); err != nil {
		return h, asFault(err)
	}
	if h.Tasks, err = countBy(ctx, q, `SELECT status, COUNT(*) FROM managed_tasks GROUP BY status`); err != nil {
		return h, asFault(err)
	}
	err = q.queryRow(ctx, `SELECT COUNT(*) FROM managed_attempts WHERE status IN ('leased', 'running')`).Scan(&h.ActiveAssignments)
	return h, asFault(err)
}

func (s *store) Status(ctx context.Context, taskID string) (TaskStatus, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return TaskStatus{}, err
	}
	q := s.be.reader()
	task, err := getTask(ctx, q, id)
	if err != nil {
		return TaskStatus{}, asFault(err)
	}
	counts, err := countBy(ctx, q, `SELECT status, COUNT(*) FROM managed_shards WHERE task_id = $1 GROUP BY status`, id)
	if err != nil {
		return TaskStatus{}, asFault(err)
	}
	if counts["queued"] > 0 {
		if task.Warnings, err = s.waitingWarnings(ctx, id); err != nil {
			return TaskStatus{}, err
		}
	}
	return TaskStatus{Task: task, ShardCounts: counts}, nil
}

// waitingWarnings are the placement warnings of a task's queued shards: a
// task polled while it waits says when no registered device can run it.
func (s *store) waitingWarnings(ctx context.Context, taskID string) ([]warning, error) {
	rs, err := s.be.reader().query(ctx, `SELECT target_id, target_index, selector_json FROM managed_shards
		WHERE task_id = $1 AND status = 'queued' ORDER BY target_index, replica_index`, taskID)
	if err != nil {
		return nil, asFault(err)
	}
	defer rs.Close()
	var targets []target
	for rs.Next() {
		var tg target
		var sel string
		if err := rs.Scan(&tg.TargetID, &tg.TargetIndex, &sel); err != nil {
			return nil, asFault(err)
		}
		if err := json.Unmarshal([]byte(sel), &tg.Selector); err != nil {
			return nil, fmt.Errorf("shard selector: %w", err)
		}
		targets = append(targets, tg)
	}
	if err := rs.Err(); err != nil {
		return nil, asFault(err)
	}
	return s.placementWarnings(ctx, targets)
}

func (s *store) Events(ctx context.Context, taskID string, after int64) ([]Event, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, storeError(fault.CodeInvalidContract, "the event cursor must be a non-negative integer")
	}
	q := s.be.reader()
	if _, err := getTask(ctx, q, id); err != nil {
		return nil, asFault(err)
	}
	rs, err := q.query(ctx, `SELECT sequence, task_sequence, task_id, shard_id, attempt_id, event_type, timestamp_ms, content_json
		FROM managed_events WHERE task_id = $1 AND task_sequence > $2 ORDER BY task_sequence`, id, after)
	if err != nil {
		return nil, asFault(err)
	}
	defer rs.Close()
	out := []Event{}
	for rs.Next() {
		var e Event
		var shard, attempt sql.NullString
		var content string
		if err := rs.Scan(&e.Sequence, &e.TaskSequence, &e.TaskID, &shard, &attempt, &e.Type, &e.Timestamp, &content); err != nil {
			return nil, asFault(err)
		}
		e.ShardID, e.AttemptID, e.Content = str(shard), str(attempt), json.RawMessage(content)
		out = append(out, e)
	}
	return out, asFault(rs.Err())
}

func (s *store) Report(ctx context.Context, taskID string) (Report, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return Report{}, err
	}
	q := s.be.reader()
	task, err := getTask(ctx, q, id)
	if err != nil {
		return Report{}, asFault(err)
	}
	r := Report{SchemaVersion: ReportSchema, TaskID: id, PlanFingerprint: task.PlanFingerprint, Status: task.Status,
		Terminal: terminal(task.Status), ExitCode: outcome.VerdictExit(task.Status), CreatedAt: task.CreatedAt,
		FinishedAt: task.FinishedAt, Shards: []ReportShard{}}
	if r.Shards, err = reportShards(ctx, q, id); err != nil {
		return Report{}, asFault(err)
	}
	semantic := make([]any, len(r.Shards))
	for i, sh := range r.Shards {
		outcomes := []any{}
		for _, a := range sh.Attempts {
			if a.VerificationOutcomeFingerprint != nil {
				outcomes = append(outcomes, *a.VerificationOutcomeFingerprint)
			}
		}
		var category any
		if sh.FailureCategory != nil {
			category = *sh.FailureCategory
		}
		semantic[i] = map[string]any{"targetId": sh.TargetID, "replicaIndex": sh.ReplicaIndex, "status": sh.Status,
			"failureCategory": category, "outcomes": outcomes}
	}
	if r.OutcomeFingerprint, err = canonjson.Fingerprint(map[string]any{
		"planFingerprint": r.PlanFingerprint, "status": r.Status, "shards": semantic,
	}); err != nil {
		return Report{}, asFault(err)
	}
	err = q.queryRow(ctx, `SELECT COUNT(*) FROM managed_events WHERE task_id = $1`, id).Scan(&r.EventCount)
	return r, asFault(err)
}

func reportShards(ctx context.Context, q querier, taskID string) ([]ReportShard, error) {
	rs, err := q.query(ctx, `SELECT shard_id, target_id, replica_index, selector_json, status, assigned_device_id, failure_category
		FROM managed_shards WHERE task_id = $1 ORDER BY target_index, replica_index, shard_id`, taskID)
	if err != nil {
		return nil, err
	}
	shards := []ReportShard{}
	index := map[string]int{}
	for rs.Next() {
		var sh ReportShard
		var selector string
		var device, category sql.NullString
		if err := rs.Scan(&sh.ShardID, &sh.TargetID, &sh.ReplicaIndex, &selector, &sh.Status, &device, &category); err != nil {
			rs.Close()
			return nil, err
		}
		sh.Selector, sh.DeviceID, sh.FailureCategory, sh.Attempts = json.RawMessage(selector), str(device), str(category), []ReportAttempt{}
		index[sh.ShardID] = len(shards)
		shards = append(shards, sh)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	rs, err = q.query(ctx, `SELECT shard_id, attempt_id, attempt_number, worker_id, device_id, serial, owner_generation, status,
		failure_category, verification_outcome_fingerprint, evidence_digest, report_path, evidence_purged_at_ms,
		created_at_ms, started_at_ms, finished_at_ms FROM managed_attempts WHERE task_id = $1 ORDER BY shard_id, attempt_number`, taskID)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var shardID string
		var a ReportAttempt
		var category, outcomeFP, digest, path sql.NullString
		var purged, started, finished sql.NullInt64
		if err := rs.Scan(&shardID, &a.AttemptID, &a.AttemptNumber, &a.WorkerID, &a.DeviceID, &a.Serial, &a.OwnerGeneration,
			&a.Status, &category, &outcomeFP, &digest, &path, &purged, &a.CreatedAt, &started, &finished); err != nil {
			return nil, err
		}
		a.FailureCategory, a.VerificationOutcomeFingerprint, a.EvidenceDigest, a.ReportPath = str(category), str(outcomeFP), str(digest), str(path)
		a.EvidencePurgedAt, a.StartedAt, a.FinishedAt = num(purged), num(started), num(finished)
		if i, ok := index[shardID]; ok {
			shards[i].Attempts = append(shards[i].Attempts, a)
		}
	}
	return shards, rs.Err()
}
