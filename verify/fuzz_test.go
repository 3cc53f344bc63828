package verify

import (
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// The parsers of outside input (requirements, plans) run here exactly as
// the commands run them, and must turn any bytes into a plan or a typed
// error: never a panic, never an untyped error, and a compiled plan must
// validate. The seeds are small on purpose: the fuzzer minimizes every
// input that finds new code, and a fixture-sized seed makes each
// minimization take most of a minute.

// fuzzRequirements are small requirements covering each construct.
var fuzzRequirements = []string{
	`{"id":"r","title":"t","targetAppPackage":"a.b","acceptanceCriteria":["x"],"scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],` +
		`"steps":[{"id":"c","action":{"type":"click","selector":{"resourceId":"a.b:id/k"}}}],` +
		`"checkpoints":[{"id":"k","afterStep":"c","oracle":{"type":"ui","selector":{"text":"1"},"operator":"matches","expected":"^1$"}}]}]}`,
	`{"requirement":{"id":"r","title":"t","acceptanceCriteria":[{"id":"A","text":"x"}]},"targetAppPackage":"a.b","parameters":{"v":"${w}","w":2},` +
		`"reusableFlows":[{"id":"f","defaults":{"d":"${v}"},"steps":[{"id":"in-${d}","action":{"type":"input","selector":{"id":1},"text":"v=${d}"}}]}],` +
		`"scenarios":[{"id":"s","acceptanceCriteria":["A"],"testData":{"t":true},"preconditions":[{"id":"p","oracle":{"type":"ui","selector":{"text":"x"},"field":"description","operator":"contains","expected":"x"}}],` +
		`"steps":[{"use":"f"},{"use":"f","bindings":{"d":3}},{"id":"e","type":"explore","goal":"g","allowedActions":["click","wait"],"budget":{"maxSteps":2}}],` +
		`"checkpoints":[{"id":"k","afterStep":"e","oracle":{"type":"ui","selector":{"text":"${t}"},"expected":"1"}}],` +
		`"cleanup":[{"id":"b","action":{"type":"back"}},{"id":"o","oracle":{"type":"ui","selector":{"text":"0"},"expected":"0"}}]},` +
		`{"id":"s2","dependsOn":["s"],"acceptanceCriteria":["A"],"steps":[{"id":"w","action":{"type":"wait","durationMs":100}},` +
		`{"id":"l","action":{"type":"scroll","direction":"up","distance":9}},{"id":"h","action":{"type":"longClick","selector":{"text":"z"}}}],` +
		`"checkpoints":[{"id":"k","afterStep":"h","oracle":{"type":"vision","assertion":"a"}}]}]}`,
	`{"id":"r","title":"t","targetAppPackage":"a.b","acceptanceCriteria":["x"],"scenarios":[{"id":"s","dependsOn":["s"],"acceptanceCriteria":["AC-001"],` +
		`"steps":[{"id":"h","action":{"type":"home"}}],"checkpoints":[{"id":"k","afterStep":"h","oracle":{"type":"ui","selector":{"text":"1"},"expected":"1"}}]}]}`,
}

// patch is the fuzzers' input: base selects one of bases (or none: the
// input is patch alone), whose bytes [off, off+cut) are replaced by patch.
// Fuzzing small edits of valid documents reaches the checks deep inside
// them, and keeps every input small for the fuzzer to minimize.
func patch(bases [][]byte, base uint8, off uint16, cut uint8, with []byte) []byte {
	i := int(base) % (len(bases) + 1)
	if i == len(bases) {
		return with
	}
	b := bases[i]
	start := min(int(off), len(b))
	end := min(start+int(cut), len(b))
	out := make([]byte, 0, len(b)-(end-start)+len(with))
	return append(append(append(out, b[:start]...), with...), b[end:]...)
}

func FuzzCompileRequirement(f *testing.F) {
	bases := make([][]byte, len(fuzzRequirements))
	for i, r := range fuzzRequirements {
		bases[i] = []byte(r)
		f.Add(uint8(i), uint16(0), uint8(0), []byte{})
	}
	f.Add(uint8(0), uint16(120), uint8(10), []byte(`"id":"c2"`))
	f.Add(uint8(1), uint16(400), uint8(3), []byte(`${`))
	f.Add(uint8(len(bases)), uint16(0), uint8(0), []byte(`{"id":"r","title":"t","acceptanceCriteria":["a"],"scenarios":[]}`))
	f.Fuzz(func(t *testing.T, base uint8, off uint16, cut uint8, with []byte) {
		compileRequirement(t, patch(bases, base, off, cut, with))
	})
}

// compileRequirement is verify-normalize, then verify-compile, then the
// plan as verify-validate and verify-run read it.
func compileRequirement(t *testing.T, data []byte) {
	doc, err := ParseRequirement(data)
	if err != nil {
		assertTyped(t, err)
		return
	}
	n, err := Normalize(doc)
	if err != nil {
		assertTyped(t, err)
		return
	}
	if _, err := canonjson.Marshal(n.Tree()); err != nil {
		t.Fatalf("a normalized requirement cannot be written: %v", err)
	}
	p, err := Compile(doc)
	if err != nil {
		assertTyped(t, err)
		return
	}
	b, err := MarshalPlan(p)
	if err != nil {
		t.Fatalf("a compiled plan cannot be written: %v", err)
	}
	if _, _, err := LoadPlan(b); err != nil {
		t.Fatalf("a compiled plan does not validate: %v", err)
	}
}

func FuzzLoadPlan(f *testing.F) {
	var bases [][]byte
	for _, r := range fuzzRequirements[:2] {
		doc, err := ParseRequirement([]byte(r))
		if err != nil {
			f.Fatal(err)
		}
		p, err := Compile(doc)
		if err != nil {
			f.Fatal(err)
		}
		b, err := canonjson.Marshal(p.Tree())
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, b)
		f.Add(uint8(len(bases)-1), uint16(0), uint8(0), []byte{})
	}
	f.Add(uint8(0), uint16(300), uint8(4), []byte(`true`))
	f.Add(uint8(1), uint16(2000), uint8(12), []byte(`"EXECUTE_SHELL"`))
	f.Add(uint8(len(bases)), uint16(0), uint8(0), []byte(`{"schemaVersion":"solopi.ai.verification-plan/v1"}`))
	f.Fuzz(func(t *testing.T, base uint8, off uint16, cut uint8, with []byte) {
		data := patch(bases, base, off, cut, with)
		loadPlan(t, data)
		// planFingerprint is self-attested: whoever edits a plan can sign
		// it again, and every check after the fingerprint must stand on
		// its own. Edited plans re-signed reach them.
		tree, err := canonjson.Decode(data)
		m, ok := tree.(map[string]any)
		if err != nil || !ok {
			return
		}
		delete(m, "planFingerprint")
		fp, err := canonjson.Fingerprint(m)
		if err != nil {
			return
		}
		m["planFingerprint"] = fp
		if b, err := canonjson.Marshal(m); err == nil {
			loadPlan(t, b)
		}
	})
}

// loadPlan is verify-validate on data: a typed error, or a plan that is
// written back as itself.
func loadPlan(t *testing.T, data []byte) {
	p, sum, err := LoadPlan(data)
	if err != nil {
		assertTyped(t, err)
		return
	}
	b, err := MarshalPlan(p)
	if err != nil {
		t.Fatalf("a valid plan cannot be written: %v", err)
	}
	if again, _, err := LoadPlan(b); err != nil || again.Fingerprint != sum.PlanFingerprint {
		t.Fatalf("a valid plan written back does not validate as itself: %v", err)
	}
}

func assertTyped(t *testing.T, err error) {
	t.Helper()
	if k := fault.KindOf(err); k != fault.Invalid {
		t.Fatalf("error of kind %v (want invalid, exit 3): %v", k, err)
	}
	if fault.CodeOf(err) == "" {
		t.Fatalf("error without a code: %v", err)
	}
}
