package managed

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/fault"
)

// evidence is the raw evidence of one attempt: its artifacts directory (or,
// for an attempt completed without one, its report file).
type evidence struct {
	TaskID         string  `json:"taskId"`
	ShardID        string  `json:"shardId"`
	AttemptID      string  `json:"attemptId"`
	Path           string  `json:"path"`
	Host           string  `json:"host"`
	EvidenceDigest *string `json:"evidenceDigest"`
}

// PurgeResult says what a retention purge did on this machine.
type PurgeResult struct {
	// Purged evidence was deleted here (or was already gone from where
	// this host's worker wrote it) and is recorded as purged.
	Purged []evidence `json:"purged"`
	// Elsewhere evidence is not on this machine: another host's worker
	// wrote it and purges it there.
	Elsewhere []evidence `json:"elsewhere"`
	// Refused evidence is this host's, but its path leads out of the
	// artifacts root through a symbolic link: nothing was deleted, and it
	// is not marked purged.
	Refused []evidence `json:"refused"`
}

func (s *store) RetentionCandidates(ctx context.Context) ([]evidence, error) {
	now, err := s.now(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := s.be.reader().query(ctx, `SELECT a.task_id, a.shard_id, a.attempt_id, a.artifacts_dir, a.report_path, a.evidence_digest, a.worker_host
		FROM managed_attempts a JOIN managed_tasks t ON t.task_id = a.task_id
		WHERE t.status IN ('passed', 'failed', 'not_tested', 'cancelled') AND t.finished_at_ms + t.retention_ms <= $1
		AND (a.report_path IS NOT NULL OR a.artifacts_dir IS NOT NULL) AND a.evidence_purged_at_ms IS NULL
		ORDER BY t.finished_at_ms, a.attempt_id`, now)
	if err != nil {
		return nil, asFault(err)
	}
	defer rs.Close()
	out := []evidence{}
	for rs.Next() {
		var e evidence
		var dir, report, digest, host sql.NullString
		if err := rs.Scan(&e.TaskID, &e.ShardID, &e.AttemptID, &dir, &report, &digest, &host); err != nil {
			return nil, asFault(err)
		}
		e.Path, e.EvidenceDigest, e.Host = dir.String, str(digest), host.String
		if !dir.Valid {
			e.Path = report.String
		}
		out = append(out, e)
	}
	return out, asFault(rs.Err())
}

func (s *store) MarkPurged(ctx context.Context, taskID string, attemptIDs []string) (int64, error) {
	id, err := identifier(taskID, "task id")
	if err != nil {
		return 0, err
	}
	if len(attemptIDs) == 0 {
		return 0, storeError(fault.CodeInvalidContract, "no evidence to mark purged")
	}
	var purged int64
	now, err := s.now(ctx)
	if err != nil {
		return 0, err
	}
	err = s.write(ctx, func(t txn) error {
		purged = 0
		if err := t.lockTask(ctx, id); err != nil {
			return err
		}
		var status string
		var finished sql.NullInt64
		var retention int64
		if err := t.queryRow(ctx, `SELECT status, finished_at_ms, retention_ms FROM managed_tasks WHERE task_id = $1`, id).
			Scan(&status, &finished, &retention); errors.Is(err, errNoRows) {
			return storeError(fault.CodeTaskNotFound, "no managed task has this id")
		} else if err != nil {
			return err
		}
		if !terminal(status) || !finished.Valid || finished.Int64+retention > now {
			return storeError("retention_not_due", "the task's evidence is still within its retention period")
		}
		for _, a := range attemptIDs {
			n, err := t.exec(ctx, `UPDATE managed_attempts SET report_path = NULL, evidence_purged_at_ms = $1
				WHERE task_id = $2 AND attempt_id = $3 AND evidence_purged_at_ms IS NULL`, now, id, a)
			if err != nil {
				return err
			}
			purged += n
		}
		return appendEvent(ctx, t, id, EventEvidencePurged, now, "", "", map[string]any{"artifactCount": purged})
	})
	return purged, err
}

// Purge deletes the evidence past its retention that workers on this host
// wrote: attempt directories <root>/<taskId>/<shardId>/<attemptId> under
// artifactsRoots. Evidence another host wrote is left for that host's own
// purge. Digests and reports in the database stay; only raw evidence goes.
// Deletion happens inside the artifacts root (os.Root): a symbolic link in
// the task or shard directory that leads out of the root is not followed;
// that evidence is listed under refused and left in place, and a symbolic
// link inside the attempt directory is removed, never what it points to.
func Purge(ctx context.Context, s Store, host string, artifactsRoots []string) (PurgeResult, error) {
	res := PurgeResult{Purged: []evidence{}, Elsewhere: []evidence{}, Refused: []evidence{}}
	candidates, err := s.RetentionCandidates(ctx)
	if err != nil {
		return res, err
	}
	byTask := map[string][]string{}
	var order []string
	for _, e := range candidates {
		root, rel, ok := ownedEvidence(e, artifactsRoots)
		if e.Host != host || !ok {
			res.Elsewhere = append(res.Elsewhere, e)
			continue
		}
		switch err := removeUnder(root, rel); {
		case errors.Is(err, errOutsideRoot):
			res.Refused = append(res.Refused, e)
			continue
		case err != nil:
			return res, fault.Wrap(fault.Transport, fault.CodePurgeFailed, "cannot delete expired evidence", err).With("path", e.Path)
		}
		if _, ok := byTask[e.TaskID]; !ok {
			order = append(order, e.TaskID)
		}
		byTask[e.TaskID] = append(byTask[e.TaskID], e.AttemptID)
		res.Purged = append(res.Purged, e)
	}
	for _, task := range order {
		if _, err := s.MarkPurged(ctx, task, byTask[task]); err != nil {
			return res, err
		}
	}
	return res, nil
}

// CodePurgeFailed: evidence past its retention could not be deleted.

var errOutsideRoot = errors.New("the evidence path leads out of the artifacts root")

// removeUnder deletes rel and everything below it without leaving root:
// every path component is resolved inside root, so a symbolic link to a
// directory elsewhere is refused (errOutsideRoot) instead of followed. An
// attempt directory already gone counts as deleted.
func removeUnder(root, rel string) error {
	r, err := os.OpenRoot(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	// Lstat inside the root fails for a path whose parent directories
	// escape it; RemoveAll alone would report a missing path as success.
	if _, err := r.Lstat(rel); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		if escapes(err) {
			return errOutsideRoot
		}
		return err
	}
	if err := r.RemoveAll(rel); err != nil {
		if escapes(err) {
			return errOutsideRoot
		}
		return err
	}
	return nil
}

// escapes recognises os.Root's refusal of a path that resolves outside it.
func escapes(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// ownedEvidence reports whether e is an attempt directory under one of
// roots, named exactly for its attempt, so that a purge can never delete
// anything else; it returns that root and the path inside it.
func ownedEvidence(e evidence, roots []string) (string, string, bool) {
	if !filepath.IsAbs(e.Path) {
		return "", "", false
	}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if filepath.Clean(e.Path) == filepath.Join(abs, e.TaskID, e.ShardID, e.AttemptID) {
			return abs, filepath.Join(e.TaskID, e.ShardID, e.AttemptID), true
		}
	}
	return "", "", false
}
