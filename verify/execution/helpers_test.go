package execution

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/verify"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "solopi-ai", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compileFixture(t testing.TB, name string) *verify.Plan {
	t.Helper()
	doc, err := verify.ParseRequirement(readFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := verify.Compile(doc)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return p
}

func counterPage(value string) map[string]any {
	return map[string]any{"observationId": "o", "page": map[string]any{"className": "F", "children": []any{
		map[string]any{"nodeId": "n1", "className": "android.widget.TextView", "resourceId": "com.example.counter:id/counter_value", "packageName": "com.example.counter", "text": value},
	}}}
}

var judgeEvidence = []verify.Evidence{{Type: "replay_result", Path: "/x", SHA256: strings.Repeat("a", 64), Size: 1}}
