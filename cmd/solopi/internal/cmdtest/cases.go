package cmdtest

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// DemoCaseName is the name of the demo's counter case.
const DemoCaseName = "counter-smoke"

// DemoCase is the demo's counter case (cmd/solopi/demodata): reset, +1
// three times, assert 3 and Counting, a screenshot. It passes on a fresh
// simulated device.
func DemoCase(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "demodata", DemoCaseName+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WriteCase writes the demo case, changed by edit when given, to a file of
// its own and returns the path.
func WriteCase(t testing.TB, edit func(string) string) string {
	t.Helper()
	text := DemoCase(t)
	if edit != nil {
		text = edit(text)
	}
	return WriteFile(t, "case.json", []byte(text))
}

// FailingCase is the demo case whose ASSERT expects 4: it fails before its
// SCREENSHOT step.
func FailingCase(t testing.TB) string {
	t.Helper()
	return WriteCase(t, func(s string) string {
		return strings.Replace(s, `"assertInputContent": "3"`, `"assertInputContent": "4"`, 1)
	})
}

// SlowCase is the demo case with a SLEEP of ms (device time) first.
func SlowCase(t testing.TB, ms int) string {
	t.Helper()
	return WriteCase(t, func(s string) string {
		return strings.Replace(s, `"stepId": "reset",`, `"stepId": "wait",
"operationMethod": {"actionEnum": "SLEEP", "operationParam": {"text": "`+strconv.Itoa(ms)+`"}, "encrypt": false}},
{"stepId": "reset",`, 1)
	})
}

// Renamed is the demo case under another name.
func Renamed(name string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, `"caseName": "`+DemoCaseName+`"`, `"caseName": "`+name+`"`, 1)
	}
}

// WriteFile writes data to name in a fresh temporary directory.
func WriteFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
