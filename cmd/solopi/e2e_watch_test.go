package main

// What people look at while and after a command runs, end to end through
// the built binary: the status line on a terminal (and silence without
// one), agent-run's report beside its trajectory, and the live console.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/internal/ptytest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

const clearStatusLine = "\r\x1b[2K"

// runOnTerminal runs the built binary with stderr on a pseudo-terminal
// (stdout stays a pipe, as in `solopi run | jq`) and returns what the
// terminal showed as stderr.
func runOnTerminal(t *testing.T, extraEnv []string, args ...string) cliRun {
	t.Helper()
	ptmx, tty := ptytest.Open(t, 160)
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&screen, ptmx) // ends with EIO once every copy of tty is closed
	}()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	err := cmd.Run()
	tty.Close()
	<-read
	return cliRun{stdout: out.Bytes(), stderr: screen.Bytes(), code: exitCode(t, args, err)}
}

// oneJSONObject fails unless b is exactly one JSON object (and a newline).
func oneJSONObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, b)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON object: %s", b)
	}
	return m
}

// TestE2EProgressLine: run and run-batch draw one updating line on a
// terminal's stderr — sub-run i/N, the case, the state, the verdict
// counts — and clear it before they exit; stdout holds the one JSON
// object either way, and without a terminal stderr stays empty.
func TestE2EProgressLine(t *testing.T) {
	t.Parallel()
	_, env := startFarm(t, sim.FarmOptions{NoAdbd: true})
	if r := runBinary(t, env, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace"); r.code != 0 {
		t.Fatalf("case-import exit %d: %s", r.code, r.stdout)
	}
	r := runOnTerminal(t, append(env, "NO_COLOR=1"), "run", "--case", demoCaseName, "--poll-interval", "0.05")
	if r.code != 0 {
		t.Fatalf("run exit %d: %s\n%q", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "run", r.stdout)
	oneJSONObject(t, r.stdout)
	term := string(r.stderr)
	for _, want := range []string{clearStatusLine + "running", demoCaseName, "1 passed · 0 failed"} {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal never showed %q: %q", want, term)
		}
	}
	if strings.Contains(term, "\x1b[3") {
		t.Errorf("colour despite NO_COLOR: %q", term)
	}
	if !strings.HasSuffix(term, clearStatusLine) {
		t.Errorf("the line is not cleared at the end: %q", term)
	}

	r = runOnTerminal(t, append(env, "NO_COLOR="), "run-batch", "--case", demoCaseName, "--case", demoCaseName, "--poll-interval", "0.05")
	if r.code != 0 {
		t.Fatalf("run-batch exit %d: %s\n%q", r.code, r.stdout, r.stderr)
	}
	oneJSONObject(t, r.stdout)
	term = string(r.stderr)
	for _, want := range []string{"[1/2]", "[2/2]", "\x1b[32m2 passed\x1b[0m", demoCaseName} {
		if !strings.Contains(term, want) {
			t.Errorf("run-batch: the terminal never showed %q: %q", want, term)
		}
	}

	// verify-run: the line follows the plan's segments.
	r = runOnTerminal(t, append(env, "NO_COLOR=1"), "verify-run", "--plan", cmdtest.FixturePlan(t, "counter-success"),
		"--artifacts", filepath.Join(t.TempDir(), "verify"))
	if r.code != 0 {
		t.Fatalf("verify-run exit %d: %s\n%q", r.code, r.stdout, r.stderr)
	}
	oneJSONObject(t, r.stdout)
	term = string(r.stderr)
	for _, want := range []string{"[1/2]", "[2/2]", "deterministic-success · cleanup", "2 passed"} {
		if !strings.Contains(term, want) {
			t.Errorf("verify-run: the terminal never showed %q: %q", want, term)
		}
	}

	for _, args := range [][]string{{"run", "--case", demoCaseName}, {"run-batch", "--case", demoCaseName, "--case", demoCaseName},
		{"verify-run", "--plan", cmdtest.FixturePlan(t, "counter-success"), "--artifacts", filepath.Join(t.TempDir(), "verify")}} {
		r := runBinary(t, env, args...)
		if r.code != 0 || len(r.stderr) != 0 {
			t.Errorf("%s without a terminal: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
		oneJSONObject(t, r.stdout)
	}
}

// e2eProviderKey is the fake model's API key.
const e2eProviderKey = "sk-e2e-provider-SECRET-9f8e7d6c"

// agentRunEnv is the environment of agent-run against one farm device and
// a fake model.
func agentRunEnv(farmEnv []string, dev *sim.Device, fm *fakemodel.Server, dir string) []string {
	return append(append([]string(nil), farmEnv...), "ANDROID_SERIAL="+dev.Serial(), chat.EnvModel+"=fake-vision",
		chat.EnvModelBaseURL+"="+fm.URL, chat.EnvModelAPIKey+"="+e2eProviderKey, "SOLOPI_PLANNER_CACHE_DIR="+filepath.Join(dir, "cache"))
}

// TestE2EAgentRunReport: agent-run on the simulator with the fake model,
// on a terminal: the status line follows the steps, the JSON names
// report.html beside the trajectory, and the report shows every step's
// screenshot with the tap drawn where it landed.
func TestE2EAgentRunReport(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	farm, farmEnv := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 5})
	fm, err := fakemodel.Start(fakemodel.Options{APIKey: e2eProviderKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fm.Close() })
	work := t.TempDir()
	evidence := filepath.Join(work, "evidence")
	if err := os.Mkdir(evidence, 0o700); err != nil {
		t.Fatal(err)
	}
	traj := filepath.Join(evidence, "trajectory.json")
	env := agentRunEnv(farmEnv, farm.Devices()[0], fm, work)
	r := runOnTerminal(t, append(env, "NO_COLOR=1"), "agent-run", "--task", "increase the counter to 2", "--trajectory", traj,
		"--max-steps", "12", "--max-duration", "240")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nterminal %q", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "agent-run", r.stdout)
	out := oneJSONObject(t, r.stdout)
	term := string(r.stderr)
	for _, want := range []string{"[1/12]", "verification: passed", "1 passed", "task completed"} {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal never showed %q: %q", want, term)
		}
	}
	if !strings.HasSuffix(term, clearStatusLine) {
		t.Errorf("the line is not cleared at the end: %q", term)
	}
	if out["report"] != filepath.Join(evidence, "report.html") {
		t.Fatalf("report %v (%v)", out["report"], out["reportError"])
	}
	cmdtest.NoSecretIn(t, e2eProviderKey, [][]byte{r.stdout, r.stderr}, evidence)

	p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(evidence)+"/report.html", 1280, 900)
	if v := browsertest.Eval[string](t, p, `document.querySelector('#verdict .verdict-word').innerText`); !strings.EqualFold(v, "completed") {
		t.Errorf("verdict %q", v)
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('article.step svg.overlay circle.tap').length`); n < 2 {
		t.Errorf("%d tap markers, want one per tap", n)
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('article.step img').length`); n < 2 {
		t.Errorf("%d step screenshots", n)
	}
	if broken := browsertest.BrokenImages(t, p); len(broken) > 0 {
		t.Errorf("images that did not load: %v", broken)
	}
	if outside := p.RequestsOutside(evidence); len(outside) > 0 {
		t.Errorf("requests outside the evidence directory: %v", outside)
	}
	browsertest.Screenshot(t, p, "agent-run-report")

	// Without a terminal nothing but the JSON is written.
	traj2 := filepath.Join(work, "second.json")
	r = runBinary(t, env, "agent-run", "--task", "increase the counter to 3", "--trajectory", traj2, "--max-steps", "12", "--max-duration", "240")
	if r.code != 0 || len(r.stderr) != 0 {
		t.Fatalf("without a terminal: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	oneJSONObject(t, r.stdout)
}

// TestE2EAgentRunConsole: agent-run --console on the simulator with a
// task the risk reviewer wants confirmed. The URL is announced on stderr;
// foreign requests are refused; Chromium sees the step stream and the
// pending tap, clicks Approve, and the run completes. The process then
// exits although the page is still open, and the port is closed.
func TestE2EAgentRunConsole(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	farm, farmEnv := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 5})
	fm, err := fakemodel.Start(fakemodel.Options{APIKey: e2eProviderKey, RiskVerdict: "CONFIRM"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fm.Close() })
	work := t.TempDir()
	task := `increase the counter to 1 and send <script>document.title="pwned"</script>`
	cmd := exec.Command(binPath, "agent-run", "--task", task, "--console", "--trajectory", filepath.Join(work, "trajectory.json"),
		"--max-steps", "12", "--max-duration", "240")
	cmd.Env = append(os.Environ(), agentRunEnv(farmEnv, farm.Devices()[0], fm, work)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var rest bytes.Buffer
	var restMu sync.Mutex
	lines := bufio.NewReader(stderr)
	first, err := lines.ReadBytes('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("no announcement on stderr: %v %q", err, first)
	}
	go func() {
		restMu.Lock()
		io.Copy(&rest, lines)
		restMu.Unlock()
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	var ann struct {
		Console struct {
			URL string `json:"url"`
		} `json:"console"`
	}
	if err := json.Unmarshal(first, &ann); err != nil || ann.Console.URL == "" {
		t.Fatalf("announcement %q: %v", first, err)
	}
	u, err := url.Parse(ann.Console.URL)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("console URL %q", ann.Console.URL)
	}
	token := u.Query().Get("token")
	base := "http://" + u.Host
	for _, c := range []struct{ name, target, host, origin string }{
		{"wrong token", base + "/?token=" + strings.Repeat("0", len(token)), "", ""},
		{"no token", base + "/events", "", ""},
		{"foreign origin", ann.Console.URL, "", "http://evil.example"},
		{"foreign host", ann.Console.URL, "evil.example:" + u.Port(), ""},
	} {
		req, _ := http.NewRequest("GET", c.target, nil)
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", c.name, resp.StatusCode)
		}
	}

	p := browsertest.Open(t, browser, ann.Console.URL, 1280, 900)
	ctx, cancel := context.WithTimeout(p.Ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#answer-approve"))); err != nil {
		t.Fatalf("no approve button: %v", err)
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('#steps li.step').length`); n < 1 {
		t.Error("the step stream shows no step")
	}
	if prompt := browsertest.Eval[string](t, p, `document.getElementById('prompt-text').textContent`); !strings.Contains(prompt, "Tap") {
		t.Errorf("prompt %q", prompt)
	}
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#overlay circle.tap"))); err != nil {
		t.Errorf("the pending tap is not drawn: %v", err)
	}
	browsertest.Screenshot(t, p, "agent-run-console-confirm")
	// Every action of a task that "sends" is confirmed (opening the app,
	// then +1): approve each prompt until the command ends. The page
	// stays open; the command does not wait for it.
	approvals := 0
	for ended := false; !ended; {
		// Prompts are numbered from 1; each gets fresh buttons.
		button := chromedp.CSS(fmt.Sprintf(`#prompt[data-id="%d"] #answer-approve`, approvals+1))
		wctx, wcancel := context.WithTimeout(ctx, time.Second)
		err := chromedp.Do(wctx, chromedp.WaitVisible(button))
		wcancel()
		if err == nil {
			if err := chromedp.Do(ctx, chromedp.Click(button)); err != nil {
				t.Fatal(err)
			}
			approvals++
			continue
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("exit: %v\nstdout %s", err, stdout.Bytes())
			}
			ended = true
		case <-ctx.Done():
			t.Fatal("agent-run did not end after the approvals")
		default:
		}
	}
	t.Logf("%d approvals", approvals)
	schematest.Validate(t, "agent-run", stdout.Bytes())
	out := oneJSONObject(t, stdout.Bytes())
	if c, _ := out["console"].(map[string]any); c["url"] != ann.Console.URL || out["outcome"] != "completed" {
		t.Fatalf("stdout %s", stdout.Bytes())
	}
	if got := cmdtest.CounterOnScreen(t, farm.Devices()[0]); got != "1" {
		t.Errorf("the counter shows %q", got)
	}
	restMu.Lock()
	if rest.Len() != 0 {
		t.Errorf("stderr after the announcement: %q", rest.String())
	}
	restMu.Unlock()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("state").textContent === "completed"`)); err != nil {
		t.Errorf("the page does not show the end of the run: %v", err)
	}
	if title := browsertest.Eval[string](t, p, `document.title`); title != "solopi console" {
		t.Errorf("the task's markup ran: title %q", title)
	}
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Error("the console's port is still open after the run")
	}
}
