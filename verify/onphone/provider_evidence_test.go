package onphone

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// oddProvider decides like a model whose receipt carries what JSON cannot
// hold: NaN, a typed value, a channel.
type oddProvider struct{ calls int }

type modelStats struct {
	Latency float64 `json:"latency"`
	Tokens  []uint8 `json:"tokens"`
}

func (p *oddProvider) Decide(ctx context.Context, in execution.DecisionContext) (map[string]any, error) {
	p.calls++
	receipt := map[string]any{"confidence": math.NaN(), "stats": modelStats{Latency: math.Inf(1)}, "stream": make(chan int), "note": "bad \xff byte"}
	if p.calls == 1 {
		return map[string]any{"type": "act", "modelReceipt": receipt,
			"action": map[string]any{"type": "click", "selector": map[string]any{"resourceId": "com.example.counter:id/increment_button"}}}, nil
	}
	return map[string]any{"type": "done", "modelReceipt": receipt}, nil
}

// A provider's output is evidence whatever it holds: the exploration is
// judged (the counter reached 1) and every file is written.
func TestProviderOutputIsAlwaysEvidence(t *testing.T) {
	t.Parallel()
	_, phone := newPhone(t, 20)
	prov := &oddProvider{}
	e := execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: phone}}, Provider: prov}
	out, err := e.Run(context.Background(), compile(t, exploreRequirement(`{}`)), filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatalf("no verdict: %v", err)
	}
	if out.Report.Status != verify.Passed || prov.calls != 2 {
		t.Fatalf("status %s after %d decisions", out.Report.Status, prov.calls)
	}
	var transcript []byte
	err = filepath.Walk(filepath.Dir(out.ReportPath), func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "agent-transcript.json" {
			transcript, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"confidence": "NaN"`, `"latency": "Infinity"`, `[not encodable: chan int`, "bad \uFFFD byte"} {
		if !strings.Contains(string(transcript), want) {
			t.Errorf("the transcript lacks %s", want)
		}
	}
}
