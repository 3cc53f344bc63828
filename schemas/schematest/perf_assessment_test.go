package schematest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// perf-analyze's object holds two assessments: perf-analyze's own
// (performed false, as solopi-ai prints it) and the budgets' that run
// --perf --perf-budget writes into perf/analysis.json (performed true,
// with its verdict and budgets). The simulator's recorded analysis of
// report's fixture is valid; either half missing its fields is not.
func TestPerfAnalysisWithBudgets(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "run-perf", "perf", "analysis.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet()
	if err := s.ValidateBytes("perf-analyze", b); err != nil {
		t.Fatalf("run --perf-budget's analysis.json: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	a := doc["assessment"].(map[string]any)
	for name, edit := range map[string]func(map[string]any){
		"performed without budgets":   func(m map[string]any) { delete(m, "budgets") },
		"performed without a verdict": func(m map[string]any) { delete(m, "verdict") },
		"not performed with budgets":  func(m map[string]any) { m["performed"] = false },
		"an unknown verdict":          func(m map[string]any) { m["verdict"] = "green" },
	} {
		m := map[string]any{}
		for k, v := range a {
			m[k] = v
		}
		edit(m)
		doc["assessment"] = m
		bad, _ := json.Marshal(doc)
		if err := s.ValidateBytes("perf-analyze", bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
