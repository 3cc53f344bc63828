package soloapp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/protocol"
)

// FuzzParseHTTPQuery checks the HTTP channel's query reading on arbitrary
// input (never panics, valid UTF-8 out) and on whatever the host encodes
// with protocol's Params (kv: keys and values separated by NUL): every
// trimmed key reads back its LAST value, as NanoHTTPD does.
func FuzzParseHTTPQuery(f *testing.F) {
	f.Add("type=case-import&path=%2Fsdcard%2Fx.json&replace=false&requestId=abc", "k\x00v w\x00k\x00second")
	f.Add("a=1&a=2&%20b%20=+x+&&c&d=%zz", " key \x00%+&=\x00中文\x00值 1\x00\x00")
	f.Fuzz(func(t *testing.T, raw, kv string) {
		for k, v := range parseHTTPQuery(raw) {
			if !utf8.ValidString(k) || !utf8.ValidString(v) || k != strings.TrimSpace(k) {
				t.Fatalf("%q: %q=%q", raw, k, v)
			}
		}
		fields := strings.Split(kv, "\x00")
		var p protocol.Params
		want := map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			p = p.Add(fields[i], fields[i+1])
			want[strings.TrimSpace(strings.ToValidUTF8(fields[i], "\uFFFD"))] = strings.ToValidUTF8(fields[i+1], "\uFFFD")
		}
		got := parseHTTPQuery(p.Encode())
		if len(got) != len(want) {
			t.Fatalf("%q: read %q, want %q", p, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%q: %q reads %q, want %q", p, k, got[k], v)
			}
		}
	})
}
