package managed

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// Why a claim did not produce an assignment.
const (
	ReasonTerminal   = "shard_terminal" // nothing left to do: the job completes
	ReasonSuperseded = "superseded"     // another River job carries the shard now
	ReasonLeaseHeld  = "lease_held"     // a live lease holds the shard
	ReasonBackoff    = "backoff"        // the retry backoff is not over
	ReasonNoDevice   = "no_device"      // no matching free device this worker reaches
)

// NoDeviceWait is how long a claim that found no device asks to wait, so
// that another host's worker can take the shard meanwhile.
const NoDeviceWait = time.Second

type shardRow struct {
	status, targetID, selectorJSON, taskStatus string
	replicaIndex, attemptCount, released       int64
	nextAttempt, leaseDuration, maxRetries     int64
	cancelRequested                            int64
	leaseExpires, jobID                        sql.NullInt64
	planJSON, decisionsJSON, planFP            string
}

func (s *store) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	taskID, err := identifier(req.TaskID, "task id")
	if err != nil {
		return ClaimResult{}, err
	}
	shardID, err := identifier(req.ShardID, "shard id")
	if err != nil {
		return ClaimResult{}, err
	}
	worker, err := identifier(req.WorkerID, "worker id")
	if err != nil {
		return ClaimResult{}, err
	}
	var res ClaimResult
	now, err := s.now(ctx)
	if err != nil {
		return ClaimResult{}, err
	}
	err = s.write(ctx, func(t txn) error {
		res = ClaimResult{}
		if err := t.lockTask(ctx, taskID); err != nil {
			return err
		}
		var sh shardRow
		err := t.queryRow(ctx, `SELECT s.status, s.target_id, s.selector_json, t.status, s.replica_index,
			s.attempt_count, s.released_count, s.next_attempt_ms, t.lease_duration_ms, t.max_retries,
			t.cancel_requested, s.lease_expires_ms, s.river_job_id, t.plan_json, t.decisions_json, t.plan_fingerprint
			FROM managed_shards s JOIN managed_tasks t ON t.task_id = s.task_id
			WHERE s.shard_id = $1 AND s.task_id = $2`, shardID, taskID).
			Scan(&sh.status, &sh.targetID, &sh.selectorJSON, &sh.taskStatus, &sh.replicaIndex,
				&sh.attemptCount, &sh.released, &sh.nextAttempt, &sh.leaseDuration, &sh.maxRetries,
				&sh.cancelRequested, &sh.leaseExpires, &sh.jobID, &sh.planJSON, &sh.decisionsJSON, &sh.planFP)
		switch {
		case errors.Is(err, errNoRows):
			res = ClaimResult{Finished: true, Reason: ReasonTerminal}
			return nil
		case err != nil:
			return err
		case terminal(sh.status) || terminal(sh.taskStatus) || sh.cancelRequested != 0:
			res = ClaimResult{Finished: true, Reason: ReasonTerminal}
			return nil
		case !sh.jobID.Valid || sh.jobID.Int64 != req.JobID:
			res = ClaimResult{Finished: true, Reason: ReasonSuperseded}
			return nil
		case sh.status != string(protocol.ManagedQueued):
			wait := time.Duration(recoverInterval)
			if sh.leaseExpires.Valid && sh.leaseExpires.Int64 > now {
				wait = time.Duration(sh.leaseExpires.Int64-now)*time.Millisecond + recoverInterval
			}
			res = ClaimResult{Wait: wait, Reason: ReasonLeaseHeld}
			return nil
		case sh.nextAttempt > now:
			res = ClaimResult{Wait: time.Duration(sh.nextAttempt-now) * time.Millisecond, Reason: ReasonBackoff}
			return nil
		}
		a, err := s.lease(ctx, t, taskID, shardID, worker, req, &sh, now)
		if err != nil || a == nil {
			res = ClaimResult{Wait: NoDeviceWait, Reason: ReasonNoDevice}
			return err
		}
		res = ClaimResult{Assignment: a}
		return nil
	})
	return res, err
}

// lease takes the first matching free device this worker reaches, creates
// the attempt and moves shard and task on. It returns nil when no device
// fits.
func (s *store) lease(ctx context.Context, t txn, taskID, shardID, worker string, req ClaimRequest, sh *shardRow, now int64) (*Assignment, error) {
	var sel selector
	if err := json.Unmarshal([]byte(sh.selectorJSON), &sel); err != nil {
		return nil, fmt.Errorf("shard selector: %w", err)
	}
	devices, err := queryDevices(ctx, t, `SELECT `+deviceColumns+` FROM managed_devices
		WHERE health = 'healthy' AND lease_id IS NULL AND circuit_open_until_ms <= $1
		ORDER BY last_seen_ms, device_id`, now)
	if err != nil {
		return nil, err
	}
	leaseID, attemptID := "lease-"+randomHex(), "attempt-"+randomHex()
	expires := now + sh.leaseDuration
	var dev *deviceRow
	for _, d := range devices {
		if !slices.Contains(req.Serials, d.Serial) || !sel.Matches(&d.Device) {
			continue
		}
		// Compare-and-set on the generation: a concurrent claim of the
		// same device on PostgreSQL finds it changed and moves on.
		n, err := t.exec(ctx, `UPDATE managed_devices SET generation = $1, lease_id = $2, lease_task_id = $3,
			lease_shard_id = $4, lease_expires_ms = $5, updated_at_ms = $6
			WHERE device_id = $7 AND lease_id IS NULL AND generation = $8`,
			d.OwnerGeneration+1, leaseID, taskID, shardID, expires, now, d.DeviceID, d.OwnerGeneration)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			dev = d
			break
		}
	}
	if dev == nil {
		return nil, nil
	}
	if err := step(shardMachine, sh.status, protocol.EvClaim); err != nil {
		return nil, err
	}
	generation := dev.OwnerGeneration + 1
	number := sh.attemptCount + 1
	var artifacts any
	if req.ArtifactsRoot != "" {
		artifacts = filepath.Join(req.ArtifactsRoot, taskID, shardID, attemptID)
	}
	if _, err := t.exec(ctx, `INSERT INTO managed_attempts (attempt_id, task_id, shard_id, attempt_number,
		worker_id, worker_host, device_id, serial, lease_id, owner_generation, lease_expires_ms, status, artifacts_dir, created_at_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'leased', $12, $13)`,
		attemptID, taskID, shardID, number, worker, nullable(req.Host), dev.DeviceID, dev.Serial, leaseID, generation, expires, artifacts, now); err != nil {
		return nil, err
	}
	if _, err := t.exec(ctx, `UPDATE managed_shards SET status = 'leased', attempt_count = $1, current_attempt_id = $2,
		assigned_device_id = $3, owner_generation = $4, lease_id = $5, lease_expires_ms = $6, updated_at_ms = $7
		WHERE shard_id = $8 AND status = 'queued'`,
		number, attemptID, dev.DeviceID, generation, leaseID, expires, now, shardID); err != nil {
		return nil, err
	}
	if sh.taskStatus == string(protocol.ManagedQueued) {
		if err := setTaskStatus(ctx, t, taskID, sh.taskStatus, protocol.EvClaim, now); err != nil {
			return nil, err
		}
	}
	if err := appendEvent(ctx, t, taskID, EventAssignmentClaimed, now, shardID, attemptID, map[string]any{
		"attemptId": attemptID, "workerId": worker, "deviceId": dev.DeviceID, "leaseId": leaseID,
		"ownerGeneration": generation, "leaseExpiresAt": expires,
	}); err != nil {
		return nil, err
	}
	return &Assignment{
		SchemaVersion: AssignmentSchema, TaskID: taskID, ShardID: shardID, TargetID: sh.targetID,
		ReplicaIndex: sh.replicaIndex, AttemptID: attemptID, AttemptNumber: number, WorkerID: worker,
		DeviceID: dev.DeviceID, Serial: dev.Serial, LeaseID: leaseID, OwnerGeneration: generation,
		LeaseExpiresAt: expires, LeaseDurationMs: sh.leaseDuration, PlanFingerprint: sh.planFP,
		Plan: json.RawMessage(sh.planJSON), Decisions: json.RawMessage(sh.decisionsJSON),
	}, nil
}

// step checks a transition against the protocol table before the store
// writes it.
func step(m *protocol.Machine, from string, ev protocol.Event) error {
	if _, err := m.Step(protocol.State(from), ev); err != nil {
		return fmt.Errorf("managed store: %w", err)
	}
	return nil
}

// setTaskStatus moves a task by ev from status from.
func setTaskStatus(ctx context.Context, t txn, taskID, from string, ev protocol.Event, now int64) error {
	to, err := taskMachine.Step(protocol.State(from), ev)
	if err != nil {
		return fmt.Errorf("managed store: %w", err)
	}
	finished := any(nil)
	if taskMachine.IsTerminal(to) {
		finished = now
	}
	_, err = t.exec(ctx, `UPDATE managed_tasks SET status = $1, updated_at_ms = $2, finished_at_ms = $3 WHERE task_id = $4`,
		string(to), now, finished, taskID)
	return err
}

// attemptRow is an active attempt that passed the fence.
type attemptRow struct {
	Identity
	status  string
	number  int64
	serial  string
	workDir sql.NullString
}

func checkIdentity(id Identity) error {
	for _, f := range []struct{ v, label string }{
		{id.TaskID, "task id"}, {id.ShardID, "shard id"}, {id.AttemptID, "attempt id"},
		{id.DeviceID, "device id"}, {id.LeaseID, "lease id"},
	} {
		if _, err := identifier(f.v, f.label); err != nil {
			return storeError("invalid_assignment", "the assignment identity is incomplete: "+f.label)
		}
	}
	return nil
}

// fence returns the active attempt id names, or stale_assignment unless the
// attempt and its device still hold exactly this identity and the lease
// has not expired (measured now, so a late write is refused even before
// recovery has run).
func fence(ctx context.Context, t txn, id Identity, now int64) (*attemptRow, error) {
	stale := storeError(fault.CodeStaleAssignment, "the assignment no longer holds its exact device generation")
	a := attemptRow{}
	var leaseExpires int64
	err := t.queryRow(ctx, `SELECT task_id, shard_id, device_id, lease_id, owner_generation, lease_expires_ms,
		status, attempt_number, serial, artifacts_dir FROM managed_attempts WHERE attempt_id = $1`, id.AttemptID).
		Scan(&a.TaskID, &a.ShardID, &a.DeviceID, &a.LeaseID, &a.OwnerGeneration, &leaseExpires, &a.status, &a.number, &a.serial, &a.workDir)
	if errors.Is(err, errNoRows) {
		return nil, stale
	}
	if err != nil {
		return nil, err
	}
	a.AttemptID = id.AttemptID
	if !attemptMachine.IsLive(protocol.State(a.status)) || a.Identity != id || leaseExpires <= now {
		return nil, stale
	}
	var dLease, dTask, dShard sql.NullString
	var dGen int64
	var dExpires sql.NullInt64
	err = t.queryRow(ctx, `SELECT lease_id, generation, lease_task_id, lease_shard_id, lease_expires_ms
		FROM managed_devices WHERE device_id = $1`, id.DeviceID).Scan(&dLease, &dGen, &dTask, &dShard, &dExpires)
	if errors.Is(err, errNoRows) {
		return nil, stale
	}
	if err != nil {
		return nil, err
	}
	if dLease.String != id.LeaseID || dGen != id.OwnerGeneration || dTask.String != id.TaskID ||
		dShard.String != id.ShardID || !dExpires.Valid || dExpires.Int64 <= now {
		return nil, stale
	}
	return &a, nil
}

// fenced runs fn on the attempt identified by id inside a write transaction
// that holds the task's lock (shared for a heartbeat, which only renews).
func (s *store) fenced(ctx context.Context, id Identity, shared bool, fn func(t txn, a *attemptRow, now int64) error) error {
	if err := checkIdentity(id); err != nil {
		return err
	}
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	return s.write(ctx, func(t txn) error {
		lock := t.lockTask
		if shared {
			lock = t.shareTask
		}
		if err := lock(ctx, id.TaskID); err != nil {
			return err
		}
		a, err := fence(ctx, t, id, now)
		if err != nil {
			return err
		}
		return fn(t, a, now)
	})
}

func (s *store) Start(ctx context.Context, id Identity) error {
	return s.fenced(ctx, id, false, func(t txn, a *attemptRow, now int64) error {
		if a.status != string(protocol.ManagedLeased) {
			return nil
		}
		if err := step(attemptMachine, a.status, protocol.EvBegin); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET status = 'running', started_at_ms = $1 WHERE attempt_id = $2`, now, a.AttemptID); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_shards SET status = 'running', updated_at_ms = $1 WHERE shard_id = $2 AND status = 'leased'`, now, a.ShardID); err != nil {
			return err
		}
		return appendEvent(ctx, t, a.TaskID, EventAttemptStarted, now, a.ShardID, a.AttemptID, map[string]any{"attemptId": a.AttemptID})
	})
}

func (s *store) Heartbeat(ctx context.Context, id Identity) (int64, error) {
	var expires int64
	err := s.fenced(ctx, id, true, func(t txn, a *attemptRow, now int64) error {
		var cancel, lease int64
		if err := t.queryRow(ctx, `SELECT cancel_requested, lease_duration_ms FROM managed_tasks WHERE task_id = $1`, a.TaskID).Scan(&cancel, &lease); err != nil {
			return err
		}
		if cancel != 0 {
			return storeError(fault.CodeTaskCancelled, "the task was cancelled; the lease is not renewed")
		}
		expires = now + lease
		if _, err := t.exec(ctx, `UPDATE managed_attempts SET lease_expires_ms = $1 WHERE attempt_id = $2`, expires, a.AttemptID); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE managed_devices SET lease_expires_ms = $1, updated_at_ms = $2
			WHERE device_id = $3 AND lease_id = $4 AND generation = $5`, expires, now, a.DeviceID, a.LeaseID, a.OwnerGeneration); err != nil {
			return err
		}
		_, err := t.exec(ctx, `UPDATE managed_shards SET lease_expires_ms = $1, updated_at_ms = $2 WHERE shard_id = $3`, expires, now, a.ShardID)
		return err
	})
	return expires, err
}
