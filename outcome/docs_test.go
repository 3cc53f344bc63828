package outcome

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// TestDocsExitTables holds docs/error-codes.md to ExitFor and VerdictExit:
// every fault kind and verdict the page lists maps to the exit it states,
// and every kind is listed.
func TestDocsExitTables(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/error-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	kinds := map[string]fault.Kind{}
	for k := fault.Internal; k <= fault.Interrupted; k++ {
		kinds[strings.ToUpper(k.String()[:1])+k.String()[1:]] = k
	}
	// | exit | meaning | `Kind`, `Kind` |
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| [^|]+ \\| ((?:`\\w+`(?:, )?)+) \\|$")
	seen := map[fault.Kind]bool{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		exit, _ := strconv.Atoi(m[1])
		for _, name := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(m[2], -1) {
			k, ok := kinds[name[1]]
			if !ok {
				t.Errorf("the page names fault kind %q, which does not exist", name[1])
				continue
			}
			seen[k] = true
			if got := ExitFor(k); got != exit {
				t.Errorf("the page says %s exits %d; ExitFor gives %d", name[1], exit, got)
			}
		}
	}
	for name, k := range kinds {
		if !seen[k] {
			t.Errorf("fault kind %s is missing from the exit table", name)
		}
	}
	// | `verdict` | exit |
	_, table, _ := strings.Cut(doc, "| verdict | exit |\n|---|---|\n")
	table, _, _ = strings.Cut(table, "\n\n")
	verdicts := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| (\\d+) \\|$").FindAllStringSubmatch(table, -1)
	if len(verdicts) < 4 {
		t.Fatalf("found %d verdict rows on the page", len(verdicts))
	}
	for _, m := range verdicts {
		if want, _ := strconv.Atoi(m[2]); VerdictExit(m[1]) != want {
			t.Errorf("the page says verdict %s exits %d; VerdictExit gives %d", m[1], want, VerdictExit(m[1]))
		}
	}
	if VerdictExit("running") != 4 {
		t.Errorf("an unfinished verdict exits %d, the page says 4", VerdictExit("running"))
	}
}
