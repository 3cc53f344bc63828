package managed

import (
	"context"
	"errors"
)

// RetryBudget is the store's answer to a worker whose run ended without a
// verdict for a reason of the infrastructure (the phone, adb, another owner
// on the phone): is a retryable failure of this attempt retried? The worker
// then fails the attempt as retryable, or, with no retry left, completes it
// not_tested with its report, so that an infrastructure fault never ends an
// attempt "failed".
type RetryBudget interface {
	// RetriesLeft reports whether Fail(id, _, true) would requeue the
	// shard now: the task is not cancelled and the attempt's counted
	// number (hand-backs excluded) is at most the task's maxRetries. An
	// unknown attempt is stale_assignment.
	RetriesLeft(ctx context.Context, id Identity) (bool, error)
}

var _ RetryBudget = (*store)(nil)

func (s *store) RetriesLeft(ctx context.Context, id Identity) (bool, error) {
	var number, released, maxRetries, cancel int64
	err := s.be.reader().queryRow(ctx, `SELECT a.attempt_number, s.released_count, t.max_retries, t.cancel_requested
		FROM managed_attempts a JOIN managed_shards s ON s.shard_id = a.shard_id JOIN managed_tasks t ON t.task_id = a.task_id
		WHERE a.attempt_id = $1 AND a.shard_id = $2 AND a.task_id = $3`, id.AttemptID, id.ShardID, id.TaskID).
		Scan(&number, &released, &maxRetries, &cancel)
	if errors.Is(err, errNoRows) {
		return false, storeError(CodeStaleAssignment, "the attempt does not exist")
	}
	if err != nil {
		return false, asFault(err)
	}
	return cancel == 0 && number-released <= maxRetries, nil
}
