package managedcmd

import (
	"sync"

	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
)

// shardProgress renders the shards a managed worker finished: how many of
// the --max-assignments limit, the last shard and the verdicts so far.
func shardProgress(line *progress.Line, limit int) func(worker.ShardReport) {
	if !line.Enabled() {
		return nil
	}
	var mu sync.Mutex
	done := 0
	return func(rep worker.ShardReport) {
		mu.Lock()
		done++
		n := done
		mu.Unlock()
		line.Update(func(s *progress.State) {
			if limit > 0 {
				s.Index, s.Total = n, limit
			}
			s.Phase = "working"
			if a := rep.Assignment; a != nil {
				s.Label = a.TaskID + "/" + a.ShardID
			}
			switch {
			case rep.Err != nil || rep.Status == outcome.VerdictFailed:
				s.Failed++
			case rep.Status == outcome.VerdictPassed:
				s.Passed++
			default:
				s.NotTested++
			}
		})
	}
}
