package managed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/solopi-dev/solopi/clock"
	"riverqueue.com/riverui"
)

// River queues and job kinds of this package.
const (
	QueueShards      = "solopi_managed_shards"
	QueueMaintenance = "solopi_managed_maintenance"
	KindShard        = "solopi_managed_shard"
	kindRecover      = "solopi_managed_recover"
)

// carrierMaxAttempts bounds River's own attempts of a shard job. The store
// decides retries (maxRetries); this is only a backstop against a job that
// errors without ever reaching the store. A carrier River gives up on ends
// its shard not_tested at the next recovery.
const carrierMaxAttempts = 25

// recoverInterval is how often River's elected leader enqueues expiry
// recovery.
const recoverInterval = 2 * time.Second

// ShardArgs are the arguments of the River job that carries a shard.
type ShardArgs struct {
	TaskID  string `json:"taskId"`
	ShardID string `json:"shardId"`
	// AttemptBase is how many counted attempts the shard had when this job
	// was created, so that the retry policy can number attempts across
	// carriers.
	AttemptBase int `json:"attemptBase,omitempty"`
}

// Kind is the River job kind.
func (ShardArgs) Kind() string { return KindShard }

// RecoverArgs are the arguments of the periodic expiry-recovery job.
type RecoverArgs struct{}

// Kind is the River job kind.
func (RecoverArgs) Kind() string { return kindRecover }

// shardJob is the River job carrying a shard, available at once: a shard in
// its backoff makes the job snooze until the backoff ends.
func shardJob(taskID, shardID string, attemptBase int) river.InsertManyParams {
	return river.InsertManyParams{
		Args: ShardArgs{TaskID: taskID, ShardID: shardID, AttemptBase: attemptBase},
		InsertOpts: &river.InsertOpts{
			Queue:       QueueShards,
			MaxAttempts: carrierMaxAttempts,
			Tags:        []string{taskID},
		},
	}
}

// RetryPolicy schedules River's retry of a shard job by the farm's rule: the
// retry after counted attempt n waits 1 s·2^(n-1), at most 60 s. The store
// records the same time on the shard and is authoritative: a job that wakes
// early snoozes until then.
type RetryPolicy struct {
	Clock clock.Clock // clock.System when nil
}

// NextRetry implements river.ClientRetryPolicy.
func (p RetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	n := job.Attempt
	if job.Kind == KindShard {
		var args ShardArgs
		if json.Unmarshal(job.EncodedArgs, &args) == nil {
			n += args.AttemptBase
		}
	}
	return clock.Or(p.Clock).Now().Add(Backoff(n))
}

// PeriodicRecovery is the periodic job River's elected leader enqueues:
// once across the farm, one per interval. It is unique per interval, not
// while one is in flight: River's uniqueness always counts running jobs,
// and a recovery job whose worker process died stays "running" until
// River's rescuer (an hour), which would block recovery for that long.
// Recovery is idempotent, so two overlapping runs are harmless.
func PeriodicRecovery() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(recoverInterval), func() (river.JobArgs, *river.InsertOpts) {
		return RecoverArgs{}, &river.InsertOpts{
			Queue:       QueueMaintenance,
			MaxAttempts: 1,
			UniqueOpts:  river.UniqueOpts{ByPeriod: recoverInterval},
		}
	}, &river.PeriodicJobOpts{ID: kindRecover, RunOnStart: true})
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// riverOps is the River plumbing shared by both backends, for the
// backend's transaction type TTx.
type riverOps[TTx any] struct {
	driver riverdriver.Driver[TTx]
	// inserter is an insert-only client (no queues): it enqueues and
	// cancels jobs inside the store's transactions.
	inserter *river.Client[TTx]
	logger   *slog.Logger
}

func newRiverOps[TTx any](driver riverdriver.Driver[TTx], logger *slog.Logger) (*riverOps[TTx], error) {
	if logger == nil {
		logger = discardLogger()
	}
	c, err := river.NewClient(driver, &river.Config{Logger: logger, RetryPolicy: RetryPolicy{}})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &riverOps[TTx]{driver: driver, inserter: c, logger: logger}, nil
}

func (r *riverOps[TTx]) insertJobs(ctx context.Context, tx TTx, jobs []river.InsertManyParams) ([]int64, error) {
	res, err := r.inserter.InsertManyTx(ctx, tx, jobs)
	if err != nil {
		return nil, fmt.Errorf("enqueue shard jobs: %w", err)
	}
	ids := make([]int64, len(res))
	for i, x := range res {
		ids[i] = x.Job.ID
	}
	return ids, nil
}

func (r *riverOps[TTx]) cancelJob(ctx context.Context, tx TTx, id int64) error {
	if _, err := r.inserter.JobCancelTx(ctx, tx, id); err != nil && err != river.ErrNotFound {
		return fmt.Errorf("cancel river job %d: %w", id, err)
	}
	return nil
}

func (r *riverOps[TTx]) jobStates(ctx context.Context, ids []int64) (map[int64]rivertype.JobState, error) {
	out := map[int64]rivertype.JobState{}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 500)]
		ids = ids[len(batch):]
		res, err := r.inserter.JobList(ctx, river.NewJobListParams().IDs(batch...).First(len(batch)))
		if err != nil {
			return nil, fmt.Errorf("list river jobs: %w", err)
		}
		for _, j := range res.Jobs {
			out[j.ID] = j.State
		}
	}
	return out, nil
}

func (r *riverOps[TTx]) newClient(cfg *river.Config) (riverClient, error) {
	if cfg.Logger == nil {
		cfg.Logger = r.logger
	}
	c, err := river.NewClient(r.driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return c, nil
}

func (r *riverOps[TTx]) uiHandler(ctx context.Context, prefix string) (uiHandler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(r.inserter, nil),
		Logger:    r.logger,
		Prefix:    prefix,
		// Job arguments name tasks and shards only; they never hold a secret.
		JobListHideArgsByDefault: false,
	})
	if err != nil {
		return nil, fmt.Errorf("river ui: %w", err)
	}
	return h, nil
}
