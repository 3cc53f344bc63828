package onphone

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// timedPhone measures the wall time spent inside the ports: the time the
// host waits on the phone (device work, adb and HTTP round trips, polls).
type timedPhone struct {
	p  *Phone
	mu sync.Mutex
	in time.Duration
}

func (t *timedPhone) since(start time.Time) {
	t.mu.Lock()
	t.in += time.Since(start)
	t.mu.Unlock()
}

func (t *timedPhone) ImportCase(ctx context.Context, c *verify.Case, f string) (execution.ImportResult, error) {
	defer t.since(time.Now())
	return t.p.ImportCase(ctx, c, f)
}

func (t *timedPhone) RunCase(ctx context.Context, r execution.RunRequest) (execution.RunResult, error) {
	defer t.since(time.Now())
	return t.p.RunCase(ctx, r)
}

func (t *timedPhone) LaunchTarget(ctx context.Context, pkg string) error {
	defer t.since(time.Now())
	return t.p.LaunchTarget(ctx, pkg)
}

func (t *timedPhone) Start(ctx context.Context, r execution.StartRequest) (*execution.StartResult, error) {
	defer t.since(time.Now())
	return t.p.Start(ctx, r)
}

func (t *timedPhone) Act(ctx context.Context, r execution.ActRequest) (*execution.ActResult, error) {
	defer t.since(time.Now())
	return t.p.Act(ctx, r)
}

func (t *timedPhone) Screenshot(ctx context.Context, ref execution.SessionRef, obs map[string]any, dest string) error {
	defer t.since(time.Now())
	return t.p.Screenshot(ctx, ref, obs, dest)
}

func (t *timedPhone) Timeline(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	defer t.since(time.Now())
	return t.p.Timeline(ctx, ref)
}

func (t *timedPhone) End(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	defer t.since(time.Now())
	return t.p.End(ctx, ref)
}

func (t *timedPhone) Cancel(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	defer t.since(time.Now())
	return t.p.Cancel(ctx, ref)
}

// BenchmarkVerifyRunMatrix runs the outcome matrix with solopi-ai's
// decisions on the simulator (time scale 20) and splits each run's wall
// time into the time spent inside the ports (waiting on the phone) and the
// rest: the host's own work per segment (plan checks, evidence files and
// digests, redaction, events, the judge, the report).
func BenchmarkVerifyRunMatrix(b *testing.B) {
	_, phone := newPhone(b, 20)
	tp := &timedPhone{p: phone}
	root := b.TempDir()
	var wall time.Duration
	segments := 0
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		p := prepareMatrix(b, filepath.Join(root, strconv.Itoa(i)))
		s, err := p.Run(context.Background(), execution.Engine{Phones: []execution.Ports{{Runner: tp, Agent: tp}}})
		wall += time.Since(start)
		if err != nil || s.OutcomeFingerprint != outcomeMatrixDecisions {
			b.Fatalf("run %+v %v", s, err)
		}
		segments += ranSegments(b, s.Report)
	}
	host := wall - tp.in
	b.ReportMetric(float64(host.Microseconds())/1000/float64(segments), "host-ms/segment")
	b.ReportMetric(float64(tp.in.Microseconds())/1000/float64(segments), "device-ms/segment")
}

// ranSegments counts the segments of a report that ran (have evidence).
func ranSegments(b *testing.B, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var r verify.Report
	if err := json.Unmarshal(data, &r); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, s := range r.Scenarios {
		for _, seg := range s.Segments {
			if len(seg.EvidenceRefs) > 0 {
				n++
			}
		}
	}
	return n
}
