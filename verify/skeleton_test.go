package verify

import (
	"maps"
	"testing"

	"github.com/solopi-dev/solopi/casefile"
)

// A compiled case drafted back into a requirement compiles to the same
// steps on the phone: the same actions, parameters and (a subset of the)
// node selectors, each ASSERT a checkpoint.
func TestSkeletonOfACompiledCaseCompilesToItsSteps(t *testing.T) {
	t.Parallel()
	compared := 0
	for _, fixture := range []string{"counter-success", "counter-outcome-matrix"} {
		plan := compileFixture(t, fixture)
		for _, c := range plan.Cases() {
			b, err := MarshalCase(c)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := casefile.Load(b)
			if err != nil {
				t.Fatal(err)
			}
			sk, err := SkeletonFromCase(cf)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if len(sk.Skipped) > 0 {
				t.Errorf("%s: skipped %+v", c.Name, sk.Skipped)
			}
			if !sk.Complete {
				// A precondition or cleanup case may hold no action.
				continue
			}
			doc := parseSkeleton(t, sk)
			again, err := Compile(doc)
			if err != nil {
				t.Fatalf("%s: the skeleton does not compile: %v\n%v", c.Name, err, sk.Requirement)
			}
			var got []CaseStep
			for _, ac := range again.Cases() {
				got = append(got, ac.Steps...)
			}
			want := c.Steps
			// Leading ASSERTs became preconditions, compiled into a case of their own.
			if len(got) != len(want) {
				t.Fatalf("%s: %d steps, want %d", c.Name, len(got), len(want))
			}
			compared++
			for i := range want {
				g, w := got[i], want[i]
				if g.ActionEnum != w.ActionEnum || !maps.Equal(g.Params, w.Params) {
					t.Errorf("%s step %d: %s %v, want %s %v", c.Name, i, g.ActionEnum, g.Params, w.ActionEnum, w.Params)
				}
				for k, v := range g.Node {
					if w.Node[k] != v {
						t.Errorf("%s step %d: selector %s=%v is not the recorded node's %v", c.Name, i, k, v, w.Node[k])
					}
				}
			}
		}
	}
	if compared < 3 {
		t.Fatalf("only %d compiled cases drafted back and compared", compared)
	}
}

// A case without an assertion drafts an incomplete requirement whose
// refusal says where the checkpoint goes; steps with no typed action are
// listed with their reason.
func TestSkeletonSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	cf, err := casefile.Load([]byte(`{"caseName":"no-assert","targetAppPackage":"com.example.counter","operationLog":{"steps":[
	 {"operationMethod":{"actionEnum":"CLICK","operationParam":{},"encrypt":false},"operationNode":{"resourceId":"com.example.counter:id/add"}},
	 {"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"60000"},"encrypt":false},"operationNode":null}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	sk, err := SkeletonFromCase(cf)
	if err != nil {
		t.Fatal(err)
	}
	if sk.Complete || sk.Steps != 1 || len(sk.Skipped) != 1 || sk.Skipped[0].Index != 1 {
		t.Fatalf("skeleton %+v", sk)
	}
	doc := parseSkeleton(t, sk)
	if _, err := Compile(doc); err == nil {
		t.Fatal("a requirement without a checkpoint compiled")
	}
}

func parseSkeleton(t *testing.T, sk *skeleton) *Document {
	t.Helper()
	b, err := sk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseRequirement(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
