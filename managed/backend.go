package managed

import (
	"context"
	"errors"
	"net/http"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The store's logic is written once against these few interfaces; a backend
// (SQLite, PostgreSQL) supplies connections, transactions, its dialect's
// DDL and locking, and a River client of its transaction type. Every query
// uses $N placeholders, which both pgx and modernc.org/sqlite bind by
// number.

type row interface{ Scan(dest ...any) error }

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type querier interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	queryRow(ctx context.Context, q string, args ...any) row
	query(ctx context.Context, q string, args ...any) (rows, error)
}

// errNoRows is what a backend's row reports when a query matched nothing.
var errNoRows = errors.New("no rows")

// txn is one write transaction. On SQLite it holds the database's write
// lock from its first statement (BEGIN IMMEDIATE); on PostgreSQL it runs at
// READ COMMITTED and serialises on the task row (lockTask), which every
// write takes first, before any shard, attempt or device row, so that two
// transactions never wait for each other in opposite orders.
type txn interface {
	querier
	lockTask(ctx context.Context, taskID string) error
	// shareTask takes the task row's lock in shared mode: concurrent
	// heartbeats of one task do not wait for each other, but they do wait
	// for a claim, completion or cancel of that task.
	shareTask(ctx context.Context, taskID string) error
	// insertJobs enqueues River jobs inside the transaction.
	insertJobs(ctx context.Context, jobs []river.InsertManyParams) ([]int64, error)
	// cancelJob cancels a River job inside the transaction: a queued job is
	// cancelled at once, a running one has its worker's context cancelled.
	cancelJob(ctx context.Context, jobID int64) error
	commit() error
	rollback()
}

type backend interface {
	name() string
	location() string
	// nowQuery selects the database's clock in Unix milliseconds.
	nowQuery() string
	reader() querier
	begin(ctx context.Context) (txn, error)
	// retryable reports a transient conflict (deadlock, serialization
	// failure, a busy database) after which the transaction is run again.
	retryable(err error) bool
	uniqueViolation(err error) bool
	// jobStates reads the River state of jobs; missing jobs are absent.
	jobStates(ctx context.Context, ids []int64) (map[int64]rivertype.JobState, error)
	newClient(cfg *river.Config) (riverClient, error)
	uiHandler(ctx context.Context, prefix string) (uiHandler, error)
	close() error
}

// riverClient is a River client whose transaction type the caller need not
// know.
type riverClient interface {
	Start(ctx context.Context) error
	// Stop stops fetching and waits for running jobs.
	Stop(ctx context.Context) error
	// StopAndCancel also cancels the running jobs' contexts.
	StopAndCancel(ctx context.Context) error
	// Subscribe delivers River's job events (for tests and progress).
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	// JobCancel cancels a job as an operator would from River's UI.
	JobCancel(ctx context.Context, jobID int64) (*rivertype.JobRow, error)
}

// uiHandler is River's operator dashboard (riverui) for this database.
type uiHandler interface {
	http.Handler
	Start(ctx context.Context) error
}
