package inspector

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

const counterPkg = "com.example.counter"

// phone is a simulated phone with the counter app in front and a SoloPi
// session on it.
type phone struct {
	dev  *sim.Device
	sess *device.Session
}

func newPhone(t *testing.T) *phone { t.Helper(); return newPhoneWith(t, counterPkg) }

// newPhoneWith is a phone with pkg in front.
func newPhoneWith(t *testing.T, pkg string) *phone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev := sim.New(sim.Options{Serial: "sim-inspector", TimeScale: 10})
	t.Cleanup(func() { dev.Close() })
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Phone.LaunchApp(pkg); err != nil {
		t.Fatal(err)
	}
	s, err := device.OpenSession(ctx, dev, device.SessionOptions{PreserveForeground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &phone{dev: dev, sess: s}
}

// running is an inspector served in the background until stop.
type running struct {
	url    string
	base   string
	token  string
	stop   func() *Result
	cancel context.CancelFunc
}

func serve(t *testing.T, p *phone, recordTo string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Serve(ctx, Options{Session: p.sess, RecordTo: recordTo, Interval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond},
			func(u string) { urls <- u })
		done <- out{res, err}
	}()
	var u string
	select {
	case u = <-urls:
	case o := <-done:
		cancel()
		t.Fatalf("serve: %v", o.err)
	}
	pu, _ := url.Parse(u)
	r := &running{url: u, base: "http://" + pu.Host, token: pu.Query().Get("token"), cancel: cancel}
	var final *Result
	r.stop = func() *Result {
		if final == nil {
			cancel()
			o := <-done
			if o.err != nil {
				t.Fatalf("serve: %v", o.err)
			}
			final = o.res
		}
		return final
	}
	t.Cleanup(func() { r.stop() })
	return r
}

// get fetches path (token added) and decodes the JSON answer.
func (r *running) get(t *testing.T, path string, v any) int {
	t.Helper()
	return r.do(t, "GET", path, "", v)
}

func (r *running) do(t *testing.T, method, path, body string, v any) int {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, _ := http.NewRequest(method, r.base+path+sep+"token="+r.token, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// snapshotAfter waits for a screen newer than screen seq after.
func (r *running) snapshotAfter(t *testing.T, after int) snapshotView {
	t.Helper()
	version := 0
	for range 10 {
		var v snapshotView
		if code := r.get(t, "/snapshot?after="+itoa(version), &v); code != 200 {
			t.Fatalf("snapshot: %d", code)
		}
		if v.Snapshot != nil && v.Seq > after {
			return v
		}
		if v.Error != nil {
			t.Logf("snapshot error: %+v", v.Error)
		}
		version = v.Version
	}
	t.Fatalf("no screen after %d", after)
	return snapshotView{}
}

// counterReads waits for a screen where the counter shows want (a look
// that began before an action may still show the screen before it).
func (r *running) counterReads(t *testing.T, v snapshotView, want string) snapshotView {
	t.Helper()
	for range 10 {
		if v.Nodes[nodeWhere(t, v.Nodes, ":id/counter_value")].Text == want {
			return v
		}
		v = r.snapshotAfter(t, v.Seq)
	}
	t.Fatalf("the counter never reads %s", want)
	return v
}

// nodeWhere is the index of the first node with the resource id suffix.
func nodeWhere(t *testing.T, nodes []Node, idSuffix string) int {
	t.Helper()
	for _, n := range nodes {
		if strings.HasSuffix(n.ResourceID, idSuffix) {
			return n.Index
		}
	}
	t.Fatalf("no node %s in %+v", idSuffix, nodes)
	return -1
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// replayFile runs the case file as `solopi run --file` does: imported
// under its name, then replayed; it fails the test unless the run passes.
func replayFile(t *testing.T, p *phone, file string) {
	t.Helper()
	if rep := replayState(t, p, file); rep.Err != nil || rep.State != "passed" {
		t.Fatalf("the recorded case does not pass: state %q err %v payload %v", rep.State, rep.Err, rep.Payload)
	}
}

// replayState is the replay of the case file.
func replayState(t *testing.T, p *phone, file string) *replay.RunReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prep, err := replay.PrepareImport(file, false)
	if err != nil {
		t.Fatalf("the recorded file does not import: %v", err)
	}
	if _, err := replay.ImportCase(ctx, p.sess.Device, prep.Case, replay.ImportOptions{Replace: true, Timeout: 10 * time.Second, PollInterval: 20 * time.Millisecond}); err != nil {
		t.Fatalf("import: %v", err)
	}
	return replay.RunReplay(ctx, p.sess.Device, replay.RunOptions{CaseName: prep.Case.CaseName, AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second,
		PollInterval: 20 * time.Millisecond, CancelWait: 10 * time.Second, ArtifactsDir: filepath.Join(t.TempDir(), "run")})
}
