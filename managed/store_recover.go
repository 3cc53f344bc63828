package managed

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

func (s *store) Cancel(ctx context.Context, taskID, ownerToken string) (Task, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return Task{}, err
	}
	if !ValidOwnerToken(ownerToken) {
		return Task{}, storeError(fault.CodeInvalidOwnerToken, "the owner token must be 16 to 256 URL-safe characters")
	}
	var out Task
	now, err := s.now(ctx)
	if err != nil {
		return Task{}, err
	}
	err = s.write(ctx, func(t txn) error {
		if err := t.lockTask(ctx, id); err != nil {
			return err
		}
		var owner string
		if err := t.queryRow(ctx, `SELECT owner_hash FROM managed_tasks WHERE task_id = $1`, id).Scan(&owner); errors.Is(err, errNoRows) {
			return storeError(fault.CodeTaskNotFound, "no managed task has this id")
		} else if err != nil {
			return err
		}
		if !ownerMatches(owner, id, ownerToken) {
			return storeError(fault.CodeOwnerMismatch, "the owner token does not match this task")
		}
		task, err := getTask(ctx, t, id)
		if err != nil {
			return err
		}
		if terminal(task.Status) {
			task.Idempotent = true
			out = task
			return nil
		}
		fenced, err := s.cancelActive(ctx, t, id, now)
		if err != nil {
			return err
		}
		if err := setTaskStatus(ctx, t, id, task.Status, protocol.EvCancelled, now); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_tasks SET cancel_requested = 1 WHERE task_id = $1`, id); err != nil {
			return err
		}
		if err := appendEvent(ctx, t, id, EventTaskCancelled, now, "", "", map[string]any{"fencedAttempts": fenced}, ownerToken); err != nil {
			return err
		}
		out, err = getTask(ctx, t, id)
		return err
	})
	return out, err
}

// cancelActive fences every active attempt of a task, ends its live shards
// cancelled and cancels their River jobs: a queued job is cancelled at once,
// a running job's worker sees its context cancelled and stops the device
// work it started. It returns how many attempts it fenced.
func (s *store) cancelActive(ctx context.Context, t txn, taskID string, now int64) (int, error) {
	rs, err := t.query(ctx, `SELECT attempt_id, shard_id, device_id, lease_id, owner_generation FROM managed_attempts
		WHERE task_id = $1 AND status IN ('leased', 'running') ORDER BY created_at_ms, attempt_id`, taskID)
	if err != nil {
		return 0, err
	}
	var active []Identity
	for rs.Next() {
		id := Identity{TaskID: taskID}
		if err := rs.Scan(&id.AttemptID, &id.ShardID, &id.DeviceID, &id.LeaseID, &id.OwnerGeneration); err != nil {
			rs.Close()
			return 0, err
		}
		active = append(active, id)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return 0, err
	}
	for i := range active {
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = 'cancelled', failure_category = $1, finished_at_ms = $2
			WHERE attempt_id = $3`, CategoryCancelledByOwner, now, active[i].AttemptID); err != nil {
			return 0, err
		}
		if err := releaseDevice(ctx, t, &active[i], releaseNeutral, now); err != nil {
			return 0, err
		}
	}
	jobs, err := liveShardJobs(ctx, t, taskID)
	if err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `UPDATE managed_shards SET status = 'cancelled', result_status = 'cancelled',
		failure_category = $1, current_attempt_id = NULL, owner_generation = NULL, lease_id = NULL,
		lease_expires_ms = NULL, updated_at_ms = $2, finished_at_ms = $2
		WHERE task_id = $3 AND status NOT IN ('passed', 'failed', 'not_tested', 'cancelled')`,
		CategoryCancelledByOwner, now, taskID); err != nil {
		return 0, err
	}
	for _, j := range jobs {
		if err := t.cancelJob(ctx, j); err != nil {
			return 0, err
		}
	}
	return len(active), nil
}

func liveShardJobs(ctx context.Context, q querier, taskID string) ([]int64, error) {
	rs, err := q.query(ctx, `SELECT river_job_id FROM managed_shards WHERE task_id = $1 AND river_job_id IS NOT NULL
		AND status NOT IN ('passed', 'failed', 'not_tested', 'cancelled')`, taskID)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

func (s *store) ShardJobs(ctx context.Context, taskID string) ([]ShardJob, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return nil, err
	}
	rs, err := s.be.reader().query(ctx, `SELECT shard_id, status, river_job_id FROM managed_shards WHERE task_id = $1
		ORDER BY target_index, replica_index`, id)
	if err != nil {
		return nil, asFault(err)
	}
	var out []ShardJob
	for rs.Next() {
		var j ShardJob
		var job sql.NullInt64
		if err := rs.Scan(&j.ShardID, &j.Status, &job); err != nil {
			rs.Close()
			return nil, asFault(err)
		}
		j.JobID = job.Int64
		out = append(out, j)
	}
	rs.Close() // before River's query: SQLite has one connection
	if err := rs.Err(); err != nil {
		return nil, asFault(err)
	}
	ids := make([]int64, 0, len(out))
	for _, j := range out {
		if j.JobID != 0 {
			ids = append(ids, j.JobID)
		}
	}
	states, err := s.be.jobStates(ctx, ids)
	if err != nil {
		return nil, asFault(err)
	}
	for i := range out {
		out[i].JobState = string(states[out[i].JobID])
	}
	return out, nil
}

// Recover expires every overdue lease and gives up shards whose River job
// River itself gave up, one task per transaction.
func (s *store) Recover(ctx context.Context) (Recovery, error) {
	var total Recovery
	now, err := s.now(ctx)
	if err != nil {
		return total, err
	}
	tasks, err := distinct(ctx, s.be.reader(), `SELECT DISTINCT task_id FROM managed_attempts
		WHERE status IN ('leased', 'running') AND lease_expires_ms <= $1`, now)
	if err != nil {
		return total, asFault(err)
	}
	for _, taskID := range tasks {
		err := s.write(ctx, func(t txn) error {
			r, err := s.expireTask(ctx, t, taskID, now)
			total.Requeued += r.Requeued
			total.Terminated += r.Terminated
			return err
		})
		if err != nil {
			return total, err
		}
	}
	r, err := s.reconcileCarriers(ctx)
	total.Requeued += r.Requeued
	total.Terminated += r.Terminated
	return total, err
}

func distinct(ctx context.Context, q querier, sql string, args ...any) ([]string, error) {
	rs, err := q.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}

func (s *store) expireTask(ctx context.Context, t txn, taskID string, now int64) (Recovery, error) {
	var r Recovery
	if err := t.lockTask(ctx, taskID); err != nil {
		return r, err
	}
	var maxRetries, cancel int64
	if err := t.queryRow(ctx, `SELECT max_retries, cancel_requested FROM managed_tasks WHERE task_id = $1`, taskID).Scan(&maxRetries, &cancel); err != nil {
		return r, err
	}
	rs, err := t.query(ctx, `SELECT a.attempt_id, a.shard_id, a.device_id, a.lease_id, a.owner_generation,
		a.attempt_number, a.status, s.released_count FROM managed_attempts a JOIN managed_shards s ON s.shard_id = a.shard_id
		WHERE a.task_id = $1 AND a.status IN ('leased', 'running') AND a.lease_expires_ms <= $2
		ORDER BY a.created_at_ms, a.attempt_id`, taskID, now)
	if err != nil {
		return r, err
	}
	type expired struct {
		Identity
		number, released int64
		status           string
	}
	var list []expired
	for rs.Next() {
		e := expired{Identity: Identity{TaskID: taskID}}
		if err := rs.Scan(&e.AttemptID, &e.ShardID, &e.DeviceID, &e.LeaseID, &e.OwnerGeneration, &e.number, &e.status, &e.released); err != nil {
			rs.Close()
			return r, err
		}
		list = append(list, e)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return r, err
	}
	for _, e := range list {
		if err := releaseDevice(ctx, t, &e.Identity, releaseFailed, now); err != nil {
			return r, err
		}
		if err := step(attemptMachine, e.status, protocol.EvExpire); err != nil {
			return r, err
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = 'expired', failure_category = $1, finished_at_ms = $2
			WHERE attempt_id = $3`, CategoryLeaseExpired, now, e.AttemptID); err != nil {
			return r, err
		}
		counted := e.number - e.released
		retry := cancel == 0 && counted <= maxRetries
		status, err := endAttemptOnShard(ctx, t, e.ShardID, retry, cancel != 0, CategoryLeaseExpired, now, counted)
		if err != nil {
			return r, err
		}
		outcome := status
		if retry {
			// The expired attempt's River job is still "running" as far as
			// River knows (its worker vanished), and River rescues such a
			// job only after RescueStuckJobsAfter. A new job carries the
			// shard on (it snoozes until the backoff ends); the old one,
			// when it runs again, finds itself superseded.
			outcome = "requeued"
			if err := replaceCarrier(ctx, t, taskID, e.ShardID, counted, now); err != nil {
				return r, err
			}
			r.Requeued++
		} else {
			r.Terminated++
		}
		if err := appendEvent(ctx, t, taskID, EventLeaseExpired, now, e.ShardID, e.AttemptID, map[string]any{
			"attemptId": e.AttemptID, "deviceId": e.DeviceID, "ownerGeneration": e.OwnerGeneration, "outcome": outcome,
		}); err != nil {
			return r, err
		}
	}
	_, err = refreshTask(ctx, t, taskID, now)
	return r, err
}

// abandonedCategory is the failure category of a queued shard whose River
// job ended without it: an operator cancelled or deleted the job, or River
// discarded it. "" means the job is still live.
func abandonedCategory(state rivertype.JobState, found bool) string {
	switch {
	case !found:
		return categoryJobDeleted
	case state == rivertype.JobStateCancelled:
		return CategoryJobCancelled
	case state == rivertype.JobStateDiscarded, state == rivertype.JobStateCompleted:
		return categoryJobDiscarded
	}
	return ""
}

// reconcileCarriers looks after the River jobs of queued shards. A shard
// whose job is gone (an operator cancelled or deleted it, River discarded
// it) ends not_tested: nothing would ever run it and its task would never
// finish. A shard whose job River still shows running after the shard sat
// queued for a whole lease lost its job to a worker process that died with
// the job fetched (River rescues such a job only after an hour): it gets a
// new job, as after a lease expiry. A live worker holds a queued shard's job
// for the claim alone, so a job superseded by mistake only finds itself
// superseded when it claims.
func (s *store) reconcileCarriers(ctx context.Context) (Recovery, error) {
	var r Recovery
	type carrier struct {
		task, shard      string
		queuedSince      int64 // the shard's last change
		leaseMs, counted int64
	}
	rs, err := s.be.reader().query(ctx, `SELECT s.task_id, s.shard_id, s.river_job_id, s.updated_at_ms, t.lease_duration_ms,
		s.attempt_count - s.released_count FROM managed_shards s JOIN managed_tasks t ON t.task_id = s.task_id
		WHERE s.status = 'queued' AND s.river_job_id IS NOT NULL AND t.cancel_requested = 0`)
	if err != nil {
		return r, asFault(err)
	}
	carriers := map[int64]carrier{}
	var ids []int64
	for rs.Next() {
		var c carrier
		var id int64
		if err := rs.Scan(&c.task, &c.shard, &id, &c.queuedSince, &c.leaseMs, &c.counted); err != nil {
			rs.Close()
			return r, asFault(err)
		}
		carriers[id] = c
		ids = append(ids, id)
	}
	rs.Close()
	if err := rs.Err(); err != nil || len(ids) == 0 {
		return r, asFault(err)
	}
	states, err := s.be.jobStates(ctx, ids)
	if err != nil {
		return r, asFault(err)
	}
	slices.Sort(ids)
	for _, id := range ids {
		state, found := states[id]
		c := carriers[id]
		now, err := s.now(ctx)
		if err != nil {
			return r, err
		}
		category := abandonedCategory(state, found)
		orphaned := state == rivertype.JobStateRunning && now-c.queuedSince >= c.leaseMs
		if category == "" && !orphaned {
			continue
		}
		err = s.write(ctx, func(t txn) error {
			if err := t.lockTask(ctx, c.task); err != nil {
				return err
			}
			var still int
			if err := t.queryRow(ctx, `SELECT COUNT(*) FROM managed_shards WHERE shard_id = $1 AND status = 'queued' AND river_job_id = $2`,
				c.shard, id).Scan(&still); err != nil || still == 0 {
				return err
			}
			if orphaned {
				r.Requeued++
				return replaceCarrier(ctx, t, c.task, c.shard, c.counted, now)
			}
			if _, err := t.exec(ctx, `UPDATE managed_shards SET status = 'not_tested', result_status = 'not_tested',
				failure_category = $1, updated_at_ms = $2, finished_at_ms = $2 WHERE shard_id = $3`, category, now, c.shard); err != nil {
				return err
			}
			r.Terminated++
			if err := appendEvent(ctx, t, c.task, eventShardAbandoned, now, c.shard, "", map[string]any{
				"failureCategory": category, "jobId": id, "jobState": string(state),
			}); err != nil {
				return err
			}
			_, err := refreshTask(ctx, t, c.task, now)
			return err
		})
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// replaceCarrier gives a shard a new River job, numbered after its counted
// attempts; the old job, if it ever runs again, finds itself superseded.
func replaceCarrier(ctx context.Context, t txn, taskID, shardID string, counted, now int64) error {
	ids, err := t.insertJobs(ctx, []river.InsertManyParams{shardJob(taskID, shardID, int(counted))})
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE managed_shards SET river_job_id = $1, updated_at_ms = $2 WHERE shard_id = $3`, ids[0], now, shardID)
	return err
}
