package inspector

import (
	"bytes"
	"encoding/json"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// The view: the page's screen is the phone's (a PNG of its size) with the
// counter's nodes; a node's suggestion is a selector that picks it alone,
// case steps casefile parses and a checkpoint on its text.
func TestServeShowsThePhone(t *testing.T) {
	t.Parallel()
	p := newPhone(t)
	r := serve(t, p, "")
	v := r.snapshotAfter(t, 0)
	if v.Width <= 0 || v.Height <= 0 || len(v.SHA256) != 64 || v.Recording {
		t.Fatalf("snapshot %+v", v)
	}
	resp, err := http.Get(r.base + v.Screen + "?token=" + r.token)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(resp.Body)
	resp.Body.Close()
	if err != nil || cfg.Width != v.Width || cfg.Height != v.Height || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("screen %v %+v %s", err, cfg, resp.Header.Get("Content-Type"))
	}
	inc := nodeWhere(t, v.Nodes, ":id/increment_button")
	var sg Suggestion
	if code := r.get(t, "/suggest?seq="+itoa(v.Seq)+"&node="+itoa(inc)+"&text=hello", &sg); code != 200 {
		t.Fatalf("suggest: %d", code)
	}
	if sg.Selector.ResourceID != counterPkg+":id/increment_button" || sg.Selector.Text != "" || !sg.Unique {
		t.Fatalf("selector %+v", sg.Selector)
	}
	for name, raw := range map[string]json.RawMessage{"click": sg.Steps.Click, "input": sg.Steps.Input, "assert": sg.Steps.Assert} {
		st, err := casefile.ParseStep(raw)
		if err != nil {
			t.Fatalf("%s step does not parse: %v: %s", name, err, raw)
		}
		if st.Node == nil || st.Node.ResourceID == nil || *st.Node.ResourceID != counterPkg+":id/increment_button" {
			t.Fatalf("%s step node: %s", name, raw)
		}
	}
	if !strings.Contains(string(sg.Steps.Input), `"text":"hello"`) || !strings.Contains(string(sg.Steps.Assert), `"assertInputContent":"+1"`) {
		t.Fatalf("steps %s %s", sg.Steps.Input, sg.Steps.Assert)
	}
	// An action without --record-to is refused; nothing reaches the phone.
	var e pageError
	if code := r.do(t, "POST", "/act", `{"seq":`+itoa(v.Seq)+`,"node":`+itoa(inc)+`,"action":"click"}`, &e); code != 409 || e.ErrorCode != "not_recording" {
		t.Fatalf("act without recording: %d %+v", code, e)
	}
	// A screen that is gone and a node that is not there.
	if code := r.get(t, "/suggest?seq=999&node=0", &e); code != 410 {
		t.Fatalf("stale seq: %d", code)
	}
	if code := r.get(t, "/suggest?seq="+itoa(v.Seq)+"&node=9999", &e); code != 400 {
		t.Fatalf("missing node: %d", code)
	}
	res := r.stop()
	validateResult(t, res)
	if !res.Success || res.Snapshots < 1 || res.Recording != nil || res.URL != r.url {
		t.Fatalf("result %+v", res)
	}
}

// Recording: three clicks and an assert through the page's API act on the
// phone (the counter reads 2) and leave a whole case after every step;
// the file replays and passes.
func TestRecordWritesACaseThatReplays(t *testing.T) {
	t.Parallel()
	p := newPhone(t)
	file := filepath.Join(t.TempDir(), "counter-twice.json")
	r := serve(t, p, file)
	v := r.snapshotAfter(t, 0)
	if !v.Recording {
		t.Fatal("not recording")
	}
	for i, id := range []string{":id/reset_button", ":id/increment_button", ":id/increment_button"} {
		var rec recorded
		body := `{"seq":` + itoa(v.Seq) + `,"node":` + itoa(nodeWhere(t, v.Nodes, id)) + `,"action":"click"}`
		var raw json.RawMessage
		code := r.do(t, "POST", "/act", body, &raw)
		_ = json.Unmarshal(raw, &rec)
		if code != 200 || rec.Index != i || rec.Action != "click" {
			t.Fatalf("act %d: %d %s", i, code, raw)
		}
		c := loadCase(t, file)
		if len(c.Steps) != i+1 {
			t.Fatalf("after step %d the file has %d steps", i, len(c.Steps))
		}
		// A reset of a counter at 0 changes nothing on the screen.
		if i > 0 {
			v = r.counterReads(t, v, itoa(i))
		}
	}
	val := nodeWhere(t, v.Nodes, ":id/counter_value")
	var rec recorded
	if code := r.do(t, "POST", "/act", `{"seq":`+itoa(v.Seq)+`,"node":`+itoa(val)+`,"action":"assert"}`, &rec); code != 200 || rec.Text != "2" {
		t.Fatalf("assert: %d %+v", code, rec)
	}
	res := r.stop()
	validateResult(t, res)
	if res.Recording.StepsAdded != 4 || res.Recording.Steps != 4 || res.Recording.AgentSessions != 1 || res.Recording.CaseName != "counter-twice" {
		t.Fatalf("recording %+v", res.Recording)
	}
	if res.Recording.EndError != nil {
		t.Fatalf("the Agent session did not end: %+v", res.Recording)
	}
	b, _ := os.ReadFile(file)
	out, _ := json.Marshal(res)
	for _, blob := range [][]byte{b, out} {
		if bytes.Contains(blob, []byte("ownerToken")) {
			t.Fatalf("the owner token is named in %s", blob)
		}
	}
	replayFile(t, p, file)
	// The replay checks the recorded assertion: expecting 3 fails.
	wrong := strings.Replace(string(b), `"assertInputContent": "2"`, `"assertInputContent": "3"`, 1)
	if wrong == string(b) {
		t.Fatalf("no assert on 2 in the file:\n%s", b)
	}
	if err := os.WriteFile(file, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := replayState(t, p, file); rep.State != "failed" {
		t.Fatalf("a wrong assertion replays as %q (%v)", rep.State, rep.Err)
	}
}

// Text input: on the login app, typing the user name and the password
// and signing in through the page records INPUT, INPUT, CLICK and an
// assert on the welcome; the file replays and passes.
func TestRecordInputOnLogin(t *testing.T) {
	t.Parallel()
	p := newPhoneWith(t, "com.example.login")
	file := filepath.Join(t.TempDir(), "login-demo.json")
	r := serve(t, p, file)
	v := r.snapshotAfter(t, 0)
	act := func(id, action, text string) json.RawMessage {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"seq": v.Seq, "node": nodeWhere(t, v.Nodes, id), "action": action, "text": text})
		if text == "" {
			body, _ = json.Marshal(map[string]any{"seq": v.Seq, "node": nodeWhere(t, v.Nodes, id), "action": action})
		}
		var raw json.RawMessage
		if code := r.do(t, "POST", "/act", string(body), &raw); code != 200 {
			t.Fatalf("%s %s: %d %s", action, id, code, raw)
		}
		return raw
	}
	act(":id/username", "input", "demo")
	if got := act(":id/password", "input", "secret"); strings.Contains(string(got), "secret") || !strings.Contains(string(got), "[redacted]") {
		t.Errorf("the page is told the password: %s", got)
	}
	act(":id/sign_in_button", "click", "")
	for range 10 {
		if hasNode(v.Nodes, ":id/welcome_text") {
			break
		}
		v = r.snapshotAfter(t, v.Seq)
	}
	if w := v.Nodes[nodeWhere(t, v.Nodes, ":id/welcome_text")]; w.Text != "Welcome, demo" {
		t.Fatalf("welcome %q", w.Text)
	}
	act(":id/welcome_text", "assert", "")
	r.stop()
	c := loadCase(t, file)
	var got []string
	for _, s := range c.Steps {
		text, _ := s.Method.Param("text")
		got = append(got, s.Method.ActionEnum+":"+text)
	}
	if strings.Join(got, ",") != "INPUT:demo,INPUT:secret,CLICK:,ASSERT:" {
		t.Fatalf("recorded %v", got)
	}
	// The password's step is marked encrypted (runs of the file redact
	// it); the user name's is not; the file is the user's alone.
	for i, want := range []bool{false, true, false, false} {
		if e := c.Steps[i].Method.Encrypt; e == nil || *e != want {
			t.Errorf("step %d encrypt %v, want %v", i, e, want)
		}
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the recorded file's mode: %v %v", st.Mode(), err)
	}
	replayFile(t, p, file)
}

func hasNode(nodes []Node, idSuffix string) bool {
	for _, n := range nodes {
		if strings.HasSuffix(n.ResourceID, idSuffix) {
			return true
		}
	}
	return false
}

func loadCase(t *testing.T, file string) *casefile.Case {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := casefile.Load(b)
	if err != nil {
		t.Fatalf("the file is not a case: %v\n%s", err, b)
	}
	return c
}

// validateResult checks the final result and the announcement against
// schemas/inspect-serve.schema.json.
func validateResult(t *testing.T, res *Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "inspect-serve", b)
	var line bytes.Buffer
	if err := Announce(&line, res.URL); err != nil {
		t.Fatal(err)
	}
	if strings.Count(line.String(), "\n") != 1 {
		t.Fatalf("announcement %q is not one line", line.String())
	}
	schematest.Validate(t, "inspect-serve", line.Bytes())
}

// A --record-to file that holds a case keeps its steps: the recorded ones
// come after them.
func TestRecordAppendsToAnExistingCase(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../casefile/testdata/counter-increment.authoring.json")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "existing.json")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	before := loadCase(t, file)
	p := newPhone(t)
	r := serve(t, p, file)
	v := r.snapshotAfter(t, 0)
	if code := r.do(t, "POST", "/act", `{"seq":`+itoa(v.Seq)+`,"node":`+itoa(nodeWhere(t, v.Nodes, ":id/increment_button"))+`,"action":"click"}`, nil); code != 200 {
		t.Fatalf("act: %d", code)
	}
	res := r.stop()
	after := loadCase(t, file)
	if len(after.Steps) != len(before.Steps)+1 || after.CaseName != before.CaseName || res.Recording.Steps != len(after.Steps) {
		t.Fatalf("before %d steps, after %d (%s); result %+v", len(before.Steps), len(after.Steps), after.CaseName, res.Recording)
	}
	if last := after.Steps[len(after.Steps)-1]; last.Method.ActionEnum != "CLICK" || *last.Node.ResourceID != counterPkg+":id/increment_button" {
		t.Fatalf("last step %+v", last)
	}
	if err := CheckRecordTo(t.TempDir()); err == nil {
		t.Fatal("a directory was accepted as the record file")
	}
}

// A phone that cannot be read is shown as an error, counted, and left
// behind when it can be read again; the command keeps running.
func TestServeShowsAndSurvivesPhoneErrors(t *testing.T) {
	t.Parallel()
	p := newPhone(t)
	r := serve(t, p, "")
	v := r.snapshotAfter(t, 0)
	if err := p.dev.App.SetPermission("accessibility", false); err != nil {
		t.Fatal(err)
	}
	var bad snapshotView
	for version := v.Version; bad.Error == nil && version < v.Version+5; version = bad.Version {
		r.get(t, "/snapshot?after="+itoa(version), &bad)
	}
	if bad.Error == nil || bad.Error.ErrorCode != "page_permission_required" {
		t.Fatalf("no error shown without the accessibility permission: %+v", bad.Error)
	}
	if err := p.dev.App.SetPermission("accessibility", true); err != nil {
		t.Fatal(err)
	}
	// The next change is the recovery: the same screen again, news after
	// the error.
	var good snapshotView
	r.get(t, "/snapshot?after="+itoa(bad.Version), &good)
	if good.Error != nil || good.Seq <= v.Seq {
		t.Fatalf("the inspector did not recover: %+v", good.Error)
	}
	res := r.stop()
	validateResult(t, res)
	if res.CaptureErrors < 1 || res.LastError != nil {
		t.Fatalf("result %+v", res)
	}
}
