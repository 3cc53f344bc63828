package execution

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

type typedSession struct {
	SessionID string  `json:"sessionId"`
	Owner     string  `json:"ownerToken"`
	Note      string  `json:"note"`
	Score     float64 `json:"score"`
}

type typedReceipt struct {
	Status  string        `json:"status"`
	Session *typedSession `json:"session"`
	Steps   []uint16      `json:"steps"`
}

// Whatever a port, a provider or an error hands the engine becomes a tree
// canonical JSON writes, with owner tokens gone even inside typed values:
// the failure of issue 21 was a typed session in an error's details.
func TestEveryValueBecomesEvidence(t *testing.T) {
	t.Parallel()
	const token = "verification-0123456789abcdef0123456789abcdef"
	a := &artifactDir{red: redact.New(token)}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	values := map[string]any{
		"typed":       typedReceipt{Status: "rejected", Session: &typedSession{SessionID: "s-1", Owner: token, Note: "held by " + token}, Steps: []uint16{1, 2}},
		"error":       fault.New(fault.Failed, "rejected", "no").With("session", typedSession{SessionID: "s-2"}).Fields(),
		"plainError":  errors.New("boom"),
		"nan":         math.NaN(),
		"inf":         []any{math.Inf(1), math.Inf(-1), float32(1.5)},
		"badUTF8":     "a\xffb",
		"bad\xfekey":  true,
		"number":      json.Number("not a number"),
		"ints":        []any{int8(-1), uint64(math.MaxUint64), uintptr(7)},
		"channel":     make(chan int),
		"function":    func() {},
		"cycle":       cyclic,
		"secret":      redact.NewSecret(token),
		"typedMap":    map[string][]string{"k": {"v"}},
		"nilPointer":  (*typedSession)(nil),
		"nilMap":      map[string]any(nil),
		"deepTyped":   []any{map[string]any{"s": typedSession{Score: math.NaN()}}},
		"bytes":       []byte("raw"),
		"tokenInText": "owner " + token,
	}
	tree := a.sanitize(values)
	b, err := canonjson.MarshalIndent(tree, "  ")
	if err != nil {
		t.Fatalf("evidence canonical JSON refuses: %v", err)
	}
	if strings.Contains(string(b), token) {
		t.Fatalf("an owner token reached the evidence:\n%s", b)
	}
	for _, want := range []string{`"sessionId": "s-1"`, `"sessionId": "s-2"`, `"NaN"`, `"Infinity"`, `"-Infinity"`, `1.5`, "\"a\uFFFDb\"",
		"\"bad\uFFFDkey\"", `18446744073709551615`, `[not encodable: chan int`, `[not encodable: func()`, `nested more than 256 levels`,
		`"[redacted]"`, `"steps": [`, `"status": "rejected"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("evidence lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), `"ownerToken"`) {
		t.Errorf("an ownerToken key was kept:\n%s", b)
	}
}
