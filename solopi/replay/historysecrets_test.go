package replay

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/redact"
)

// A record whose case's secrets are unknown prints its device texts
// withheld, the marks in place of the content, other fields as they came.
func TestWithholdPrintsMarks(t *testing.T) {
	t.Parallel()
	rec := map[string]any{"caseName": "gone", "exceptionMessage": "typed hunter22",
		"info":    map[string]any{"exceptionMessage": "typed hunter22", "caseName": "gone"},
		"log":     map[string]any{"text": "typed hunter22", "bytes": 14},
		"steps":   map[string]any{"content": []any{"hunter22"}, "contentAvailable": true, "name": "steps.json"},
		"actions": map[string]any{"name": "actions.json", "contentAvailable": false, "reason": "content_limit"}}
	withhold(rec, map[string]bool{})
	got, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	m := `"` + redact.Marker + `"`
	want := `{"actions":{"contentAvailable":false,"name":"actions.json","reason":"content_limit"},"caseName":"gone","exceptionMessage":` + m +
		`,"info":{"caseName":"gone","exceptionMessage":` + m + `},"log":{"bytes":14,"redacted":"secrets_unknown","text":` + m +
		`},"steps":{"contentAvailable":false,"name":"steps.json","omitted":true,"reason":"secrets_unknown"}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
