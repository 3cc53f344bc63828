package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
)

func testClaimMatchesSelector(t *testing.T, h *harness) {
	h.register(t, "old-emulator", "SERIAL-OLD", func(s *managed.DeviceSpec) {
		s.APILevel, s.Capabilities, s.Labels = 28, []string{"verification"}, map[string]string{"tier": "virtual"}
	})
	h.register(t, "offline-pixel", "SERIAL-OFFLINE", func(s *managed.DeviceSpec) { s.Health = managed.HealthOffline })
	h.register(t, "label-mismatch", "SERIAL-LABEL", func(s *managed.DeviceSpec) { s.Labels = map[string]string{"tier": "virtual"} })
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) {
		s.Matrix = Matrix(1, map[string]any{"platform": "ANDROID", "minApiLevel": 34, "capabilities": []any{"agent"},
			"labels": map[string]any{"tier": "physical"}})
	})
	a := h.claim(t, task.TaskID, "worker-1")
	wantEqual(t, "taskId", a.TaskID, task.TaskID)
	wantEqual(t, "deviceId", a.DeviceID, "pixel-8")
	wantEqual(t, "serial", a.Serial, "SERIAL-1")
	wantEqual(t, "ownerGeneration", a.OwnerGeneration, int64(1))
	wantEqual(t, "attemptNumber", a.AttemptNumber, int64(1))
	wantEqual(t, "schemaVersion", a.SchemaVersion, managed.AssignmentSchema)
	wantEqual(t, "leaseDurationMs", a.LeaseDurationMs, int64(1000))
	wantEqual(t, "leaseExpiresAt", a.LeaseExpiresAt, Start.UnixMilli()+1000)
	if !strings.Contains(string(a.Plan), `"planFingerprint":"`+strings.Repeat("a", 64)+`"`) || string(a.Decisions) != "{}" {
		t.Fatalf("assignment plan %s / decisions %s", a.Plan, a.Decisions)
	}
	d, err := h.s.Device(h.ctx, "pixel-8")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Leased || d.OwnerGeneration != 1 || d.LeaseExpiresAt == nil || *d.LeaseExpiresAt != a.LeaseExpiresAt {
		t.Fatalf("device after claim: %+v", d)
	}
	st := h.status(t, task.TaskID)
	wantEqual(t, "task status", st.Status, "running")
	wantEqual(t, "leased shards", st.ShardCounts["leased"], int64(1))
}

func testClaimOutcomes(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(2, nil) })
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	req := managed.ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID, WorkerID: "w", Serials: []string{"SERIAL-1"}}

	// A worker that does not reach the device waits for another host.
	other := req
	other.Serials = []string{"SERIAL-ELSEWHERE"}
	res, err := h.s.Claim(h.ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if res.Assignment != nil || res.Reason != managed.ReasonNoDevice || res.Wait != managed.NoDeviceWait {
		t.Fatalf("unreachable device: %+v", res)
	}
	// A job that does not carry the shard (any more) is finished.
	wrong := req
	wrong.JobID = jobs[1].JobID
	res, err = h.s.Claim(h.ctx, wrong)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished || res.Reason != managed.ReasonSuperseded {
		t.Fatalf("superseded job: %+v", res)
	}
	// Claim, then the same job again: the lease holds the shard.
	res, err = h.s.Claim(h.ctx, req)
	if err != nil || res.Assignment == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	a := res.Assignment
	res, err = h.s.Claim(h.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != managed.ReasonLeaseHeld || res.Wait < time.Second {
		t.Fatalf("held shard: %+v", res)
	}
	// The one device is leased: the second shard waits.
	res = h.tryClaim(t, task.TaskID, "w2", []string{"SERIAL-1"})
	wantEqual(t, "second shard", res.Reason, managed.ReasonNoDevice)
	// A terminal shard finishes its job.
	h.complete(t, a, "passed")
	res, err = h.s.Claim(h.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished || res.Reason != managed.ReasonTerminal {
		t.Fatalf("terminal shard: %+v", res)
	}
	_, err = h.s.Claim(h.ctx, managed.ClaimRequest{JobID: 1, TaskID: "task 1", ShardID: "s", WorkerID: "w"})
	wantCode(t, err, fault.CodeInvalidID)
}

func testReclaimFencesOldWorker(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t)
	first := h.claim(t, task.TaskID, "worker-old")
	if err := h.s.Start(h.ctx, first.Identity()); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(1000 * time.Millisecond)
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "requeued", rec.Requeued, int64(1))
	// The requeued shard waits out its backoff (1 s after attempt 1).
	res := h.tryClaim(t, task.TaskID, "worker-new", h.serials(t))
	if res.Reason != managed.ReasonBackoff || res.Wait != time.Second {
		t.Fatalf("claim during backoff: %+v", res)
	}
	h.clock.Advance(time.Second)
	second := h.claim(t, task.TaskID, "worker-new")
	wantEqual(t, "same device", second.DeviceID, first.DeviceID)
	wantEqual(t, "generation", second.OwnerGeneration, first.OwnerGeneration+1)
	wantEqual(t, "attemptNumber", second.AttemptNumber, int64(2))

	old := first.Identity()
	_, err = h.s.Heartbeat(h.ctx, old)
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Complete(h.ctx, old, managed.Completion{Status: "passed"})
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Fail(h.ctx, old, "device_offline", true)
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Release(h.ctx, old)
	wantCode(t, err, fault.CodeStaleAssignment)
	// Each of the six parts is checked.
	for _, mutate := range []func(*managed.Identity){
		func(i *managed.Identity) { i.TaskID = "task-other" },
		func(i *managed.Identity) { i.ShardID = "shard-other" },
		func(i *managed.Identity) { i.DeviceID = "pixel-9" },
		func(i *managed.Identity) { i.LeaseID = "lease-other" },
		func(i *managed.Identity) { i.OwnerGeneration++ },
	} {
		id := second.Identity()
		mutate(&id)
		_, err := h.s.Heartbeat(h.ctx, id)
		wantCode(t, err, fault.CodeStaleAssignment)
	}

	out := h.complete(t, second, "passed")
	wantEqual(t, "shard status", out.ShardStatus, "passed")
	wantEqual(t, "task status", out.TaskStatus, "passed")
	wantEqual(t, "task", h.status(t, task.TaskID).Status, "passed")
	d, err := h.s.Device(h.ctx, "pixel-8")
	if err != nil {
		t.Fatal(err)
	}
	if d.Leased || d.ConsecutiveFailures != 0 {
		t.Fatalf("device after completion: %+v", d)
	}
	evs := h.events(t, task.TaskID)
	wantContiguous(t, evs)
	wantSlice(t, "events", eventTypes(evs), []string{
		managed.EventTaskSubmitted, managed.EventAssignmentClaimed, managed.EventAttemptStarted, managed.EventLeaseExpired,
		managed.EventAssignmentClaimed, managed.EventAttemptCompleted, managed.EventTaskFinished,
	})
}

func testLateHeartbeat(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t)
	a := h.claim(t, task.TaskID, "worker-late")
	h.clock.Advance(999 * time.Millisecond)
	if _, err := h.s.Heartbeat(h.ctx, a.Identity()); err != nil {
		t.Fatalf("heartbeat inside the lease: %v", err)
	}
	h.clock.Advance(1000 * time.Millisecond) // exactly at the renewed expiry
	_, err := h.s.Heartbeat(h.ctx, a.Identity())
	wantCode(t, err, fault.CodeStaleAssignment)
	_, err = h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed"})
	wantCode(t, err, fault.CodeStaleAssignment)
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "requeued", rec.Requeued, int64(1))
	wantEqual(t, "shard", h.status(t, task.TaskID).ShardCounts["queued"], int64(1))
	// The requeued shard has a new River job; the old one is superseded.
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].JobState != "scheduled" && jobs[0].JobState != "available" {
		t.Fatalf("requeued shard's job is %q", jobs[0].JobState)
	}
}

func testHeartbeatExtends(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t)
	a := h.claim(t, task.TaskID, "w")
	for range 5 {
		h.clock.Advance(600 * time.Millisecond)
		exp, err := h.s.Heartbeat(h.ctx, a.Identity())
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "leaseExpiresAt", exp, h.clock.Now().UnixMilli()+1000)
	}
	rec, err := h.s.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "nothing expired", rec, managed.Recovery{})
	h.complete(t, a, "passed")
}

func testRetryExhaustion(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.MaxRetries = 1 })
	first := h.claim(t, task.TaskID, "worker-1")
	out, err := h.s.Fail(h.ctx, first.Identity(), "device_offline", true)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shard after retryable failure", out.ShardStatus, "queued")
	wantEqual(t, "task after retryable failure", out.TaskStatus, "queued")
	h.clock.Advance(time.Second)
	second := h.claim(t, task.TaskID, "worker-2")
	out, err = h.s.Fail(h.ctx, second.Identity(), "device_offline", true)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shard after the last retry", out.ShardStatus, "not_tested")
	r := h.report(t, task.TaskID)
	wantEqual(t, "report status", r.Status, "not_tested")
	wantEqual(t, "exitCode", r.ExitCode, 3)
	wantEqual(t, "terminal", r.Terminal, true)
	var statuses []string
	for _, a := range r.Shards[0].Attempts {
		statuses = append(statuses, a.Status)
	}
	wantSlice(t, "attempts", statuses, []string{"retryable_failed", "failed"})
	if r.Shards[0].FailureCategory == nil || *r.Shards[0].FailureCategory != "device_offline" {
		t.Fatalf("shard failure category %v", r.Shards[0].FailureCategory)
	}
}

func testBackoffDoubles(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.MaxRetries = 8 })
	for n, want := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60} {
		a := h.claim(t, task.TaskID, "w")
		wantEqual(t, "attempt", a.AttemptNumber, int64(n+1))
		if _, err := h.s.Fail(h.ctx, a.Identity(), "transport_error", true); err != nil {
			t.Fatal(err)
		}
		res := h.tryClaim(t, task.TaskID, "w", h.serials(t))
		if res.Reason != managed.ReasonBackoff || res.Wait != want*time.Second {
			t.Fatalf("after attempt %d: %+v, want a %ds backoff", n+1, res, want)
		}
		// Past the backoff and the circuit the failures open, so that
		// only the backoff is measured here.
		h.clock.Advance(want*time.Second + managed.CircuitOpen)
	}
	a := h.claim(t, task.TaskID, "w")
	if out, _ := h.s.Fail(h.ctx, a.Identity(), "transport_error", true); out.ShardStatus != "not_tested" {
		t.Fatalf("after maxRetries+1 attempts the shard is %s", out.ShardStatus)
	}
}

func testVerdictsFinal(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	for _, verdict := range []string{"failed", "not_tested"} {
		task := h.submit(t, func(s *managed.Submission) { s.IdempotencyKey = "verdict-" + verdict; s.MaxRetries = 3 })
		a := h.claim(t, task.TaskID, "w")
		out, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: verdict, FailureCategory: "oracle_mismatch"})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "shard", out.ShardStatus, verdict)
		wantEqual(t, "task", out.TaskStatus, verdict)
		r := h.report(t, task.TaskID)
		wantEqual(t, "attempts", len(r.Shards[0].Attempts), 1)
	}
	task := h.submit(t, func(s *managed.Submission) { s.IdempotencyKey = "verdict-bad" })
	a := h.claim(t, task.TaskID, "w")
	_, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "cancelled"})
	wantCode(t, err, fault.CodeInvalidResult)
	_, err = h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed", EvidenceDigest: "abc"})
	wantCode(t, err, fault.CodeInvalidEvidence)
	_, err = h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: "passed", Report: map[string]any{"outcomeFingerprint": "x"}})
	wantCode(t, err, fault.CodeInvalidReport)
}

func testCircuit(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	task := h.submit(t, func(s *managed.Submission) { s.MaxRetries = 5 })
	for i := range managed.CircuitFailureThreshold {
		a := h.claim(t, task.TaskID, "w")
		if _, err := h.s.Fail(h.ctx, a.Identity(), "transport_error", true); err != nil {
			t.Fatal(err)
		}
		d, _ := h.s.Device(h.ctx, "pixel-8")
		wantEqual(t, "consecutiveFailures", d.ConsecutiveFailures, int64(i+1))
		h.clock.Advance(10 * time.Second) // past every backoff
	}
	d, _ := h.s.Device(h.ctx, "pixel-8")
	wantEqual(t, "circuitOpenUntil", d.CircuitOpenUntil, Start.UnixMilli()+20_000+managed.CircuitOpen.Milliseconds())
	res := h.tryClaim(t, task.TaskID, "w", h.serials(t))
	wantEqual(t, "claim with the circuit open", res.Reason, managed.ReasonNoDevice)
	h.clock.Advance(managed.CircuitOpen)
	a := h.claim(t, task.TaskID, "w")
	h.complete(t, a, "passed")
	d, _ = h.s.Device(h.ctx, "pixel-8")
	if d.ConsecutiveFailures != 0 || d.CircuitOpenUntil != 0 {
		t.Fatalf("a completion resets the circuit: %+v", d)
	}
}

func testMatrixAggregate(t *testing.T, h *harness) {
	h.register(t, "pixel-8", "SERIAL-1")
	h.register(t, "pixel-7", "SERIAL-2")
	task := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(2, nil) })
	first := h.claim(t, task.TaskID, "worker-1")
	second := h.claim(t, task.TaskID, "worker-2")
	if first.DeviceID == second.DeviceID || first.ShardID == second.ShardID {
		t.Fatalf("replicas share a device or shard: %s/%s %s/%s", first.DeviceID, first.ShardID, second.DeviceID, second.ShardID)
	}
	if _, err := h.s.Complete(h.ctx, first.Identity(), managed.Completion{Status: "passed",
		Report: map[string]any{"outcomeFingerprint": strings.Repeat("1", 64)}, EvidenceDigest: strings.Repeat("2", 64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Complete(h.ctx, second.Identity(), managed.Completion{Status: "failed", FailureCategory: "oracle_mismatch",
		Report: map[string]any{"outcomeFingerprint": strings.Repeat("3", 64)}, EvidenceDigest: strings.Repeat("4", 64)}); err != nil {
		t.Fatal(err)
	}
	r := h.report(t, task.TaskID)
	wantEqual(t, "status", r.Status, "failed")
	wantEqual(t, "exitCode", r.ExitCode, 2)
	wantEqual(t, "schemaVersion", r.SchemaVersion, managed.ReportSchema)
	if len(r.OutcomeFingerprint) != 64 {
		t.Fatalf("outcomeFingerprint %q", r.OutcomeFingerprint)
	}
	// The fingerprint depends on verdicts only: a second identical run
	// elsewhere gives the same value.
	again := h.report(t, task.TaskID)
	wantEqual(t, "outcomeFingerprint", again.OutcomeFingerprint, r.OutcomeFingerprint)
	wantEqual(t, "eventCount", r.EventCount, int64(len(h.events(t, task.TaskID))))
	_, err := h.s.Complete(h.ctx, second.Identity(), managed.Completion{Status: "passed"})
	wantCode(t, err, fault.CodeStaleAssignment)
}

func testConcurrentClaims(t *testing.T, h *harness) {
	const n = 6
	task, jobs, serials := h.farm(t, n)
	var wg sync.WaitGroup
	results := make([]managed.ClaimResult, 2*n)
	errs := make([]error, 2*n)
	for i := range 2 * n {
		wg.Go(func() {
			j := jobs[i%n]
			results[i], errs[i] = h.s.Claim(h.ctx, managed.ClaimRequest{JobID: j.JobID, TaskID: task.TaskID,
				ShardID: j.ShardID, WorkerID: "worker", Serials: serials})
		})
	}
	wg.Wait()
	devices, shards := map[string]bool{}, map[string]bool{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if res.Assignment == nil {
			continue
		}
		if devices[res.Assignment.DeviceID] || shards[res.Assignment.ShardID] {
			t.Fatalf("two claims share device %s or shard %s", res.Assignment.DeviceID, res.Assignment.ShardID)
		}
		devices[res.Assignment.DeviceID], shards[res.Assignment.ShardID] = true, true
	}
	wantEqual(t, "claimed shards", len(shards), n)
	wantContiguous(t, h.events(t, task.TaskID))
}

// testDatabaseClock: every host of a farm judges leases by the database's
// clock. Two hosts open the store as the commands do (no clock of their
// own); host A holds a heartbeating lease of 60 s, host B's clock runs ten
// minutes ahead, past A's lease. B's recovery expires nothing and A's
// heartbeat is still accepted: the store read the time from the database,
// where the lease has 60 s to run, not from either host.
func testDatabaseClock(t *testing.T, h *harness) {
	hostA, hostB := h.openProduction(t), h.openProduction(t)
	if _, err := hostA.RegisterDevice(h.ctx, managed.DeviceSpec{DeviceID: "pixel-8", Serial: "SERIAL-1", APILevel: 35}); err != nil {
		t.Fatal(err)
	}
	task, err := hostA.Submit(h.ctx, h.submission(func(s *managed.Submission) { s.LeaseDurationMs = 60_000 }))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := hostA.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	before := h.databaseNow(t)
	res, err := hostA.Claim(h.ctx, managed.ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID,
		WorkerID: "worker-a", Serials: []string{"SERIAL-1"}, Host: "host-a"})
	if err != nil || res.Assignment == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	after := h.databaseNow(t)
	a := res.Assignment
	if a.LeaseExpiresAt < before+60_000 || a.LeaseExpiresAt > after+60_000 {
		t.Fatalf("leaseExpiresAt %d is not the database's clock + 60 s (database read %d..%d)", a.LeaseExpiresAt, before, after)
	}
	if err := hostA.Start(h.ctx, a.Identity()); err != nil {
		t.Fatal(err)
	}
	skewed := time.Now().Add(10 * time.Minute).UnixMilli() // host B's clock
	if skewed <= a.LeaseExpiresAt {
		t.Fatalf("the premise: host B's clock %d must be past the lease %d", skewed, a.LeaseExpiresAt)
	}
	rec, err := hostB.Recover(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requeued != 0 || rec.Terminated != 0 {
		t.Fatalf("host B's recovery expired a live lease: %+v", rec)
	}
	renewed, err := hostA.Heartbeat(h.ctx, a.Identity())
	if err != nil {
		t.Fatalf("host A's heartbeat after host B's recovery: %v", err)
	}
	if renewed < a.LeaseExpiresAt {
		t.Fatalf("heartbeat shortened the lease: %d < %d", renewed, a.LeaseExpiresAt)
	}
	wantEqual(t, "shard status", h.statusOn(t, hostB, task.TaskID).ShardCounts["running"], int64(1))
}
