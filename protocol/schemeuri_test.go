package protocol

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The host's encoding is Python's quote_plus, byte for byte (the reference
// CLI builds the same `am start` lines).
func TestMutationURI(t *testing.T) {
	t.Parallel()
	p := P("type", "case-import", "path", "/sdcard/a b+c.json", "q", "'&=%~*中", "empty", "")
	want := "solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fa+b%2Bc.json&q=%27%26%3D%25~%2A%E4%B8%AD&empty="
	if got := MutationURI("harness", p); got != want {
		t.Errorf("MutationURI = %s\nwant %s", got, want)
	}
	if got := MutationURI("record", nil); got != "solopi://startaction/record" {
		t.Errorf("no params: %s", got)
	}
	if got := QueryPath("harness", P("type", "status")); got != "/scheme/harness?type=status" {
		t.Errorf("QueryPath = %s", got)
	}
	if v, ok := p.Add("type", "second").Get("type"); !ok || v != "case-import" {
		t.Errorf("Get = %q %v, want the first value", v, ok)
	}
}

func TestParseMutationURI(t *testing.T) {
	t.Parallel()
	// Android Uri: first value wins, '+' is a space in values, a name
	// without '=' is "", a broken escape is U+FFFD, the fragment is cut.
	u := ParseMutationURI("solopi://startaction/harness?a=1&a=2&b=x+y&c&d=%zz#frag")
	if u.Scheme != "solopi" || u.Host != "startaction" || !reflect.DeepEqual(u.Segments, []string{"harness"}) {
		t.Errorf("uri: %+v", u)
	}
	wantP := map[string]string{"a": "1", "b": "x y", "c": "", "d": "\uFFFD"}
	if !reflect.DeepEqual(u.Params, wantP) || !reflect.DeepEqual(u.Names, []string{"a", "b", "c", "d"}) {
		t.Errorf("params: %q names %q", u.Params, u.Names)
	}
	// Android matches Uri.encode(name) against the raw query: a
	// non-canonically encoded name is unreachable.
	if nc := ParseMutationURI("solopi://startaction/harness?%74ype=health&type=status"); nc.Params["type"] != "status" || len(nc.Names) != 1 {
		t.Errorf("non-canonical name: %+v", nc)
	}
	for uri, action := range map[string]string{
		"solopi://startaction/":          "",
		"solopi://startaction/a/b":       "",
		"solopi://startaction/harness":   "harness",
		"solopi://startaction//harness/": "harness",
		"solopi://startaction/a%2Fb":     "a/b",
	} {
		if got, ok := ParseMutationURI(uri).Action(); got != action || ok != (action != "") {
			t.Errorf("%s: action %q %v, want %q", uri, got, ok, action)
		}
	}
}

// FuzzParseMutationURI: the parser never panics and always yields valid
// UTF-8 with Names and Params in sync; and whatever the host builds with
// MutationURI from any action and parameter list (kv: keys and values
// separated by NUL), the app reads back: the action, the first value of
// every name it can ask for, and every name in order (a path segment and a
// name decode '+' as itself, so quote_plus's space reads as '+' there). A name is reachable
// when Android's Uri.encode writes it as quote_plus did, which excludes
// only names with a space, one of !'()* or invalid UTF-8, as on the phone.
func FuzzParseMutationURI(f *testing.F) {
	f.Add("solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fx.json&replace=false&requestId=abc", "harness", "k\x00v w")
	f.Add("solopi://startaction/agent?a=1&a=2&b", "agent", "ownerToken\x00tok+en/=&%\x00ownerToken\x00second")
	f.Add("solopi://startaction//x/y/?%zz=%&&=", "", "\x00\x00a b\x00c")
	f.Add("solopi:startaction", "中文", "中文\x00值 1\x00%+&=\x00'!()*")
	f.Fuzz(func(t *testing.T, uri, action, kv string) {
		u := ParseMutationURI(uri)
		for _, n := range u.Names {
			if !utf8.ValidString(n) {
				t.Fatalf("invalid UTF-8 in name %q", n)
			}
		}
		for k, v := range u.Params {
			if !slices.Contains(u.Names, k) || !utf8.ValidString(v) {
				t.Fatalf("param %q=%q", k, v)
			}
		}
		for _, s := range u.Segments {
			if s == "" || !utf8.ValidString(s) {
				t.Fatalf("bad segment %q", s)
			}
		}

		fields := strings.Split(kv, "\x00")
		var p Params
		for i := 0; i+1 < len(fields); i += 2 {
			p = p.Add(fields[i], fields[i+1])
		}
		got := ParseMutationURI(MutationURI(action, p))
		if got.Scheme != "solopi" || got.Host != "startaction" {
			t.Fatalf("scheme/host %q %q", got.Scheme, got.Host)
		}
		// quote_plus writes a space as '+', which a path segment keeps.
		if a, ok := got.Action(); ok != (action != "") || a != asAppReads(action) {
			t.Fatalf("action %q: read back %q %v", action, a, ok)
		}
		wantParams, wantNames := map[string]string{}, []string{}
		for _, x := range p {
			name := asAppReads(x.Key)
			if !slices.Contains(wantNames, name) {
				wantNames = append(wantNames, name)
			}
			if _, seen := wantParams[x.Key]; !seen && utf8.ValidString(x.Key) && androidEncode(x.Key) == quotePlus(x.Key) {
				wantParams[x.Key] = strings.ToValidUTF8(x.Value, "\uFFFD")
			}
		}
		if !reflect.DeepEqual(got.Params, wantParams) {
			t.Fatalf("params %q: read back %q, want %q", p, got.Params, wantParams)
		}
		if len(p) > 0 && !reflect.DeepEqual(got.Names, wantNames) {
			t.Fatalf("names of %q: %q, want %q", p, got.Names, wantNames)
		}
	})
}

func asAppReads(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, " ", "+"), "\uFFFD")
}
