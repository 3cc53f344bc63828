package history

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/suitereport"
)

// Summary is one case's history. A run is the attempts of the case in one
// batch (and shard); its verdict follows suitereport.CaseVerdict.
type Summary struct {
	CaseName string `json:"caseName"`
	// Fingerprint is the newest run's case fingerprint.
	Fingerprint string `json:"caseFingerprint"`
	Runs        int    `json:"runs"`
	Attempts    int    `json:"attempts"`
	Passed      int    `json:"passed"`
	Flaky       int    `json:"flaky"`
	Failed      int    `json:"failed"`
	Errors      int    `json:"errors"`
	// PassRate and FlakeRate are shares of the runs with a product verdict
	// (passed, flaky or failed); 0 when there is none.
	PassRate  float64 `json:"passRate"`
	FlakeRate float64 `json:"flakeRate"`
	// MedianDurationMs is over the newest medianWindow product attempts
	// (passed or failed): what a run of the case takes.
	MedianDurationMs int64 `json:"medianDurationMs"`
	// LastVerdicts are the newest runs' verdicts, newest first.
	LastVerdicts []suitereport.Verdict `json:"lastVerdicts"`
	LastRunAt    time.Time             `json:"lastRunAt"`
}

// Query selects summaries.
type Query struct {
	// Cases names the cases (nil: every case in the history).
	Cases []string
	// Last is how many run verdicts LastVerdicts keeps (default 10).
	Last int
}

// medianWindow is how many of a case's newest product attempts its median
// duration is taken over: recent enough to follow a case that changed.
const medianWindow = 20

// row is an attempt as the queries read it.
type row struct {
	batch, name, fp, shard string
	verdict                suitereport.Verdict
	started                int64
	duration               int64
}

// Summaries summarises the selected cases, by name.
func (s *Store) Summaries(ctx context.Context, q Query) ([]Summary, error) {
	if q.Last <= 0 {
		q.Last = 10
	}
	rows, err := s.rows(ctx, q.Cases, false)
	if err != nil {
		return nil, err
	}
	byCase := map[string][]row{}
	for _, r := range rows {
		byCase[r.name] = append(byCase[r.name], r)
	}
	out := make([]Summary, 0, len(byCase))
	for name, rs := range byCase {
		out = append(out, summarise(name, rs, q.Last))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CaseName < out[j].CaseName })
	return out, nil
}

// summarise folds one case's attempts (oldest first) into its summary.
func summarise(name string, rs []row, last int) Summary {
	sum := Summary{CaseName: name, Attempts: len(rs), LastVerdicts: []suitereport.Verdict{}}
	type run struct {
		verdicts []suitereport.Verdict
		started  int64
		fp       string
	}
	var order []string
	runs := map[string]*run{}
	var durations []int64
	for _, r := range rs {
		key := r.batch + "\x00" + r.shard
		ru := runs[key]
		if ru == nil {
			ru = &run{started: r.started}
			runs[key] = ru
			order = append(order, key)
		}
		ru.verdicts = append(ru.verdicts, r.verdict)
		ru.fp = r.fp
		if r.verdict == suitereport.Passed || r.verdict == suitereport.Failed {
			durations = append(durations, r.duration)
		}
	}
	decided := 0
	for i := len(order) - 1; i >= 0; i-- {
		ru := runs[order[i]]
		v := suitereport.CaseVerdict(ru.verdicts)
		switch v {
		case suitereport.Passed:
			sum.Passed++
		case suitereport.Flaky:
			sum.Flaky++
		case suitereport.Failed:
			sum.Failed++
		case suitereport.Error:
			sum.Errors++
		default:
			continue // only cancelled attempts: not a run that happened
		}
		if v != suitereport.Error {
			decided++
		}
		sum.Runs++
		if len(sum.LastVerdicts) < last {
			sum.LastVerdicts = append(sum.LastVerdicts, v)
		}
		if sum.Fingerprint == "" {
			sum.Fingerprint = ru.fp
			sum.LastRunAt = time.UnixMilli(ru.started).UTC()
		}
	}
	if decided > 0 {
		sum.PassRate = float64(sum.Passed) / float64(decided)
		sum.FlakeRate = float64(sum.Flaky) / float64(decided)
	}
	if n := len(durations); n > medianWindow {
		durations = durations[n-medianWindow:]
	}
	sum.MedianDurationMs = median(durations)
	return sum
}

// median is the middle value (the mean of the two middle ones); 0 for none.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianDurations is the median duration of each named case that has
// product attempts (the queue starts the longest first); a case without
// history is absent from the map.
func (s *Store) MedianDurations(ctx context.Context, names []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := s.rows(ctx, names, true)
	if err != nil {
		return nil, err
	}
	byCase := map[string][]int64{}
	for _, r := range rows {
		byCase[r.name] = append(byCase[r.name], r.duration)
	}
	for name, ds := range byCase {
		if n := len(ds); n > medianWindow {
			ds = ds[n-medianWindow:]
		}
		out[name] = time.Duration(median(ds)) * time.Millisecond
	}
	return out, nil
}

// nameChunk bounds the names bound into one statement (SQLite's variable
// limit is far above it).
const nameChunk = 500

// rows reads the attempts of the named cases (nil: all), oldest first;
// product restricts them to passed and failed ones.
func (s *Store) rows(ctx context.Context, names []string, product bool) ([]row, error) {
	if s.empty {
		return nil, nil
	}
	var out []row
	read := func(where string, args []any) error {
		q := `SELECT batch_id, case_name, case_fingerprint, shard, verdict, started_at_ms, duration_ms FROM attempts`
		var conds []string
		if where != "" {
			conds = append(conds, where)
		}
		if product {
			conds = append(conds, `verdict IN ('passed', 'failed')`)
		}
		if len(conds) > 0 {
			q += " WHERE " + strings.Join(conds, " AND ")
		}
		rs, err := s.db.QueryContext(ctx, q+" ORDER BY id", args...)
		if err != nil {
			return classify(err, s.path, "cannot read the history")
		}
		defer rs.Close()
		for rs.Next() {
			var r row
			var v string
			if err := rs.Scan(&r.batch, &r.name, &r.fp, &r.shard, &v, &r.started, &r.duration); err != nil {
				return classify(err, s.path, "cannot read the history")
			}
			r.verdict = suitereport.Verdict(v)
			out = append(out, r)
		}
		if err := rs.Err(); err != nil {
			return classify(err, s.path, "cannot read the history")
		}
		return nil
	}
	if names == nil {
		return out, read("", nil)
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	for i := 0; i < len(names); i += nameChunk {
		chunk := names[i:min(i+nameChunk, len(names))]
		args := make([]any, len(chunk))
		for j, n := range chunk {
			args[j] = n
		}
		if err := read("case_name IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+")", args); err != nil {
			return nil, err
		}
	}
	// Chunks are each in id order; cases never span chunks, so each
	// case's rows stay oldest first.
	return out, nil
}
