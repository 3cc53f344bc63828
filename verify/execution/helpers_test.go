package execution

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/verify"
)

// runPlan is verify-run without the command: prepare, then run on e.
func runPlan(ctx context.Context, o RunOptions, e Engine) (*RunSummary, error) {
	p, err := Prepare(o)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, e)
}

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
	return compileRequirement(t, readFixture(t, name))
}

func compileRequirement(t testing.TB, requirement []byte) *verify.Plan {
	t.Helper()
	doc, err := verify.ParseRequirement(requirement)
	if err != nil {
		t.Fatal(err)
	}
	p, err := verify.Compile(doc)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

func counterPage(value string) map[string]any {
	return map[string]any{"observationId": "o", "page": map[string]any{"className": "F", "children": []any{
		map[string]any{"nodeId": "n1", "className": "android.widget.TextView", "resourceId": "com.example.counter:id/counter_value", "packageName": "com.example.counter", "text": value},
	}}}
}

var judgeEvidence = []verify.Evidence{{Type: "replay_result", Path: "/x", SHA256: strings.Repeat("a", 64), Size: 1}}

// eachFile calls check with every file under root and its bytes; root
// must hold some.
func eachFile(t *testing.T, root string, check func(path string, b []byte)) {
	t.Helper()
	n := 0
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		check(path, b)
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk %s: %d files, %v", root, n, err)
	}
}
