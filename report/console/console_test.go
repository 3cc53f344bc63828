package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/internal/counterphone"
	"github.com/solopi-dev/solopi/internal/testwait"
)

func start(t *testing.T, title string) *Server {
	t.Helper()
	s, err := Start(title)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func request(t *testing.T, method, rawURL, host, origin, contentType, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestGuardRefusesForeignRequests: wrong or missing token, a foreign
// Origin and a Host that is not the loopback address are all 403.
func TestGuardRefusesForeignRequests(t *testing.T) {
	t.Parallel()
	s := start(t, "task")
	u, _ := url.Parse(s.URL())
	base := "http://" + u.Host
	token := u.Query().Get("token")
	if len(token) < 32 || u.Hostname() != "127.0.0.1" {
		t.Fatalf("url %s: want a loopback address and a long random token", s.URL())
	}
	other := start(t, "task")
	if other.token == s.token {
		t.Fatal("two consoles share a token")
	}
	cases := []struct {
		name                       string
		method, path, host, origin string
		contentType, body          string
		want                       int
	}{
		{name: "page", method: "GET", path: "/?token=" + token, want: 200},
		{name: "no token", method: "GET", path: "/", want: 403},
		{name: "wrong token", method: "GET", path: "/?token=" + other.token, want: 403},
		{name: "wrong token on events", method: "GET", path: "/events?token=x", want: 403},
		{name: "foreign origin", method: "GET", path: "/?token=" + token, origin: "http://evil.example", want: 403},
		{name: "foreign origin on answer", method: "POST", path: "/answer?token=" + token, origin: "http://evil.example", contentType: "application/json", body: `{"id":1,"answer":"approve"}`, want: 403},
		{name: "other port origin", method: "GET", path: "/?token=" + token, origin: "http://127.0.0.1:1", want: 403},
		{name: "rebinding host", method: "GET", path: "/?token=" + token, host: "evil.example:" + u.Port(), want: 403},
		{name: "localhost host", method: "GET", path: "/?token=" + token, host: "localhost:" + u.Port(), want: 403},
		{name: "own origin", method: "GET", path: "/?token=" + token, origin: base, want: 200},
		{name: "form post", method: "POST", path: "/answer?token=" + token, origin: base, contentType: "application/x-www-form-urlencoded", body: "id=1&answer=approve", want: 415},
		{name: "no open prompt", method: "POST", path: "/answer?token=" + token, origin: base, contentType: "application/json", body: `{"id":1,"answer":"approve"}`, want: 409},
		{name: "unknown screen", method: "GET", path: "/screens/00.png?token=" + token, want: 404},
	}
	for _, c := range cases {
		if got := request(t, c.method, base+c.path, c.host, c.origin, c.contentType, c.body); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}

func TestAnnounceIsOneJSONLine(t *testing.T) {
	t.Parallel()
	s := start(t, "task")
	var b bytes.Buffer
	if err := s.Announce(&b); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Console struct {
			URL string `json:"url"`
		} `json:"console"`
	}
	if strings.Count(b.String(), "\n") != 1 || json.Unmarshal(b.Bytes(), &m) != nil || m.Console.URL != s.URL() {
		t.Fatalf("announce: %q", b.String())
	}
}

// TestPromptAnsweredOverHTTP: the confirmer waits for the POSTed answer;
// an answer that does not fit the prompt is refused.
func TestPromptAnsweredOverHTTP(t *testing.T) {
	t.Parallel()
	s := start(t, "task")
	u, _ := url.Parse(s.URL())
	answer := func(id int, a string) int {
		return request(t, "POST", "http://"+u.Host+"/answer?token="+u.Query().Get("token"), "", "http://"+u.Host, "application/json",
			`{"id":`+string(rune('0'+id))+`,"answer":"`+a+`"}`)
	}
	got := make(chan bool, 1)
	go func() {
		ok, err := s.TakeOver(context.Background(), "log in please")
		if err != nil {
			t.Error(err)
		}
		got <- ok
	}()
	testwait.Until(t, 10*time.Second, "the console", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.prompt != nil })
	if c := answer(1, "approve"); c != 409 {
		t.Errorf("approve on a takeover prompt: %d", c)
	}
	if c := answer(2, "done"); c != 409 {
		t.Errorf("answer to a prompt that is not open: %d", c)
	}
	if c := answer(1, "done"); c != 204 {
		t.Errorf("done: %d", c)
	}
	if !<-got {
		t.Error("takeover done read as abort")
	}
	// A withdrawn prompt (the terminal answered first) is closed.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := s.Confirm(ctx, "pay?"); errc <- err }()
	testwait.Until(t, 10*time.Second, "the console", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.prompt != nil })
	cancel()
	if err := <-errc; err == nil {
		t.Error("a withdrawn prompt returned an answer")
	}
	if c := answer(2, "approve"); c != 409 {
		t.Errorf("answer to a withdrawn prompt: %d", c)
	}
}

// TestConsoleInChromium drives a real run: the fake model plans on the
// counter phone, a risk review asks for confirmation (the task says
// "send"), the browser sees the step stream, clicks approve and the run
// completes. The terminal prompt races the console and loses. The task's
// hostile text stays text.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	task := `increase the counter to 1 and send <script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`
	s := start(t, task)
	// A terminal nobody types on: its prompt is withdrawn when the console
	// answers.
	ttyIn, ttyW := io.Pipe()
	defer ttyW.Close()
	ttyOut := &syncWriter{}
	terminal := &agentloop.TerminalConfirmer{In: ttyIn, Out: ttyOut}

	type result struct {
		run *counterphone.Run
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := counterphone.RunAgent(context.Background(), t.TempDir(), counterphone.RunOptions{Task: task,
			Model:     fakemodel.Options{Coords: fakemodel.CoordsRelative, RiskVerdict: "CONFIRM", Delay: 20 * time.Millisecond},
			Confirmer: agentloop.FirstAnswer(terminal, s), OnEvent: s.OnEvent, OnScreen: s.OnScreen})
		done <- result{r, err}
	}()

	p := browsertest.Open(t, browser, s.URL(), 1280, 900)
	ctx, cancel := context.WithTimeout(p.Ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#answer-approve"))); err != nil {
		t.Fatalf("no approve button: %v", err)
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('#steps li.step').length`); n < 1 {
		t.Error("the step stream shows no step")
	}
	prompt := browsertest.Eval[string](t, p, `document.getElementById('prompt-text').textContent`)
	if !strings.Contains(prompt, "Confirm this action: Tap") {
		t.Errorf("prompt %q", prompt)
	}
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#overlay circle.tap"))); err != nil {
		t.Errorf("the pending tap is not drawn: %v", err)
	}
	if broken := browsertest.BrokenImages(t, p); len(broken) > 0 {
		t.Errorf("screens that did not load: %v", broken)
	}
	browsertest.Screenshot(t, p, "console-confirm")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#answer-approve"))); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish after the approval")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.run.Result.Outcome != agentloop.OutcomeCompleted || res.run.Phone.Value() != 1 {
		t.Fatalf("outcome %s (%s), counter %d", res.run.Result.Outcome, res.run.Result.Message, res.run.Phone.Value())
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("state").textContent === "completed"`)); err != nil {
		t.Errorf("the page does not show the end of the run: %v", err)
	}
	if !strings.Contains(ttyOut.String(), "confirmation needed") {
		t.Errorf("the terminal was not asked too: %q", ttyOut.String())
	}
	if got := browsertest.Eval[string](t, p, `document.getElementById('task').textContent`); got != task {
		t.Errorf("task shown as %q", got)
	}
	if title := browsertest.Eval[string](t, p, `document.title`); title != "solopi console" {
		t.Errorf("hostile text ran: title %q", title)
	}
	if n := browsertest.Eval[int](t, p, `document.scripts.length`); n != 1 {
		t.Errorf("%d script elements, want only the console's own", n)
	}
	browsertest.Screenshot(t, p, "console-finished")
	u, _ := url.Parse(s.URL())
	for _, r := range p.Requests() {
		if !strings.HasPrefix(r, "http://"+u.Host+"/") {
			t.Errorf("request outside the console: %s", r)
		}
	}
}

// syncWriter lets the terminal confirmer write while the test reads.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPageWhenTheCommandEnds: a console closed before its run finished
// (the command was killed, the runtime failed) leaves the page saying so,
// with its open prompt withdrawn, instead of "running".
func TestPageWhenTheCommandEnds(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	s, err := Start("task")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	asked := make(chan error, 1)
	go func() { _, err := s.Confirm(context.Background(), "pay?"); asked <- err }()
	p := browsertest.Open(t, browser, s.URL(), 390, 844)
	ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#answer-approve"))); err != nil {
		t.Fatalf("no prompt: %v", err)
	}
	s.Close()
	if err := <-asked; err == nil {
		t.Error("closing the console did not withdraw its prompt")
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("state").textContent === "disconnected"`)); err != nil {
		t.Fatalf("the page does not say the command is gone: %v", err)
	}
	if hidden := browsertest.Eval[bool](t, p, `document.getElementById("prompt").hidden`); !hidden {
		t.Error("a prompt nobody can answer is still shown")
	}
}

// TestStopAndEvidenceGuarded: the stop button's request passes the same
// guards as the answers (token, Origin, a JSON body) and stops once; the
// report is served, with its screenshots beside it, only once Finish
// named it, only under the token and only report.html and screens/.
func TestStopAndEvidenceGuarded(t *testing.T) {
	t.Parallel()
	s := start(t, "task")
	u, _ := url.Parse(s.URL())
	base, token := "http://"+u.Host, u.Query().Get("token")
	stopURL := base + "/stop?token=" + token
	if c := request(t, "POST", stopURL, "", base, "application/json", `{"stop":true}`); c != 409 {
		t.Errorf("stop without a run to stop: %d", c)
	}
	var stops int
	var mu sync.Mutex
	s.OnStop(func() { mu.Lock(); stops++; mu.Unlock() })
	for _, c := range []struct {
		name, url, origin, ctype, body string
		want                           int
	}{
		{"wrong token", base + "/stop?token=x", base, "application/json", `{"stop":true}`, 403},
		{"foreign origin", stopURL, "http://evil.example", "application/json", `{"stop":true}`, 403},
		{"form post", stopURL, base, "application/x-www-form-urlencoded", "stop=true", 415},
		{"text post", stopURL, base, "text/plain", `{"stop":true}`, 415},
		{"not a stop", stopURL, base, "application/json", `{"stop":false}`, 400},
		{"stop", stopURL, base, "application/json", `{"stop":true}`, 204},
		{"stop again", stopURL, base, "application/json", `{"stop":true}`, 409},
	} {
		if got := request(t, "POST", c.url, "", c.origin, c.ctype, c.body); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	if mu.Lock(); stops != 1 {
		t.Errorf("stop called %d times", stops)
	}
	mu.Unlock()

	dir := t.TempDir()
	rep := filepath.Join(dir, "report.html")
	sha := strings.Repeat("ab", 32)
	os.WriteFile(rep, []byte("<p>report</p>"), 0o600)
	os.MkdirAll(filepath.Join(dir, "screens"), 0o700)
	os.WriteFile(filepath.Join(dir, "screens", sha+".png"), []byte("png"), 0o600)
	os.WriteFile(filepath.Join(dir, "trajectory.json"), []byte("{}"), 0o600)
	ev := base + "/evidence/" + token
	if c := request(t, "GET", ev+"/report.html", "", "", "", ""); c != 404 {
		t.Errorf("report before Finish: %d", c)
	}
	s.Finish(Final{Outcome: "cancelled", ExitCode: 130, Report: rep})
	for _, c := range []struct {
		url  string
		want int
	}{
		{ev + "/report.html", 200},
		{ev + "/screens/" + sha + ".png", 200},
		{base + "/evidence/" + strings.Repeat("0", len(token)) + "/report.html", 403},
		{base + "/evidence/report.html?token=" + token, 403},
		{ev + "/screens/..%2Ftrajectory.json", 404},
		{ev + "/trajectory.json", 404},
		{ev + "/screens/" + strings.ToUpper(sha) + ".png", 404},
	} {
		if got := request(t, "GET", c.url, "", "", "", ""); got != c.want {
			t.Errorf("%s: status %d, want %d", c.url, got, c.want)
		}
	}
}

// TestPageKeepsTheFinalState: a console without a stop hook (verify-run)
// shows no stop button; Finish then Close leaves the outcome and the
// report on the page, not "disconnected", and a Finish without a report
// says why.
func TestPageKeepsTheFinalState(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	for _, c := range []struct {
		name string
		fin  Final
		want string
	}{
		{"report", Final{Outcome: "completed", ExitCode: 0, Report: "/evidence/run/report.html"}, "/evidence/run/report.html"},
		{"report error", Final{Outcome: "cancelled", ExitCode: 130, ReportError: "disk full"}, "No report: disk full"},
	} {
		s, err := Start("task")
		if err != nil {
			t.Fatal(err)
		}
		p := browsertest.Open(t, browser, s.URL(), 390, 844)
		ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("task").textContent === "task"`)); err != nil {
			t.Fatalf("%s: the page did not load: %v", c.name, err)
		}
		if !browsertest.Eval[bool](t, p, `document.getElementById("stop").hidden`) {
			t.Errorf("%s: a stop button without a run to stop", c.name)
		}
		s.Finish(c.fin)
		s.Close()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#final"))); err != nil {
			t.Fatalf("%s: no final state: %v", c.name, err)
		}
		if got := browsertest.Eval[string](t, p, `document.getElementById("final-report").textContent`); !strings.Contains(got, c.want) {
			t.Errorf("%s: report line %q, want %q", c.name, got, c.want)
		}
		if got := browsertest.Eval[string](t, p, `document.getElementById("state").textContent`); got != c.fin.Outcome {
			t.Errorf("%s: state %q after the console closed", c.name, got)
		}
		cancel()
	}
}
