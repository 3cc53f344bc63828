package verify

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

type requirementCase struct {
	Name              string          `json:"name"`
	Requirement       json.RawMessage `json:"requirement"`
	Code              string          `json:"code"`
	PlanFingerprint   string          `json:"planFingerprint"`
	SourceFingerprint string          `json:"sourceFingerprint"`
}

// Every variation compiles to solopi-ai's fingerprints or fails with its
// error code.
func TestRequirementCasesMatchSolopiAI(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/requirement-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []requirementCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 50 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			doc, err := ParseRequirement(c.Requirement)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(doc)
			if c.Code != "" {
				if fault.CodeOf(err) != c.Code || fault.KindOf(err) != fault.Invalid {
					t.Errorf("error %v, want %s (exit 3)", err, c.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if p.Fingerprint != c.PlanFingerprint || p.SourceFingerprint != c.SourceFingerprint {
				t.Errorf("fingerprints %s %s, want %s %s", p.Fingerprint, p.SourceFingerprint, c.PlanFingerprint, c.SourceFingerprint)
			}
		})
	}
}
