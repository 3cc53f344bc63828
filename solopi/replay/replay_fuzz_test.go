package replay

import (
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// FuzzParseReplayStatus feeds arbitrary device answers to the snapshot
// parser: it must never panic, and whatever it accepts must be a state of
// the replay machine whose active/terminal flags agree with it.
func FuzzParseReplayStatus(f *testing.F) {
	f.Add(`{"success":true,"state":"idle","active":false,"terminal":false,"results":[]}`)
	f.Add(`{"success":true,"runId":"1-a","requestId":"replay-x","caseName":"c","state":"failed","active":false,"terminal":true,` +
		`"results":[{"status":"failed","exceptionStep":1,"exceptionStepId":"s","screenshotFiles":{"a":"/sdcard/solopi/a.png"}}]}`)
	f.Add(`{"success":true,"runId":"1-a","state":"running","active":true,"terminal":true}`)
	f.Add(`{"success":true,"runId":"1-a","state":"passed","active":false,"terminal":true,"results":{"x":1}}`)
	f.Fuzz(func(t *testing.T, body string) {
		m, err := device.DecodeObject([]byte(body))
		if err != nil {
			return
		}
		st, err := parseReplayStatus(m)
		if err != nil {
			return
		}
		mach := protocol.Replay()
		s := protocol.State(st.State)
		if !mach.Has(s) || st.Active != mach.IsLive(s) || st.Terminal != mach.IsTerminal(s) {
			t.Fatalf("accepted inconsistent snapshot %q", body)
		}
		if s != protocol.ReplayIdle && st.RunID == "" {
			t.Fatalf("accepted a non-idle snapshot without runId: %q", body)
		}
		for _, r := range st.Results {
			if r.Status != "passed" && r.Status != "failed" {
				t.Fatalf("accepted result status %q", r.Status)
			}
		}
	})
}

// FuzzCheckEvidencePath: an accepted device path is absolute, clean and
// under SoloPi's directories, whatever the device sent.
func FuzzCheckEvidencePath(f *testing.F) {
	for _, s := range []string{"/sdcard/solopi/a.log", "/sdcard/solopi/../etc", "/sdcard/solopi/./a", "relative", "/storage/emulated/0/solopi/x/y.png"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkEvidencePath("com.alipay.hulu", p) != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "//") || strings.ContainsAny(p, "\x00\n\r") {
			t.Fatalf("accepted unsafe path %q", p)
		}
		ok := false
		for _, root := range evidenceRoots("com.alipay.hulu") {
			ok = ok || strings.HasPrefix(p, root)
		}
		if !ok {
			t.Fatalf("accepted path outside the roots %q", p)
		}
	})
}
