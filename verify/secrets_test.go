package verify

import (
	"slices"
	"testing"
)

// The values a requirement marks secret by name, resolved, wherever a
// scenario can bind them; and the compiled parameters that hold them.
func TestPlanSecrets(t *testing.T) {
	t.Parallel()
	doc, err := ParseRequirement([]byte(`{"id":"r","title":"t","targetAppPackage":"com.example.login","acceptanceCriteria":["a"],
	 "parameters":{"prefix":"pw","apiKey":1234.5,"name":"demo","tokens":{"a":["nested-token"]}},
	 "scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],"testData":{"client_secret":"cs-value","password":"${prefix}-1234"},"bindings":{"Auth-Token":true},
	  "steps":[{"id":"in","action":{"type":"input","selector":{"resourceId":"f"},"text":"${name}:${password}"}}],
	  "checkpoints":[{"id":"c","afterStep":"in","oracle":{"type":"ui","selector":{"resourceId":"f"},"expected":"demo"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1234.5", "cs-value", "nested-token", "pw-1234"}
	if got := p.Secrets(); !slices.Equal(got, want) {
		t.Errorf("secrets %q, want %q", got, want)
	}
	refs := p.Scenarios[0].Segments[0].Case.SecretParams(p.Secrets())
	if len(refs) != 1 || refs[0].StepID != "in" || refs[0].Key != "text" {
		t.Errorf("secret parameters %+v", refs)
	}
}
