package verify

import (
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// A requirement or plan that is not UTF-8, or escapes a lone surrogate, is
// refused with invalid_utf8 (it used to compile with U+FFFD in its place);
// NaN and the infinities are invalid_json. Surrogate pairs and escaped
// backslashes are text like any other.
func TestRequirementEncoding(t *testing.T) {
	t.Parallel()
	base := string(readFixture(t, "counter-success"))
	const title = `"title": "SoloPiTddDemo 计数器确定性增加"`
	if !strings.Contains(base, title) {
		t.Fatal("the fixture's title moved")
	}
	with := func(v string) []byte { return []byte(strings.Replace(base, title, `"title": `+v, 1)) }
	cases := []struct {
		name string
		doc  []byte
		code string
	}{
		{"a Latin-1 byte", with("\"caf\xe9\""), fault.CodeInvalidUTF8},
		{"a truncated sequence", with("\"\xe4\xb8\""), fault.CodeInvalidUTF8},
		{"an escaped high surrogate alone", with(`"a\ud800"`), fault.CodeInvalidUTF8},
		{"an escaped low surrogate alone", with(`"\udc00b"`), fault.CodeInvalidUTF8},
		{"a high surrogate before another character's escape", with(`"\ud800\u0041"`), fault.CodeInvalidUTF8},
		{"two high surrogates", with(`"\ud800\ud800"`), fault.CodeInvalidUTF8},
		{"a lone surrogate in a key", []byte(strings.Replace(base, `"title":`, `"t\uDBFF": 1, "title":`, 1)), fault.CodeInvalidUTF8},
		{"NaN", with(`NaN`), fault.CodeInvalidJSON},
		{"Infinity", with(`Infinity`), fault.CodeInvalidJSON},
		{"-Infinity", with(`-Infinity`), fault.CodeInvalidJSON},
		{"a surrogate pair", with(`"smile \ud83d\ude00"`), ""},
		{"an escaped backslash before u", with(`"\\ud800"`), ""},
		{"U+FFFD written as itself", with(`"\ufffd �"`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRequirement(c.doc)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if fault.CodeOf(err) != c.code || fault.KindOf(err) != fault.Invalid {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if c.code == fault.CodeInvalidUTF8 {
				if off, _ := fault.From(err).Details["offset"].(int); off <= 0 || off >= len(c.doc) {
					t.Errorf("offset %v", fault.From(err).Details["offset"])
				}
			}
		})
	}
}

// A plan is refused the same way, even re-fingerprinted over what the
// decoder made of it.
func TestPlanEncoding(t *testing.T) {
	t.Parallel()
	b, err := MarshalPlan(compileFixture(t, "counter-success"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.ReplaceAll(string(b), "计数器确定性增加", `\udfff`)
	tree, err := ParseRequirement([]byte(strings.ReplaceAll(string(b), "计数器确定性增加", `\ufffd`)))
	if err != nil {
		t.Fatal(err)
	}
	m := tree.Tree.(map[string]any)
	delete(m, "planFingerprint")
	bad = strings.Replace(bad, compileFixture(t, "counter-success").Fingerprint, fingerprint(m), 1)
	if _, _, err := LoadPlan([]byte(bad)); fault.CodeOf(err) != fault.CodeInvalidUTF8 {
		t.Fatalf("a plan with a lone surrogate: %v", err)
	}
	if _, _, err := LoadPlan(append(b[:len(b):len(b)], "\xff"...)); fault.CodeOf(err) != fault.CodeInvalidUTF8 {
		t.Fatalf("a plan with a byte that is not UTF-8: %v", err)
	}
}
