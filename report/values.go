package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// obj is a JSON object decoded with json.Number. Readers use canonjson's
// typed accessors, so that a missing or mistyped field is an empty value,
// never a panic: evidence written by older or newer versions still renders.
type obj = canonjson.Object

// compact prints any JSON value on one line with sorted keys, for the
// free-form details a report shows as text.
func compact(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// keyValues lists an object's fields as "key: value" in key order,
// skipping the ones named in skip.
func keyValues(m obj, skip ...string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !contains(skip, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := compact(m[k]); v != "" && v != "[]" && v != "{}" && v != "null" {
			out = append(out, k+": "+v)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
