package suite

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/suitereport"
)

// job is one case of the report (with ShardAll: one case on one phone)
// going through the queue. Its counters belong to the worker running it.
type job struct {
	index int    // in the report's cases
	item  int    // in Options.Items
	bound *phone // ShardAll: the phone it runs on; nil: any
	// key orders the queue: the longest median first, unknown ones after
	// in suite order.
	key      int
	attempts int
	failures int // product failures
	infra    int // infrastructure failures
	// avoid is the phone of the job's last infrastructure failure: another
	// phone takes the retry when one can.
	avoid   *phone
	running bool
	done    bool
	// reason says why the job ended without a verdict of its own.
	reason *suitereport.Problem
}

// queue hands jobs to free phones. A phone waits while a running job
// might come back to it (a retry) and leaves when nothing is left that it
// could take.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []*job
	pending []*job // by key
	phones  []*phone
	stopped bool
	stop    func() bool
}

// newQueue builds the report's cases and their jobs, ordered longest
// first by the history's medians, and marks the cases no usable phone can
// run. An interrupt of ctx stops handing out jobs.
func (r *runner) newQueue(ctx context.Context, phones []*phone) *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	var usable []*phone
	for _, p := range phones {
		if p.usable {
			usable = append(usable, p)
		}
	}
	q.phones = usable
	for _, p := range usable {
		p.runnable = make([]bool, len(p.cases))
		p.absent = make([]bool, len(p.cases))
		for i, b := range p.cases {
			p.runnable[i], p.absent[i] = b.runs(), b.absent
		}
	}
	medians := r.medians(ctx)
	for i, it := range r.o.Items {
		targets := []*phone{nil}
		if r.o.ShardAll {
			targets = usable
		}
		for _, p := range targets {
			c := suitereport.Case{Name: it.Name, Fingerprint: r.fps[i], File: it.File}
			if p != nil {
				c.Device = p.serial
			}
			j := &job{index: len(r.report.Cases), item: i, bound: p}
			r.report.Cases = append(r.report.Cases, c)
			q.jobs = append(q.jobs, j)
		}
	}
	order := slices.Clone(q.jobs)
	slices.SortStableFunc(order, func(a, b *job) int {
		ma, okA := medians[r.o.Items[a.item].Name]
		mb, okB := medians[r.o.Items[b.item].Name]
		switch {
		case okA && !okB:
			return -1
		case !okA && okB:
			return 1
		case ma > mb:
			return -1
		case ma < mb:
			return 1
		}
		return 0
	})
	for k, j := range order {
		j.key = k
	}
	q.pending = order
	q.mu.Lock()
	q.sweepLocked()
	q.mu.Unlock()
	q.stop = context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.stopped = true
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	return q
}

// medians are the history's median durations of the suite's cases (none
// without a history; a history that cannot be read is a warning).
func (r *runner) medians(ctx context.Context) map[string]time.Duration {
	if r.o.History == nil {
		return nil
	}
	names := make([]string, len(r.o.Items))
	for i, it := range r.o.Items {
		names[i] = it.Name
	}
	m, err := r.o.History.MedianDurations(ctx, names)
	if err != nil {
		r.warn("history: " + errText(err) + " (the queue keeps the suite order)")
		return nil
	}
	return m
}

func (q *queue) close() { q.stop() }

// eligible reports whether p may run j now.
func (q *queue) eligible(j *job, p *phone) bool {
	return p.usable && (j.bound == nil || j.bound == p) && p.runnable[j.item]
}

// setRunnable records whether p may run item i (its worker found out).
func (q *queue) setRunnable(p *phone, i int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p.runnable[i] != ok {
		p.runnable[i] = ok
		q.sweepLocked()
		q.cond.Broadcast()
	}
}

// next blocks until there is a job for p and hands it out; nil when the
// suite is interrupted, p is retired, or nothing is left that p could
// take (no pending job for it and no running job that could come back).
func (q *queue) next(p *phone) *job {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.stopped || !p.usable {
			return nil
		}
		var pick, fallback *job
		for _, j := range q.pending {
			if !q.eligible(j, p) {
				continue
			}
			if j.avoid == p && q.otherTaker(j, p) {
				if fallback == nil {
					fallback = j
				}
				continue
			}
			pick = j
			break
		}
		if pick == nil {
			pick = fallback
		}
		if pick != nil {
			q.pending = slices.DeleteFunc(q.pending, func(j *job) bool { return j == pick })
			pick.running = true
			return pick
		}
		if !q.mayComeBack(p) {
			return nil
		}
		q.cond.Wait()
	}
}

// otherTaker reports another usable phone that may run j.
func (q *queue) otherTaker(j *job, p *phone) bool {
	for _, o := range q.phones {
		if o != p && q.eligible(j, o) {
			return true
		}
	}
	return false
}

// mayComeBack reports a running job that p could take if it were queued
// again.
func (q *queue) mayComeBack(p *phone) bool {
	for _, j := range q.jobs {
		if j.running && (j.bound == nil || j.bound == p) && p.runnable[j.item] {
			return true
		}
	}
	return false
}

// finish ends a job's attempt: queued again (by its key) for a retry, or
// done.
func (q *queue) finish(j *job, again bool, reason *suitereport.Problem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j.running = false
	if again && !q.stopped {
		at, _ := slices.BinarySearchFunc(q.pending, j.key, func(x *job, k int) int { return x.key - k })
		q.pending = slices.Insert(q.pending, at, j)
	} else {
		j.done = true
		if reason != nil {
			j.reason = reason
		}
	}
	q.sweepLocked()
	q.cond.Broadcast()
}

// retire takes p out: it gets no more jobs, and the jobs only it could
// run end.
func (q *queue) retire(p *phone) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p.usable = false
	q.sweepLocked()
	q.cond.Broadcast()
}

// sweepLocked ends every pending job no usable phone can run.
func (q *queue) sweepLocked() {
	q.pending = slices.DeleteFunc(q.pending, func(j *job) bool {
		for _, p := range q.phones {
			if q.eligible(j, p) {
				return false
			}
		}
		j.done = true
		j.reason = q.noTaker(j)
		return true
	})
}

// noTaker says why no phone can run j.
func (q *queue) noTaker(j *job) *suitereport.Problem {
	if j.bound != nil && !j.bound.usable {
		return &suitereport.Problem{Code: fault.CodeNoPhoneLeft, Message: "its phone " + j.bound.serial + " was retired before the case could finish"}
	}
	holds, absent := false, false
	for _, p := range q.phones {
		holds = holds || p.runnable[j.item]
		absent = absent || p.absent[j.item]
	}
	if !holds && absent {
		return &suitereport.Problem{Code: protocol.ErrCaseNotFound, Message: "no usable phone holds a case of that name"}
	}
	if !holds {
		return &suitereport.Problem{Code: fault.CodeCaseNameConflict, Message: "every usable phone holds another case under that name"}
	}
	return &suitereport.Problem{Code: fault.CodeNoPhoneLeft, Message: "every phone that could run the case was retired"}
}

// interrupted is the reason of a job the interrupt left unfinished.
var interrupted = &suitereport.Problem{Code: fault.CodeInterrupted, Message: "the suite was interrupted before this case finished"}
