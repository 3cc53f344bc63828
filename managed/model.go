// Package managed runs verification plans across a farm of Android devices.
//
// A task is one plan submitted against a device matrix; the matrix expands
// into shards (one per target replica). Each shard's execution is a River job
// (github.com/riverqueue/river): River queues, schedules, retries and
// dashboards the work, while this package's own tables beside River's hold
// what a device farm needs on top (tasks, shards, attempts, devices and an
// append-only event log). Claiming a shard leases a matching device in the
// same transaction and raises the device's generation; every later write of
// the attempt must present the six-part assignment identity, so a worker that
// lost its lease cannot write anything (docs/managed.md, "Fencing").
//
// The store runs on SQLite on one host and on PostgreSQL across hosts; both
// implement Store and pass one conformance suite (managed/storetest).
package managed

import (
	"encoding/json"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
)

// Schema versions of the payloads, as SoloPi's own host CLI names them.
const (
	PlanSchema       = "solopi.ai.verification-plan/v1"
	TaskSchema       = "solopi.ai.managed-task/v1"
	DeviceSchema     = "solopi.ai.managed-device/v1"
	AssignmentSchema = "solopi.ai.managed-assignment/v1"
	ReportSchema     = "solopi.ai.managed-report/v1"
)

// SchemaVersion is the version of this package's tables, stored in the
// managed_metadata row "schema_version".
const SchemaVersion = 1

// Device health values. Only healthy devices are claimed.
const (
	HealthHealthy     = "healthy"
	HealthDegraded    = "degraded"
	HealthOffline     = "offline"
	HealthQuarantined = "quarantined"
)

// Limits and defaults of a submission.
const (
	DefaultMaxRetries      = 1
	maxRetries             = 10
	DefaultLeaseDurationMs = 60_000
	minLeaseDurationMs     = 1_000
	maxLeaseDurationMs     = 1_800_000
	DefaultRetentionMs     = 7 * 24 * 3600 * 1000
	maxRetentionMs         = 365 * 24 * 3600 * 1000
	maxMatrixShards        = 64
	maxReplicas            = 64
)

// Retry and circuit rules: a retry waits 1 s·2^(n-1), at most 60 s, after
// attempt n; three consecutive failures on a device open its circuit for
// 60 s.
const (
	retryBackoffBase        = time.Second
	retryBackoffMax         = time.Minute
	CircuitFailureThreshold = 3
	CircuitOpen             = time.Minute
)

// retryBackoff is the farm's retry schedule (no jitter: the wait is
// recorded on the shard and reported).
var retryBackoff = clock.Backoff{Base: retryBackoffBase, Max: retryBackoffMax}

// Backoff is the wait before the retry that follows counted attempt n (n >= 1).
func Backoff(n int) time.Duration { return retryBackoff.Pause(max(n, 1)) }

// Failure categories this package records itself (the Result Judge's come
// from the verification report).
const (
	CategoryLeaseExpired     = "lease_expired"
	CategoryCancelledByOwner = "cancelled_by_owner"
	CategoryTransport        = "transport_error"
	CategoryWorker           = "worker_error"
	CategoryWorkerStopped    = "worker_stopped"
	CategoryJobCancelled     = "job_cancelled"
	categoryJobDiscarded     = "job_discarded"
	categoryJobDeleted       = "job_deleted"
)

// Event types of the per-task log.
const (
	EventTaskSubmitted     = "task_submitted"
	EventAssignmentClaimed = "assignment_claimed"
	EventAttemptStarted    = "attempt_started"
	EventAttemptCompleted  = "attempt_completed"
	EventAttemptFailed     = "attempt_failed"
	eventAttemptReleased   = "attempt_released"
	EventLeaseExpired      = "lease_expired"
	eventShardAbandoned    = "shard_abandoned"
	EventTaskCancelled     = "task_cancelled"
	EventTaskFinished      = "task_finished"
	EventEvidencePurged    = "evidence_purged"
)

// Device is a registered device as the store reports it.
type Device struct {
	SchemaVersion       string            `json:"schemaVersion"`
	DeviceID            string            `json:"deviceId"`
	Serial              string            `json:"serial"`
	Platform            string            `json:"platform"`
	APILevel            int               `json:"apiLevel"`
	Capabilities        []string          `json:"capabilities"`
	Labels              map[string]string `json:"labels"`
	Health              string            `json:"health"`
	LastSeenAt          int64             `json:"lastSeenAt"`
	OwnerGeneration     int64             `json:"ownerGeneration"`
	Leased              bool              `json:"leased"`
	LeaseExpiresAt      *int64            `json:"leaseExpiresAt"`
	ConsecutiveFailures int64             `json:"consecutiveFailures"`
	CircuitOpenUntil    int64             `json:"circuitOpenUntil"`
}

// DeviceSpec registers or updates a device.
type DeviceSpec struct {
	DeviceID     string
	Serial       string
	Platform     string // "" means android
	APILevel     int
	Capabilities []string
	Labels       map[string]string
	Health       string // "" means healthy
}

// Submission is one managed-submit request. Plan, Matrix and Decisions are
// generic JSON trees as canonjson.Decode produces them.
type Submission struct {
	Plan            any
	Matrix          any
	Decisions       any // nil means {}
	IdempotencyKey  string
	OwnerToken      string // "" means generate one (returned once)
	MaxRetries      int
	LeaseDurationMs int64
	RetentionMs     int64
}

// NewSubmission returns a submission with the documented defaults.
func NewSubmission() Submission {
	return Submission{MaxRetries: DefaultMaxRetries, LeaseDurationMs: DefaultLeaseDurationMs, RetentionMs: DefaultRetentionMs}
}

// Task is the task payload.
type Task struct {
	SchemaVersion   string `json:"schemaVersion"`
	TaskID          string `json:"taskId"`
	IdempotencyKey  string `json:"idempotencyKey"`
	PlanFingerprint string `json:"planFingerprint"`
	Status          string `json:"status"`
	CancelRequested bool   `json:"cancelRequested"`
	CreatedAt       int64  `json:"createdAt"`
	UpdatedAt       int64  `json:"updatedAt"`
	FinishedAt      *int64 `json:"finishedAt"`
	Idempotent      bool   `json:"idempotent"`
	// OwnerToken is set only on the response that created the task: the
	// store keeps only its hash, so it can never be shown again.
	OwnerToken string `json:"ownerToken,omitempty"`
	// Warnings are set on a submission's and a status's answer: targets
	// of shards still queued that no registered device can run now.
	Warnings []warning `json:"warnings,omitempty"`
}

// warning is advice on an accepted request, with a stable code.
type warning struct {
	Code            string `json:"code"`
	Message         string `json:"message"`
	TargetID        string `json:"targetId,omitempty"`
	MatchingDevices int    `json:"matchingDevices,omitempty"`
}

// TaskStatus is a task with its shard counts by status.
type TaskStatus struct {
	Task
	ShardCounts map[string]int64 `json:"shardCounts"`
}

// Identity is the six-part assignment identity every attempt write must
// present.
type Identity struct {
	TaskID          string `json:"taskId"`
	ShardID         string `json:"shardId"`
	AttemptID       string `json:"attemptId"`
	DeviceID        string `json:"deviceId"`
	LeaseID         string `json:"leaseId"`
	OwnerGeneration int64  `json:"ownerGeneration"`
}

// Assignment is a claimed shard: the identity plus what the worker needs to
// run it.
type Assignment struct {
	SchemaVersion   string          `json:"schemaVersion"`
	TaskID          string          `json:"taskId"`
	ShardID         string          `json:"shardId"`
	TargetID        string          `json:"targetId"`
	ReplicaIndex    int64           `json:"replicaIndex"`
	AttemptID       string          `json:"attemptId"`
	AttemptNumber   int64           `json:"attemptNumber"`
	WorkerID        string          `json:"workerId"`
	DeviceID        string          `json:"deviceId"`
	Serial          string          `json:"serial"`
	LeaseID         string          `json:"leaseId"`
	OwnerGeneration int64           `json:"ownerGeneration"`
	LeaseExpiresAt  int64           `json:"leaseExpiresAt"`
	LeaseDurationMs int64           `json:"leaseDurationMs"`
	PlanFingerprint string          `json:"planFingerprint"`
	Plan            json.RawMessage `json:"plan"`
	Decisions       json.RawMessage `json:"decisions"`
}

// Identity returns the assignment's fencing identity.
func (a *Assignment) Identity() Identity {
	return Identity{TaskID: a.TaskID, ShardID: a.ShardID, AttemptID: a.AttemptID, DeviceID: a.DeviceID, LeaseID: a.LeaseID, OwnerGeneration: a.OwnerGeneration}
}

// ClaimRequest asks to claim one shard for the River job carrying it, on a
// device this worker reaches.
type ClaimRequest struct {
	JobID    int64
	TaskID   string
	ShardID  string
	WorkerID string
	// Serials are the devices this worker's adb server sees; only they are
	// leased.
	Serials []string
	// Host and ArtifactsRoot are recorded with the attempt so that the
	// retention purge on that host finds its evidence
	// (<root>/<taskId>/<shardId>/<attemptId>).
	Host          string
	ArtifactsRoot string
}

// ClaimResult is the outcome of a claim: an assignment, a wait (no device
// free here, a backoff not over, a lease still held), or nothing left to do
// for this job (the shard is terminal or another job now carries it).
type ClaimResult struct {
	Assignment *Assignment
	Wait       time.Duration
	Finished   bool
	Reason     string
}

// Completion is the Judge's verdict of an attempt.
type Completion struct {
	Status          string // passed | failed | not_tested
	FailureCategory string
	ReportPath      string
	Report          any // the verification report (redacted before it is stored)
	EvidenceDigest  string
}

// Outcome is where a completion, failure or hand-back left the shard and task.
type Outcome struct {
	TaskID      string `json:"taskId"`
	ShardID     string `json:"shardId"`
	ShardStatus string `json:"shardStatus"`
	TaskStatus  string `json:"taskStatus"`
}

// Recovery counts what a recovery pass did.
type Recovery struct {
	Requeued   int64 `json:"requeued"`
	Terminated int64 `json:"terminated"`
}

// Event is one entry of a task's append-only log.
type Event struct {
	Sequence     int64           `json:"sequence"`
	TaskSequence int64           `json:"taskSequence"`
	TaskID       string          `json:"taskId"`
	ShardID      *string         `json:"shardId"`
	AttemptID    *string         `json:"attemptId"`
	Type         string          `json:"type"`
	Timestamp    int64           `json:"timestamp"`
	Content      json.RawMessage `json:"content"`
}

// Health is the store's summary (managed-init, managed-health, GET /health).
type Health struct {
	Ready             bool             `json:"ready"`
	SchemaVersion     int              `json:"schemaVersion"`
	Database          string           `json:"database"`
	Backend           string           `json:"backend"`
	Devices           map[string]int64 `json:"devices"`
	Tasks             map[string]int64 `json:"tasks"`
	ActiveAssignments int64            `json:"activeAssignments"`
}

// ShardJob names the River job currently carrying a shard, and its River
// state ("" when the job no longer exists).
type ShardJob struct {
	ShardID  string `json:"shardId"`
	Status   string `json:"status"`
	JobID    int64  `json:"jobId"`
	JobState string `json:"jobState"`
}

// The state machines the store's transitions follow (protocol holds them as
// pure tables; the store checks every transition it writes against them).
var (
	taskMachine    = protocol.ManagedTask()
	shardMachine   = protocol.ManagedShard()
	attemptMachine = protocol.ManagedAttempt()
)

// terminal reports whether a task or shard status is final.
func terminal(status string) bool { return shardMachine.IsTerminal(protocol.State(status)) }

// Terminal reports whether a task or shard status is final.
func Terminal(status string) bool { return terminal(status) }
