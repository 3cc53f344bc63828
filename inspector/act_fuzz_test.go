package inspector

import (
	"testing"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/fault"
)

// FuzzParseActRequest: any body is accepted as a well-formed request or
// refused with a usage error; never a panic, and what is accepted is
// within the rules (testdata/fuzz/FuzzParseActRequest holds the corpus).
func FuzzParseActRequest(f *testing.F) {
	f.Add([]byte(`{"seq":1,"node":0,"action":"click"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseActRequest(b)
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("%q: %v is not a usage error", b, err)
			}
			return
		}
		if r.Seq <= 0 || r.Node < 0 || (r.Action != actInput && r.Text != "") || !utf8.ValidString(r.Text) || len(r.Text) > maxInputText {
			t.Fatalf("%q accepted as %+v", b, r)
		}
		switch r.Action {
		case actClick, actInput, actAssert:
		default:
			t.Fatalf("%q accepted with action %q", b, r.Action)
		}
	})
}
