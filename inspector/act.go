package inspector

import (
	"unicode/utf8"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// actRequest is the page's POST /act body: an action on node Node of
// snapshot Seq.
type actRequest struct {
	Seq    int    `json:"seq"`
	Node   int    `json:"node"`
	Action string `json:"action"`
	Text   string `json:"text,omitempty"`
}

// maxInputText bounds the text of an input step.
const maxInputText = 4096

// parseActRequest reads the body strictly: an unknown key, a missing or
// unknown action, a negative index or text where it has no place is
// refused.
func parseActRequest(b []byte) (actRequest, error) {
	var r actRequest
	if len(b) > maxActBody {
		return r, fault.Usage(fault.CodeInvalidRequest, "the request body is too large")
	}
	if err := canonjson.UnmarshalStrict(b, &r); err != nil {
		return r, fault.Usage(fault.CodeInvalidRequest, "the request body is not one JSON object of seq, node, action and text")
	}
	switch {
	case r.Seq <= 0 || r.Node < 0:
		return r, fault.Usage(fault.CodeInvalidRequest, "seq must be positive and node not negative")
	case r.Action != actClick && r.Action != actInput && r.Action != actAssert:
		return r, fault.Usage(fault.CodeInvalidAction, "action must be click, input or assert").With("allowed", []string{actClick, actInput, actAssert})
	case r.Action != actInput && r.Text != "":
		return r, fault.Usage(fault.CodeInvalidRequest, "only an input takes text")
	case len(r.Text) > maxInputText || !utf8.ValidString(r.Text):
		return r, fault.Usage(fault.CodeInvalidRequest, "the text is not valid UTF-8 of at most 4096 bytes")
	}
	return r, nil
}
