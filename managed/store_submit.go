package managed

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

const taskColumns = `task_id, idempotency_key, plan_fingerprint, status, cancel_requested,
	created_at_ms, updated_at_ms, finished_at_ms`

func scanTask(r row) (Task, error) {
	var t Task
	var cancel int64
	var finished sql.NullInt64
	if err := r.Scan(&t.TaskID, &t.IdempotencyKey, &t.PlanFingerprint, &t.Status, &cancel,
		&t.CreatedAt, &t.UpdatedAt, &finished); err != nil {
		return Task{}, err
	}
	t.SchemaVersion = TaskSchema
	t.CancelRequested = cancel != 0
	if finished.Valid {
		t.FinishedAt = &finished.Int64
	}
	return t, nil
}

func getTask(ctx context.Context, q querier, taskID string) (Task, error) {
	t, err := scanTask(q.queryRow(ctx, `SELECT `+taskColumns+` FROM managed_tasks WHERE task_id = $1`, taskID))
	if errors.Is(err, errNoRows) {
		return Task{}, storeError(fault.CodeTaskNotFound, "no managed task has this id")
	}
	return t, err
}

// normalizedSubmission is a checked submission and its request fingerprint.
type normalizedSubmission struct {
	plan        map[string]any
	planFP      string
	decisions   map[string]any
	targets     []target
	key         string
	token       string
	generated   bool
	retries     int64
	leaseMs     int64
	retentionMs int64
	requestFP   string
}

func normalizeSubmission(sub Submission) (*normalizedSubmission, error) {
	n := &normalizedSubmission{}
	var err error
	if n.plan, n.planFP, err = normalizePlan(sub.Plan); err != nil {
		return nil, err
	}
	n.decisions = map[string]any{}
	if sub.Decisions != nil {
		if n.decisions, err = want.Object(sub.Decisions, "agent decisions"); err != nil {
			return nil, err
		}
	}
	if n.targets, err = expandMatrix(sub.Matrix); err != nil {
		return nil, err
	}
	if n.key, err = identifier(sub.IdempotencyKey, "idempotency key"); err != nil {
		return nil, err
	}
	if n.retries, err = integer(int64(sub.MaxRetries), "max retries", 0, maxRetries); err != nil {
		return nil, err
	}
	if n.leaseMs, err = integer(sub.LeaseDurationMs, "lease duration", minLeaseDurationMs, maxLeaseDurationMs); err != nil {
		return nil, err
	}
	if n.retentionMs, err = integer(sub.RetentionMs, "retention duration", 0, maxRetentionMs); err != nil {
		return nil, err
	}
	n.token = sub.OwnerToken
	if n.token == "" {
		n.token, n.generated = newToken(), true
	}
	if !ValidOwnerToken(n.token) {
		return nil, storeError(fault.CodeInvalidOwnerToken, "the owner token must be 16 to 256 URL-safe characters")
	}
	expanded := make([]any, len(n.targets))
	for i, t := range n.targets {
		expanded[i] = map[string]any{"targetId": t.TargetID, "targetIndex": t.TargetIndex, "replicaIndex": t.ReplicaIndex, "selector": t.Selector}
	}
	n.requestFP, err = canonjson.Fingerprint(map[string]any{
		"plan": n.plan, "matrix": expanded, "decisions": n.decisions,
		"maxRetries": n.retries, "leaseDurationMs": n.leaseMs, "retentionMs": n.retentionMs,
	})
	if err != nil {
		return nil, storeError(fault.CodeInvalidContract, "the submission is not representable as canonical JSON: "+err.Error())
	}
	return n, nil
}

func (s *store) Submit(ctx context.Context, sub Submission) (Task, error) {
	n, err := normalizeSubmission(sub)
	if err != nil {
		return Task{}, err
	}
	task, err := s.submit(ctx, n)
	if err != nil && s.be.uniqueViolation(errors.Unwrap(err)) {
		// A concurrent identical submission won the idempotency key;
		// answer as a resubmission would.
		task, err = s.submit(ctx, n)
	}
	if err != nil {
		return task, err
	}
	task.Warnings, err = s.placementWarnings(ctx, n.targets)
	return task, err
}

// Warning codes of a submission that was accepted but cannot run yet.
const (
	// WarnNoMatchingDevice: no registered device matches a target's
	// selector, so its shards wait until one is registered.
	WarnNoMatchingDevice = "no_matching_device"
	// WarnNoHealthyDevice: devices match, but none is healthy now.
	WarnNoHealthyDevice = "no_healthy_matching_device"
)

// placementWarnings says, per matrix target, when no registered device
// could run it now. The task is queued all the same (devices register and
// recover over time, and solopi-ai accepts such a matrix), but a CI job
// learns at once why it would wait.
func (s *store) placementWarnings(ctx context.Context, targets []target) ([]warning, error) {
	devices, err := s.Devices(ctx)
	if err != nil {
		return nil, err
	}
	var out []warning
	seen := map[string]bool{}
	for _, tg := range targets {
		if seen[tg.TargetID] {
			continue
		}
		seen[tg.TargetID] = true
		raw, _ := json.Marshal(tg.Selector)
		var sel selector
		if err := json.Unmarshal(raw, &sel); err != nil {
			return nil, fmt.Errorf("target selector: %w", err)
		}
		matching, healthy := 0, 0
		for i := range devices {
			if sel.Matches(&devices[i]) {
				matching++
				if devices[i].Health == HealthHealthy {
					healthy++
				}
			}
		}
		switch {
		case matching == 0:
			out = append(out, warning{Code: WarnNoMatchingDevice, TargetID: tg.TargetID,
				Message: "no registered device matches this target's selector: its shards stay queued until one is registered"})
		case healthy == 0:
			out = append(out, warning{Code: WarnNoHealthyDevice, TargetID: tg.TargetID, MatchingDevices: matching,
				Message: "the devices matching this target's selector are not healthy: its shards stay queued until one is"})
		}
	}
	return out, nil
}

func (s *store) submit(ctx context.Context, n *normalizedSubmission) (Task, error) {
	var out Task
	now, err := s.now(ctx)
	if err != nil {
		return Task{}, err
	}
	err = s.write(ctx, func(t txn) error {
		var id, requestFP, owner string
		switch err := t.queryRow(ctx, `SELECT task_id, request_fingerprint, owner_hash FROM managed_tasks WHERE idempotency_key = $1`, n.key).
			Scan(&id, &requestFP, &owner); {
		case err == nil:
			if requestFP != n.requestFP {
				return storeError(fault.CodeIdempotencyConflict, "this idempotency key was used for a different submission").With("taskId", id)
			}
			if !ownerMatches(owner, id, n.token) {
				return storeError(fault.CodeOwnerMismatch, "this idempotency key belongs to another owner")
			}
			task, err := getTask(ctx, t, id)
			task.Idempotent = true
			out = task
			return err
		case !errors.Is(err, errNoRows):
			return err
		}
		return s.insertTask(ctx, t, n, now, &out)
	})
	return out, err
}

func (s *store) insertTask(ctx context.Context, t txn, n *normalizedSubmission, now int64, out *Task) error {
	hex := randomHex()
	taskID := "task-" + hex
	planJSON, err := canonjson.Marshal(n.plan)
	if err != nil {
		return storeError(fault.CodeInvalidPlan, "the plan is not representable as canonical JSON")
	}
	decisionsJSON, err := canonjson.Marshal(n.decisions)
	if err != nil {
		return storeError(fault.CodeInvalidContract, "the agent decisions are not representable as canonical JSON")
	}
	if _, err := t.exec(ctx, `INSERT INTO managed_tasks (task_id, idempotency_key, request_fingerprint, owner_hash,
		plan_json, decisions_json, plan_fingerprint, max_retries, lease_duration_ms, retention_ms, status,
		created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued', $11, $11)`,
		taskID, n.key, n.requestFP, ownerHash(taskID, n.token), string(planJSON), string(decisionsJSON),
		n.planFP, n.retries, n.leaseMs, n.retentionMs, now); err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	shardIDs := make([]string, len(n.targets))
	jobs := make([]river.InsertManyParams, len(n.targets))
	for i, tg := range n.targets {
		shardIDs[i] = fmt.Sprintf("shard-%s-%03d-%03d", hex[:12], tg.TargetIndex, tg.ReplicaIndex)
		selector, _ := canonjson.Marshal(tg.Selector)
		if _, err := t.exec(ctx, `INSERT INTO managed_shards (shard_id, task_id, target_id, target_index,
			replica_index, selector_json, status, created_at_ms, updated_at_ms)
			VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $7)`,
			shardIDs[i], taskID, tg.TargetID, tg.TargetIndex, tg.ReplicaIndex, string(selector), now); err != nil {
			return fmt.Errorf("insert shard: %w", err)
		}
		jobs[i] = shardJob(taskID, shardIDs[i], 0)
	}
	jobIDs, err := t.insertJobs(ctx, jobs)
	if err != nil {
		return err
	}
	for i, id := range jobIDs {
		if _, err := t.exec(ctx, `UPDATE managed_shards SET river_job_id = $1 WHERE shard_id = $2`, id, shardIDs[i]); err != nil {
			return err
		}
	}
	if err := appendEvent(ctx, t, taskID, EventTaskSubmitted, now, "", "", map[string]any{
		"idempotencyKey": n.key, "planFingerprint": n.planFP, "shardCount": len(n.targets),
	}, n.token); err != nil {
		return err
	}
	task, err := getTask(ctx, t, taskID)
	if err != nil {
		return err
	}
	if n.generated {
		task.OwnerToken = n.token // shown once; only its hash is kept
	}
	*out = task
	return nil
}

// appendEvent adds one redacted event to a task's log. The per-task
// sequence comes from the task row's counter, which the update also locks,
// so concurrent writers of one task number their events 1, 2, 3 … without a
// gap or a repeat.
func appendEvent(ctx context.Context, t txn, taskID, typ string, now int64, shardID, attemptID string, content map[string]any, secrets ...string) error {
	var seq int64
	if err := t.queryRow(ctx, `UPDATE managed_tasks SET event_count = event_count + 1 WHERE task_id = $1 RETURNING event_count`, taskID).Scan(&seq); err != nil {
		return fmt.Errorf("number event: %w", err)
	}
	body, err := canonjson.Marshal(redact.New(secrets...).Value(content))
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	_, err = t.exec(ctx, `INSERT INTO managed_events (task_id, task_sequence, shard_id, attempt_id, event_type, timestamp_ms, content_json)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, taskID, seq, nullable(shardID), nullable(attemptID), typ, now, string(body))
	return err
}

// nullable stores "" as NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
