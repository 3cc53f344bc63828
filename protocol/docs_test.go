package protocol

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocsShowEveryTable holds docs/state-machines.md to the tables: each
// machine's summary line and edge table appear there exactly as rendered
// here, so the page cannot drift from the code it documents.
func TestDocsShowEveryTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/state-machines.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	machines := []struct {
		fn string
		m  *Machine
	}{
		{"Replay", Replay()}, {"AdbConnect", AdbConnect()}, {"CaseImport", CaseImport()},
		{"AgentSession", AgentSession()}, {"AgentReceipt", AgentReceipt()}, {"Record", Record()},
		{"ScreenRecord", ScreenRecord()}, {"Scan", Scan()}, {"VideoAnalysis", VideoAnalysis()},
		{"Performance", Performance()}, {"PerformanceDisplay", PerformanceDisplay()},
		{"Stress", Stress()}, {"PluginMutation", PluginMutation()}, {"HistoryDelete", HistoryDelete()},
		{"ManagedTask", ManagedTask()}, {"ManagedShard", ManagedShard()}, {"ManagedAttempt", ManagedAttempt()},
	}
	if len(machines)+1 != len(all()) { // CaseDelete shares CaseImport's table, as the page says
		t.Fatalf("%d machines here, %d in All(): add the new one", len(machines)+1, len(all()))
	}
	if got, want := fmt.Sprint(CaseDelete().Transitions), fmt.Sprint(CaseImport().Transitions); got != want {
		t.Errorf("case-delete no longer shares case-import's table")
	}
	for _, c := range machines {
		if s := summaryLine(c.fn, c.m); !strings.Contains(doc, s+"\n") {
			t.Errorf("docs/state-machines.md lacks the line\n%s", s)
		}
		if tbl := edgeTable(c.m); !strings.Contains(doc, tbl) {
			t.Errorf("docs/state-machines.md lacks %s's table\n%s", c.fn, tbl)
		}
	}
}

func summaryLine(fn string, m *Machine) string {
	return fmt.Sprintf("`protocol.%s()` · initial `%s` · live (`active`) %s · terminal %s",
		fn, m.Initial, codeList(m.Live), codeList(m.Terminal))
}

// edgeTable renders the edges in table order; consecutive edges with the
// same event and target share one row listing their sources.
func edgeTable(m *Machine) string {
	var b strings.Builder
	b.WriteString("| event | from | to |\n|---|---|---|\n")
	ts := m.Transitions
	for i := 0; i < len(ts); {
		from := []State{ts[i].From}
		j := i + 1
		for ; j < len(ts) && ts[j].Event == ts[i].Event && ts[j].To == ts[i].To; j++ {
			from = append(from, ts[j].From)
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", ts[i].Event, codeList(from), ts[i].To)
		i = j
	}
	return b.String()
}

func codeList(states []State) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = "`" + string(s) + "`"
	}
	return strings.Join(parts, ", ")
}
