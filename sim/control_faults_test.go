package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/testwait"
)

// query asks the device's control port one question, as a host would, and
// returns the content type and body.
func query(t *testing.T, d *Device, path string) (string, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialTCP(ctx, d.App.DevicePort()) }}}
	resp, err := hc.Get("http://device" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), string(b)
}

// mutate sends one scheme intent through the protected activity.
func mutate(t *testing.T, d *Device, uri string) {
	t.Helper()
	if _, errOut, code, err := d.Shell(context.Background(), "am start -W -n com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity -a android.intent.action.VIEW -d '"+uri+"'"); err != nil || code != 0 {
		t.Fatalf("am start: %d %s %v", code, errOut, err)
	}
}

func readyDevice(t *testing.T, f *Farm) *Device {
	t.Helper()
	d := f.Devices()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAnswerFaultEditsAnswersThroughTheControlEndpoint(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	d := readyDevice(t, f)
	post := func(body string) int {
		code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/answer-fault", body)
		return code
	}
	for _, bad := range []string{`{}`, `{"action":"harness","times":-1}`, `{"action":"harness","set":{"/x":1}}`, `{"action":"harness","bogus":1}`} {
		if post(bad) != 400 {
			t.Errorf("%s accepted", bad)
		}
	}
	if post(`{"action":"harness","query":{"type":"capabilities"},"set":{"protocolVersion":"9.9","extra/name":"x","transports/0":"usb"},"remove":["agentProtocolVersion"],"times":1}`) != 200 {
		t.Fatal("answer fault refused")
	}
	var got map[string]any
	_, body := query(t, d, "/scheme/harness?type=capabilities")
	if err := json.Unmarshal([]byte(body), &got); err != nil || got["protocolVersion"] != "9.9" || got["agentProtocolVersion"] != nil ||
		got["extra"].(map[string]any)["name"] != "x" || got["transports"].([]any)[0] != "usb" || got["success"] != true {
		t.Fatalf("edited answer %s (%v)", body, err)
	}
	// Spent after one use; other queries were never touched.
	if _, body = query(t, d, "/scheme/harness?type=capabilities"); !strings.Contains(body, `"protocolVersion":"2.0"`) {
		t.Fatalf("the fault outlived its times: %s", body)
	}
	// when: only a running replay's status is edited; html: SoloPi 0.x.
	if post(`{"action":"harness","query":{"type":"status"},"when":{"state":"running"},"set":{"caseName":"x"}}`) != 200 ||
		post(`{"action":"config","html":true}`) != 200 {
		t.Fatal("answer faults refused")
	}
	if _, body = query(t, d, "/scheme/harness?type=status"); strings.Contains(body, `"caseName":"x"`) {
		t.Fatalf("an idle status was edited: %s", body)
	}
	if ct, body := query(t, d, "/scheme/config?action=list"); ct != "text/html" || body != nanoFallback {
		t.Fatalf("html fault: %s %s", ct, body)
	}
	if post(`{"clear":true}`) != 200 {
		t.Fatal("clear refused")
	}
	if ct, _ := query(t, d, "/scheme/config?action=list"); ct != "application/json" {
		t.Fatalf("cleared fault still applies: %s", ct)
	}
}

func TestAnswerFaultDelayAndWatchers(t *testing.T) {
	t.Parallel()
	f, _ := controlFarm(t)
	d := readyDevice(t, f)
	var mu sync.Mutex
	var seen []string
	stop := d.OnAnswer(func(a Answer) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, a.Action+"/"+a.Query.Get("type")+" "+string(a.Body))
	})
	if err := d.AddAnswerFault(AnswerFault{Action: "harness", Query: map[string]string{"type": "health"}, DelayMs: 3_600_000}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialTCP(ctx, d.App.DevicePort()) }}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://device/scheme/harness?type=health", nil)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a delayed answer came at once")
	}
	query(t, d, "/scheme/harness?type=capabilities")
	stop()
	query(t, d, "/scheme/harness?type=capabilities")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "harness/capabilities {") {
		t.Fatalf("watched answers %q", seen)
	}
}

func TestMutationFaultLosesAndDelaysIntents(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	d := readyDevice(t, f)
	post := func(body string) int {
		code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/mutation-fault", body)
		return code
	}
	for _, bad := range []string{`{}`, `{"action":"config"}`, `{"action":"config","drop":true,"delayMs":5}`, `{"action":"config","drop":true,"times":-2}`} {
		if post(bad) != 400 {
			t.Errorf("%s accepted", bad)
		}
	}
	setURI := "solopi://startaction/config?action=set&key=KEY_HIDE_LOG&value=false"
	value := func() string {
		_, body := query(t, d, "/scheme/config?action=get&key=KEY_HIDE_LOG")
		return body
	}
	var got []string
	stop := d.OnMutation(func(uri string) { got = append(got, uri) })
	defer stop()
	if post(`{"action":"config","query":{"key":"KEY_HIDE_LOG"},"drop":true,"times":1}`) != 200 {
		t.Fatal("drop refused")
	}
	mutate(t, d, setURI)
	if !strings.Contains(value(), `"value":true`) {
		t.Fatal("a lost mutation reached SoloPi")
	}
	// The fault is spent: the next one arrives, 20 s of device time late.
	if post(`{"action":"config","delayMs":20000}`) != 200 {
		t.Fatal("delay refused")
	}
	mutate(t, d, setURI)
	if !strings.Contains(value(), `"value":true`) {
		t.Fatal("a delayed mutation arrived at once")
	}
	testwait.Until(t, 10*time.Second, "the delayed mutation", func() bool { return strings.Contains(value(), `"value":false`) })
	if len(got) != 2 || len(d.Mutations()) != 2 || got[0] != setURI {
		t.Fatalf("observed %v, logged %v", got, d.Mutations())
	}
	if post(`{"clear":true}`) != 200 {
		t.Fatal("clear refused")
	}
}

func TestRefuseDialAndCommandOutput(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	d := readyDevice(t, f)
	if code, body := controlPost(t, srv.URL+"/v1/devices/sim-0001/refuse-dial", `{"times":2}`); code != 200 {
		t.Fatalf("refuse-dial %d %s", code, body)
	}
	for i := range 3 {
		_, err := d.DialTCP(context.Background(), d.App.DevicePort())
		if (err == nil) != (i == 2) {
			t.Fatalf("dial %d: %v", i, err)
		}
	}
	body := `{"command":"getprop","args":["ro.product.model"],"outputs":[{"stdout":"Vendor X\n"},{"stderr":"getprop: denied\n","exit":1}]}`
	if code, out := controlPost(t, srv.URL+"/v1/devices/sim-0001/command-output", body); code != 200 {
		t.Fatalf("command-output %d %s", code, out)
	}
	if code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/command-output", `{"command":"no-such-tool","outputs":[{}]}`); code != 400 {
		t.Fatal("an unknown command was accepted")
	}
	for body, want := range map[string]int{`{"delayMs":5000}`: 200, `{"delayMs":-1}`: 400} {
		if code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/scan-attach-delay", body); code != want {
			t.Errorf("scan-attach-delay %s: %d", body, code)
		}
	}
	run := func(cmd string) (string, string, int) {
		o, e, code, err := d.Shell(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		return string(o), string(e), code
	}
	if o, _, _ := run("getprop ro.build.version.sdk"); o == "Vendor X\n" {
		t.Fatal("other arguments were answered by the override")
	}
	if o, _, code := run("getprop ro.product.model"); o != "Vendor X\n" || code != 0 {
		t.Fatalf("first override %q %d", o, code)
	}
	if _, e, code := run("getprop ro.product.model"); e != "getprop: denied\n" || code != 1 {
		t.Fatalf("second override %q %d", e, code)
	}
	if o, _, _ := run("getprop ro.product.model"); o == "Vendor X\n" || o == "" {
		t.Fatalf("the override outlived its outputs: %q", o)
	}
	var cmds []string
	stop := d.OnCommand(func(c string) { cmds = append(cmds, c) })
	run("echo hi")
	stop()
	run("echo bye")
	if len(cmds) != 1 || cmds[0] != "echo hi" || !bytes.Contains([]byte(strings.Join(d.Commands(), "\n")), []byte("echo bye")) {
		t.Fatalf("observed %v, logged %v", cmds, d.Commands())
	}
}

func TestReplaceReplayTakesTheSlot(t *testing.T) {
	t.Parallel()
	f, srv := controlFarm(t)
	d := readyDevice(t, f)
	if code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/replace-replay", `{"caseName":"none"}`); code != 400 {
		t.Fatal("replace without a case accepted")
	}
	if err := importCounterCase(d, "long", `[{"stepId":"s1","operationId":"op-s1","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"86400000"}}}]`); err != nil {
		t.Fatal(err)
	}
	if code, _ := controlPost(t, srv.URL+"/v1/devices/sim-0001/replace-replay", `{"caseName":"long"}`); code != 400 {
		t.Fatal("replace with no running replay accepted")
	}
	req, run, err := d.App.StartCompetingReplay("long")
	if err != nil {
		t.Fatal(err)
	}
	code, body := controlPost(t, srv.URL+"/v1/devices/sim-0001/replace-replay", `{"caseName":"long"}`)
	var out struct{ RequestID, RunID string }
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.RunID == run || out.RequestID == req {
		t.Fatalf("replace %d %s", code, body)
	}
	if _, st := query(t, d, "/scheme/harness?type=status"); !strings.Contains(st, `"runId":"`+out.RunID+`"`) || !strings.Contains(st, `"state":"running"`) {
		t.Fatalf("status after the takeover %s", st)
	}
}

// importCounterCase stores a case through SoloPi's own import.
func importCounterCase(d *Device, name, steps string) error {
	const dir = "/sdcard/Android/data/com.alipay.hulu/files/harness-import"
	doc := `{"caseName":"` + name + `","targetAppPackage":"com.example.counter","operationLog":{"steps":` + steps + `}}`
	if err := d.Push(context.Background(), strings.NewReader(doc), dir+"/c.json", 0o644, time.Time{}); err != nil {
		return err
	}
	_, _, _, err := d.Shell(context.Background(), "am start -W -n com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity -a android.intent.action.VIEW -d 'solopi://startaction/harness?type=case-import&requestId=r1&path="+dir+"/c.json'")
	return err
}

// A long-running device remembers its newest commands only.
func TestCommandLogKeepsTheNewest(t *testing.T) {
	t.Parallel()
	var l eventLog[string]
	l.keep = true
	for i := range logCap + 10 {
		l.add(fmt.Sprint(i))
	}
	got := l.list()
	if len(got) != logCap || got[0] != "10" || got[len(got)-1] != fmt.Sprint(logCap+9) {
		t.Fatalf("%d entries from %s to %s", len(got), got[0], got[len(got)-1])
	}
}
