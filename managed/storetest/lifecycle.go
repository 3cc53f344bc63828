package storetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/redact"
)

func testCancel(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	h.register(t, "pixel-7", "SERIAL-2")
	task := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(3, nil) })
	a := h.claim(t, task.TaskID, "worker-1")
	if err := h.s.Start(h.ctx, a.Identity()); err != nil {
		t.Fatal(err)
	}

	_, err := h.s.Cancel(h.ctx, task.TaskID, "foreign-owner-1234567890")
	wantCode(t, err, fault.CodeOwnerMismatch)
	_, err = h.s.Cancel(h.ctx, "task-missing", Owner)
	wantCode(t, err, fault.CodeTaskNotFound)
	_, err = h.s.Cancel(h.ctx, task.TaskID, "short")
	wantCode(t, err, fault.CodeInvalidOwnerToken)

	h.clock.Advance(time.Millisecond)
	cancelled, err := h.s.Cancel(h.ctx, task.TaskID, Owner)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "status", cancelled.Status, "cancelled")
	wantEqual(t, "cancelRequested", cancelled.CancelRequested, true)
	wantEqual(t, "idempotent", cancelled.Idempotent, false)
	if cancelled.FinishedAt == nil || *cancelled.FinishedAt != Start.UnixMilli()+1 {
		t.Fatalf("finishedAt %v", cancelled.FinishedAt)
	}
	// The running attempt is fenced at once: its worker can write nothing.
	_, err = h.s.Heartbeat(h.ctx, a.Identity())
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed"})
	wantCode(t, err, fault.CodeStaleAssignment)
	d, _ := h.s.Device(h.ctx, a.DeviceID)
	wantEqual(t, "device leased after cancel", d.Leased, false)
	// Every shard's River job is cancelled: queued ones at once, the
	// running one by cancelling its worker's context.
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		wantEqual(t, "shard "+j.ShardID, j.Status, "cancelled")
		wantEqual(t, "job of "+j.ShardID, j.JobState, "cancelled")
	}
	r := h.report(t, task.TaskID)
	wantEqual(t, "exitCode", r.ExitCode, 130)
	for _, sh := range r.Shards {
		if sh.FailureCategory == nil || *sh.FailureCategory != managed.CategoryCancelledByOwner {
			t.Fatalf("shard %s category %v", sh.ShardID, sh.FailureCategory)
		}
	}
	wantEqual(t, "attempt", r.Shards[0].Attempts[0].Status, "cancelled")

	again, err := h.s.Cancel(h.ctx, task.TaskID, Owner)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "idempotent cancel", again.Idempotent, true)
	evs := h.events(t, task.TaskID)
	wantContiguous(t, evs)
	wantEqual(t, "last event", evs[len(evs)-1].Type, managed.EventTaskCancelled)

	// Another task is unaffected, and the old owner cannot cancel it.
	next := h.submit(t, func(s *managed.Submission) {
		s.IdempotencyKey = "ci-build-2"
		s.OwnerToken = "successor-owner-1234567890"
	})
	b := h.claim(t, next.TaskID, "worker-2")
	wantEqual(t, "successor claim", b.TaskID, next.TaskID)
	_, err = h.s.Cancel(h.ctx, next.TaskID, Owner)
	wantCode(t, err, fault.CodeOwnerMismatch)
	// A cancelled task's job finds nothing to do.
	res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: jobs[1].JobID, TaskID: task.TaskID, ShardID: jobs[1].ShardID,
		WorkerID: "w", Serials: h.serials(t)})
	if err != nil || !res.Finished {
		t.Fatalf("claim on a cancelled task: %+v %v", res, err)
	}
}

func testRecoveryAfterRestart(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.MaxRetries = 0 })
	a := h.claim(t, task.TaskID, "worker-before-crash")
	if err := h.s.Start(h.ctx, a.Identity()); err != nil {
		t.Fatal(err)
	}
	h.s.Close()
	h.s = h.open(t)
	h.clock.Advance(1000 * time.Millisecond)
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "recovery", rec, managed.Recovery{Terminated: 1})
	st := h.status(t, task.TaskID)
	wantEqual(t, "status", st.Status, "not_tested")
	evs := h.events(t, task.TaskID)
	wantContiguous(t, evs)
	var content map[string]any
	if err := json.Unmarshal(evs[len(evs)-2].Content, &content); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "expiry outcome", content["outcome"], any("not_tested"))
	d, _ := h.s.Device(h.ctx, "pixel-8")
	if d.Leased || d.ConsecutiveFailures != 1 {
		t.Fatalf("device after expiry: %+v", d)
	}
	rec, err = h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "second recovery", rec, managed.Recovery{})
}

func testRelease(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.MaxRetries = 0 })
	a := h.claim(t, task.TaskID, "stopping-worker")
	out, err := h.s.Release(h.ctx, a.Identity())
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shard", out.ShardStatus, "queued")
	d, _ := h.s.Device(h.ctx, "pixel-8")
	if d.Leased || d.ConsecutiveFailures != 0 {
		t.Fatalf("a hand-back does not blame the device: %+v", d)
	}
	// No backoff, and no retry used up: with maxRetries 0 the next attempt
	// still runs and a retryable failure after it is final.
	b := h.claim(t, task.TaskID, "next-worker")
	wantEqual(t, "attempt", b.AttemptNumber, int64(2))
	out, err = h.s.Fail(h.ctx, b.Identity(), "transport_error", true)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shard after the counted attempt", out.ShardStatus, "not_tested")
	r := h.report(t, task.TaskID)
	wantEqual(t, "first attempt", *r.Shards[0].Attempts[0].FailureCategory, managed.CategoryWorkerStopped)
}

func testAbandonedCarrier(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(2, nil) })
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	client, err := h.s.NewRiverClient(&river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// An operator cancels one shard's job in River's UI: the shard can
	// never run, so recovery ends it instead of leaving the task open.
	if _, err := client.JobCancel(h.ctx, jobs[0].JobID); err != nil {
		t.Fatal(err)
	}
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "recovery", rec, managed.Recovery{Terminated: 1})
	r := h.report(t, task.TaskID)
	wantEqual(t, "shard", r.Shards[0].Status, "not_tested")
	wantEqual(t, "category", *r.Shards[0].FailureCategory, managed.CategoryJobCancelled)
	wantEqual(t, "task still open", r.Status, "queued")
	a := h.claim(t, task.TaskID, "w")
	h.complete(t, a, "passed")
	wantEqual(t, "task", h.status(t, task.TaskID).Status, "not_tested")
	wantContiguous(t, h.events(t, task.TaskID))
}

func testOrphanedCarrier(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t)
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	old := jobs[0].JobID
	// A worker process fetched the shard's job and died before it claimed:
	// River shows the job running, and would rescue it only after an hour.
	h.raw(t, `UPDATE river_job SET state = 'running', attempt = 1 WHERE id = $1`, old)
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "recovery within a lease (a live claim looks the same)", rec, managed.Recovery{})
	h.clock.Advance(time.Second) // the task's lease
	if rec, err = h.s.Recover(h.ctx); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "recovery after a lease", rec, managed.Recovery{Requeued: 1})
	jobs, err = h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].JobID == old || jobs[0].Status != "queued" || jobs[0].JobState != "available" {
		t.Fatalf("the shard's carrier after recovery: %+v (old job %d)", jobs[0], old)
	}
	// The old job, should it run after all, is superseded.
	res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: old, TaskID: task.TaskID, ShardID: jobs[0].ShardID, WorkerID: "w", Serials: h.serials(t)})
	if err != nil || !res.Finished || res.Assignment != nil {
		t.Fatalf("the old job's claim: %+v %v", res, err)
	}
	h.complete(t, h.claim(t, task.TaskID, "w"), "passed")
	wantEqual(t, "task", h.status(t, task.TaskID).Status, "passed")
	wantContiguous(t, h.events(t, task.TaskID))
}

func testEventContiguity(t *testing.T, h *harness) {
	const n = 8
	task, jobs, serials := h.farm(t, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: jobs[i].JobID, TaskID: task.TaskID,
				ShardID: jobs[i].ShardID, WorkerID: "w", Serials: serials})
			if err != nil || res.Assignment == nil {
				errs <- err
				return
			}
			id := res.Assignment.Identity()
			if err := h.s.Start(h.ctx, id); err != nil {
				errs <- err
				return
			}
			for range 3 {
				if _, err := h.s.Heartbeat(h.ctx, id); err != nil {
					errs <- err
					return
				}
			}
			status := "passed"
			if i%3 == 0 {
				status = "failed"
			}
			if _, err := h.s.Complete(h.ctx, id, managed.Completion{Status: status}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("worker: %v", err)
	}
	evs := h.events(t, task.TaskID)
	wantContiguous(t, evs)
	// submitted + 3 per shard (claimed, started, completed) + finished.
	wantEqual(t, "events", len(evs), 2+3*n)
	wantEqual(t, "task", h.status(t, task.TaskID).Status, "failed")
	tail, err := h.s.Events(h.ctx, task.TaskID, int64(len(evs)-2))
	if err != nil {
		t.Fatal(err)
	}
	wantSlice(t, "events after a cursor", sequences(tail), []int64{int64(len(evs) - 1), int64(len(evs))})
	_, err = h.s.Events(h.ctx, task.TaskID, -1)
	wantCode(t, err, fault.CodeInvalidContract)
	_, err = h.s.Events(h.ctx, "task-missing", 0)
	wantCode(t, err, fault.CodeTaskNotFound)
}

func testRedaction(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	token := "owner-secret-" + strings.Repeat("z", 20)
	task := h.submit(t, func(s *managed.Submission) { s.OwnerToken = token; s.IdempotencyKey = "build-" + token })
	a := h.claim(t, task.TaskID, "w")
	if _, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed",
		Report: map[string]any{"ownerToken": token, "nested": map[string]any{"api_key": "k", "note": "Bearer abc.def"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Cancel(h.ctx, task.TaskID, token); err != nil {
		t.Fatal(err)
	}
	evs := h.events(t, task.TaskID)
	var submitted map[string]any
	if err := json.Unmarshal(evs[0].Content, &submitted); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "idempotency key in the event", submitted["idempotencyKey"], any("build-"+redact.Marker))
	// The status echoes the caller's own idempotency key; nothing else
	// holds the token or its hash.
	for _, v := range []any{evs, h.status(t, task.TaskID).ShardCounts, h.report(t, task.TaskID)} {
		b, _ := json.Marshal(v)
		for _, secret := range []string{token, "ownerTokenHash", "ownerHash", "owner_hash"} {
			if strings.Contains(string(b), secret) {
				t.Fatalf("%s appears in %s", secret, b)
			}
		}
	}
}

func testTerminalImmutability(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t)
	a := h.claim(t, task.TaskID, "w")
	h.complete(t, a, "passed")
	before := h.report(t, task.TaskID)
	// Nothing moves a terminal task or shard: not a cancel, a late write,
	// a recovery or a second completion.
	c, err := h.s.Cancel(h.ctx, task.TaskID, Owner)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "cancel of a passed task", c.Status, "passed")
	wantEqual(t, "idempotent", c.Idempotent, true)
	_, err = h.s.Fail(h.ctx, a.Identity(), "late", true)
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "failed"})
	wantCode(t, err, fault.CodeStaleAssignment)
	h.clock.Advance(time.Hour)
	if _, err := h.s.Recover(h.ctx); err != nil {
		t.Fatal(err)
	}
	after := h.report(t, task.TaskID)
	wantEqual(t, "status", after.Status, before.Status)
	wantEqual(t, "outcomeFingerprint", after.OutcomeFingerprint, before.OutcomeFingerprint)
	wantEqual(t, "events", after.EventCount, before.EventCount)
}

func testRetention(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	root := t.TempDir()
	task := h.submit(t, func(s *managed.Submission) { s.RetentionMs = 1000 })
	jobs, _ := h.s.ShardJobs(h.ctx, task.TaskID)
	res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID,
		WorkerID: "w", Serials: []string{"SERIAL-1"}, Host: "host-a", ArtifactsRoot: root})
	if err != nil || res.Assignment == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	a := res.Assignment
	dir := filepath.Join(root, a.TaskID, a.ShardID, a.AttemptID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	os.WriteFile(report, []byte("{}"), 0o644)
	if _, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed", ReportPath: report,
		EvidenceDigest: strings.Repeat("e", 64)}); err != nil {
		t.Fatal(err)
	}
	if c, _ := h.s.RetentionCandidates(h.ctx); len(c) != 0 {
		t.Fatalf("candidates inside the retention period: %+v", c)
	}
	_, err = h.s.MarkPurged(h.ctx, task.TaskID, []string{a.AttemptID})
	wantCode(t, err, "retention_not_due")

	h.clock.Advance(1001 * time.Millisecond)
	c, err := h.s.RetentionCandidates(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 1 || c[0].Path != dir || c[0].Host != "host-a" {
		t.Fatalf("candidates: %+v", c)
	}
	// Another host leaves the evidence alone; this one deletes it.
	other, err := managed.Purge(h.ctx, h.s, "host-b", []string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Purged) != 0 || len(other.Elsewhere) != 1 {
		t.Fatalf("purge on another host: %+v", other)
	}
	done, err := managed.Purge(h.ctx, h.s, "host-a", []string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Purged) != 1 {
		t.Fatalf("purge: %+v", done)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("evidence directory still exists: %v", err)
	}
	att := h.report(t, task.TaskID).Shards[0].Attempts[0]
	if att.ReportPath != nil || att.EvidenceDigest == nil || *att.EvidenceDigest != strings.Repeat("e", 64) ||
		att.EvidencePurgedAt == nil || *att.EvidencePurgedAt != h.clock.Now().UnixMilli() {
		t.Fatalf("attempt after purge: %+v", att)
	}
	if c, _ := h.s.RetentionCandidates(h.ctx); len(c) != 0 {
		t.Fatalf("candidates after the purge: %+v", c)
	}
	evs := h.events(t, task.TaskID)
	wantEqual(t, "last event", evs[len(evs)-1].Type, managed.EventEvidencePurged)
}

// testPurgeSymlinks: a purge deletes inside the artifacts root only. A task
// directory replaced by a symbolic link to a directory elsewhere is not
// followed (that evidence is refused and stays unpurged), and a symbolic
// link inside an attempt directory is removed, not what it points to.
func testPurgeSymlinks(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	h.register(t, "pixel-9", "SERIAL-2")
	root, outside := t.TempDir(), t.TempDir()
	precious := filepath.Join(outside, "precious.txt")
	if err := os.WriteFile(precious, []byte("not evidence"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := h.submit(t, func(s *managed.Submission) { s.RetentionMs = 1000; s.Matrix = Matrix(2, nil) })
	jobs, _ := h.s.ShardJobs(h.ctx, task.TaskID)
	var dirs []string
	for i, serial := range []string{"SERIAL-1", "SERIAL-2"} {
		res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: jobs[i].JobID, TaskID: task.TaskID, ShardID: jobs[i].ShardID,
			WorkerID: "w", Serials: []string{serial}, Host: "host-a", ArtifactsRoot: root})
		if err != nil || res.Assignment == nil {
			t.Fatalf("claim: %+v %v", res, err)
		}
		a := res.Assignment
		dir := filepath.Join(root, a.TaskID, a.ShardID, a.AttemptID)
		dirs = append(dirs, dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		report := filepath.Join(dir, "report.json")
		os.WriteFile(report, []byte("{}"), 0o644)
		if _, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed", ReportPath: report,
			EvidenceDigest: strings.Repeat("e", 64)}); err != nil {
			t.Fatal(err)
		}
	}
	// The first attempt directory holds a link to the outside directory.
	if err := os.Symlink(outside, filepath.Join(dirs[0], "link")); err != nil {
		t.Fatal(err)
	}
	// The second shard's directory is replaced by a link that leads out:
	// <root>/<task>/<shard> -> outside, with the attempt directory there.
	shardDir := filepath.Dir(dirs[1])
	moved := filepath.Join(outside, filepath.Base(dirs[1]))
	if err := os.Rename(dirs[1], moved); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(shardDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, shardDir); err != nil {
		t.Fatal(err)
	}

	h.clock.Advance(1001 * time.Millisecond)
	res, err := managed.Purge(h.ctx, h.s, "host-a", []string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Purged) != 1 || res.Purged[0].Path != dirs[0] || len(res.Refused) != 1 || res.Refused[0].Path != dirs[1] {
		t.Fatalf("purge: %+v", res)
	}
	if _, err := os.Lstat(dirs[0]); !os.IsNotExist(err) {
		t.Fatalf("the first attempt directory survived: %v", err)
	}
	for _, p := range []string{precious, filepath.Join(moved, "report.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a file outside the artifacts root was deleted: %v", err)
		}
	}
	// The refused evidence stays a candidate, unpurged.
	c, err := h.s.RetentionCandidates(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 1 || c[0].Path != dirs[1] {
		t.Fatalf("candidates after the purge: %+v", c)
	}
}
