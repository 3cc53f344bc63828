package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
)

func testDevices(t *testing.T, h *harness) {
	d := h.register(t, "pixel-8", "SERIAL-1", func(s *managed.DeviceSpec) {
		s.Capabilities = []string{"verification", "agent", "agent"}
	})
	wantEqual(t, "schemaVersion", d.SchemaVersion, managed.DeviceSchema)
	wantSlice(t, "capabilities", d.Capabilities, []string{"agent", "verification"})
	wantEqual(t, "platform", d.Platform, "android")
	wantEqual(t, "health", d.Health, managed.HealthHealthy)
	wantEqual(t, "lastSeenAt", d.LastSeenAt, Start.UnixMilli())
	wantEqual(t, "leased", d.Leased, false)

	// An upsert keeps the id; another id may not take the serial.
	h.clock.Advance(5)
	d = h.register(t, "pixel-8", "SERIAL-1", func(s *managed.DeviceSpec) { s.APILevel = 34; s.Health = managed.HealthDegraded })
	wantEqual(t, "apiLevel", d.APILevel, 34)
	wantEqual(t, "health", d.Health, managed.HealthDegraded)
	_, err := h.s.RegisterDevice(h.ctx, managed.DeviceSpec{DeviceID: "pixel-9", Serial: "SERIAL-1", APILevel: 35})
	wantCode(t, err, fault.CodeSerialConflict)

	for _, c := range []struct {
		spec managed.DeviceSpec
		code string
	}{
		{managed.DeviceSpec{DeviceID: "-bad", Serial: "S", APILevel: 30}, fault.CodeInvalidID},
		{managed.DeviceSpec{DeviceID: "d", Serial: "S 1", APILevel: 30}, fault.CodeInvalidID},
		{managed.DeviceSpec{DeviceID: "d", Serial: "S", APILevel: 0}, fault.CodeInvalidContract},
		{managed.DeviceSpec{DeviceID: "d", Serial: "S", APILevel: 30, Health: "broken"}, fault.CodeInvalidHealth},
		{managed.DeviceSpec{DeviceID: "d", Serial: "S", APILevel: 30, Labels: map[string]string{"k": ""}}, fault.CodeInvalidID},
	} {
		_, err := h.s.RegisterDevice(h.ctx, c.spec)
		wantCode(t, err, c.code)
	}

	h.register(t, "emulator-a", "emulator-5554")
	ds, err := h.s.Devices(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "device count", len(ds), 2)
	wantEqual(t, "first device", ds[0].DeviceID, "emulator-a")

	d, err = h.s.SetDeviceHealth(h.ctx, "pixel-8", managed.HealthOffline)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "health", d.Health, managed.HealthOffline)
	d, err = h.s.DeviceBySerial(h.ctx, "SERIAL-1")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "device by serial", d.DeviceID, "pixel-8")
	_, err = h.s.Device(h.ctx, "missing")
	wantCode(t, err, fault.CodeDeviceNotFound)
	_, err = h.s.SetDeviceHealth(h.ctx, "missing", managed.HealthHealthy)
	wantCode(t, err, fault.CodeDeviceNotFound)

	health, err := h.s.Health(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "ready", health.Ready, true)
	wantEqual(t, "schemaVersion", health.SchemaVersion, managed.SchemaVersion)
	wantEqual(t, "healthy devices", health.Devices[managed.HealthHealthy], int64(1))
	wantEqual(t, "offline devices", health.Devices[managed.HealthOffline], int64(1))
}

func testSubmitValidation(t *testing.T, h *harness) {
	bad := func(m func(*managed.Submission)) error {
		_, err := h.s.Submit(h.ctx, h.submission(m))
		return err
	}
	hex := strings.Repeat("a", 64)
	sel := func(s map[string]any) func(*managed.Submission) {
		return func(sub *managed.Submission) { sub.Matrix = []any{map[string]any{"id": "t", "selector": s}} }
	}
	for _, c := range []struct {
		name string
		m    func(*managed.Submission)
		code string
	}{
		{"plan not an object", func(s *managed.Submission) { s.Plan = []any{} }, fault.CodeInvalidPlan},
		{"plan schema", func(s *managed.Submission) { s.Plan = map[string]any{"schemaVersion": "x", "planFingerprint": hex} }, fault.CodeInvalidPlan},
		{"plan fingerprint", func(s *managed.Submission) { s.Plan = Plan("ABC") }, fault.CodeInvalidPlan},
		{"decisions not an object", func(s *managed.Submission) { s.Decisions = "x" }, fault.CodeInvalidContract},
		{"matrix not a list", func(s *managed.Submission) { s.Matrix = map[string]any{} }, fault.CodeInvalidContract},
		{"matrix empty", func(s *managed.Submission) { s.Matrix = []any{} }, fault.CodeInvalidContract},
		{"unknown target field", func(s *managed.Submission) { s.Matrix = []any{map[string]any{"id": "t", "devices": 1}} }, fault.CodeInvalidMatrix},
		{"duplicate target", func(s *managed.Submission) {
			s.Matrix = []any{map[string]any{"id": "t"}, map[string]any{"id": "t"}}
		}, fault.CodeDuplicateID},
		{"too many replicas", func(s *managed.Submission) { s.Matrix = []any{map[string]any{"id": "t", "replicas": 65}} }, fault.CodeInvalidContract},
		{"replicas a float", func(s *managed.Submission) {
			s.Matrix = []any{map[string]any{"id": "t", "replicas": json.Number("1.0")}}
		}, fault.CodeInvalidContract},
		{"over 64 shards", func(s *managed.Submission) {
			s.Matrix = []any{map[string]any{"id": "a", "replicas": 40}, map[string]any{"id": "b", "replicas": 25}}
		}, fault.CodeInvalidMatrix},
		{"unknown selector field", sel(map[string]any{"os": "android"}), fault.CodeInvalidSelector},
		{"api range reversed", sel(map[string]any{"minApiLevel": 30, "maxApiLevel": 29}), fault.CodeInvalidSelector},
		{"empty capability list", sel(map[string]any{"capabilities": []any{}}), fault.CodeInvalidContract},
		{"retries", func(s *managed.Submission) { s.MaxRetries = 11 }, fault.CodeInvalidContract},
		{"lease too short", func(s *managed.Submission) { s.LeaseDurationMs = 999 }, fault.CodeInvalidContract},
		{"lease too long", func(s *managed.Submission) { s.LeaseDurationMs = 1_800_001 }, fault.CodeInvalidContract},
		{"retention", func(s *managed.Submission) { s.RetentionMs = -1 }, fault.CodeInvalidContract},
		{"idempotency key", func(s *managed.Submission) { s.IdempotencyKey = "has space" }, fault.CodeInvalidID},
		{"owner token short", func(s *managed.Submission) { s.OwnerToken = "short" }, fault.CodeInvalidOwnerToken},
		{"owner token chars", func(s *managed.Submission) { s.OwnerToken = strings.Repeat("a", 20) + "/" }, fault.CodeInvalidOwnerToken},
	} {
		t.Run(c.name, func(t *testing.T) { wantCode(t, bad(c.m), c.code) })
	}
	// Nothing was created by a refused submission.
	health, err := h.s.Health(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "tasks", len(health.Tasks), 0)
}

func testSubmitIdempotency(t *testing.T, h *harness) {
	first := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(3, nil) })
	wantEqual(t, "schemaVersion", first.SchemaVersion, managed.TaskSchema)
	wantEqual(t, "status", first.Status, "queued")
	wantEqual(t, "idempotent", first.Idempotent, false)
	wantEqual(t, "ownerToken of a caller-chosen token", first.OwnerToken, "")
	if !strings.HasPrefix(first.TaskID, "task-") || len(first.TaskID) != 37 {
		t.Fatalf("taskId %q is not task-<32hex>", first.TaskID)
	}

	jobs, err := h.s.ShardJobs(h.ctx, first.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shards", len(jobs), 3)
	for i, j := range jobs {
		want := "shard-" + first.TaskID[5:17] + "-000-00" + string(rune('0'+i))
		wantEqual(t, "shard id", j.ShardID, want)
		if j.JobID == 0 || j.JobState != "available" {
			t.Fatalf("shard %s has River job %d in state %q, want an available job", j.ShardID, j.JobID, j.JobState)
		}
	}

	for _, c := range []struct {
		name string
		m    func(*managed.Submission)
		code string
	}{
		{"same content and owner", func(s *managed.Submission) { s.Matrix = Matrix(3, nil) }, ""},
		{"different plan", func(s *managed.Submission) { s.Matrix = Matrix(3, nil); s.Plan = Plan(strings.Repeat("b", 64)) }, fault.CodeIdempotencyConflict},
		{"different decisions", func(s *managed.Submission) { s.Matrix = Matrix(3, nil); s.Decisions = map[string]any{"a": 1} }, fault.CodeIdempotencyConflict},
		{"different matrix", func(s *managed.Submission) { s.Matrix = Matrix(2, nil) }, fault.CodeIdempotencyConflict},
		{"different retries", func(s *managed.Submission) { s.Matrix = Matrix(3, nil); s.MaxRetries = 2 }, fault.CodeIdempotencyConflict},
		{"different owner", func(s *managed.Submission) { s.Matrix = Matrix(3, nil); s.OwnerToken = "another-owner-1234567890" }, fault.CodeOwnerMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			again, err := h.s.Submit(h.ctx, h.submission(c.m))
			if c.code != "" {
				wantCode(t, err, c.code)
				if c.code == fault.CodeIdempotencyConflict {
					if f := fault.From(err); f.Details["taskId"] != first.TaskID {
						t.Fatalf("conflict names task %v, want %s", f.Details["taskId"], first.TaskID)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantEqual(t, "taskId", again.TaskID, first.TaskID)
			wantEqual(t, "idempotent", again.Idempotent, true)
			wantEqual(t, "ownerToken", again.OwnerToken, "")
		})
	}

	// A generated token is returned once, and only its hash is kept: the
	// resubmission with it is idempotent and echoes nothing.
	gen := h.submit(t, func(s *managed.Submission) { s.IdempotencyKey = "ci-build-2"; s.OwnerToken = "" })
	if !managed.ValidOwnerToken(gen.OwnerToken) {
		t.Fatalf("generated owner token %q is not a valid token", gen.OwnerToken)
	}
	again := h.submit(t, func(s *managed.Submission) { s.IdempotencyKey = "ci-build-2"; s.OwnerToken = gen.OwnerToken })
	wantEqual(t, "idempotent", again.Idempotent, true)
	wantEqual(t, "ownerToken", again.OwnerToken, "")
	for _, e := range h.events(t, gen.TaskID) {
		if strings.Contains(string(e.Content), gen.OwnerToken) {
			t.Fatalf("event %s holds the owner token", e.Type)
		}
	}
	evs := h.events(t, first.TaskID)
	wantSlice(t, "events", eventTypes(evs), []string{managed.EventTaskSubmitted})
	var content map[string]any
	if err := json.Unmarshal(evs[0].Content, &content); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shardCount", content["shardCount"], any(float64(3)))
}

// testPlacementWarnings: a matrix target no registered device can run is
// accepted (devices register and recover over time) but the submission
// says so, per target, with a stable code; nothing of it is stored.
func testPlacementWarnings(t *testing.T, h *harness) {
	two := []any{
		map[string]any{"id": "android", "replicas": 2, "selector": map[string]any{"platform": "android"}},
		map[string]any{"id": "tablet", "selector": map[string]any{"labels": map[string]any{"form": "tablet"}}},
	}
	first := h.submit(t, func(s *managed.Submission) { s.Matrix = two })
	if len(first.Warnings) != 2 || first.Warnings[0].Code != managed.WarnNoMatchingDevice || first.Warnings[0].TargetID != "android" ||
		first.Warnings[1].Code != managed.WarnNoMatchingDevice || first.Warnings[1].TargetID != "tablet" {
		t.Fatalf("warnings with no device: %+v", first.Warnings)
	}
	h.register(t, "pixel-8", "SERIAL-1", func(d *managed.DeviceSpec) { d.Health = managed.HealthDegraded })
	again, err := h.s.Submit(h.ctx, h.submission(func(s *managed.Submission) { s.Matrix = two }))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Idempotent || len(again.Warnings) != 2 || again.Warnings[0].Code != managed.WarnNoHealthyDevice ||
		again.Warnings[0].MatchingDevices != 1 || again.Warnings[1].Code != managed.WarnNoMatchingDevice {
		t.Fatalf("warnings with a degraded device: %+v", again.Warnings)
	}
	if _, err := h.s.SetDeviceHealth(h.ctx, "pixel-8", managed.HealthHealthy); err != nil {
		t.Fatal(err)
	}
	ok := h.submit(t, func(s *managed.Submission) { s.IdempotencyKey = "ci-build-2"; s.Matrix = Matrix(1, nil) })
	if len(ok.Warnings) != 0 {
		t.Fatalf("warnings with a healthy matching device: %+v", ok.Warnings)
	}
	// A task polled while it waits says why: here only the tablet
	// target still has no device.
	if st := h.status(t, first.TaskID); st.Status != "queued" || len(st.Warnings) != 1 ||
		st.Warnings[0].Code != managed.WarnNoMatchingDevice || st.Warnings[0].TargetID != "tablet" {
		t.Fatalf("status of the waiting task: %+v", st)
	}
	if st := h.status(t, ok.TaskID); len(st.Warnings) != 0 {
		t.Fatalf("status of a task a device can run: %+v", st)
	}
}
