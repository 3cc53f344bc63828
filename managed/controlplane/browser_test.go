package controlplane_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/controlplane"
)

// seen is one request the control plane answered.
type seen struct {
	method, path, origin, contentType string
	authorized                        bool
	status                            int
}

// recorder wraps the control plane and keeps every request and its status.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	log  []seen
	// answered receives the path of every POST once it is answered.
	answered chan string
}

func newRecorder(next http.Handler) *recorder {
	return &recorder{next: next, answered: make(chan string, 100)}
}

// await waits until a POST to path has been answered.
func (r *recorder) await(t *testing.T, path string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case p := <-r.answered:
			if p == path {
				return
			}
		case <-timeout:
			t.Fatalf("no request to %s arrived", path)
		}
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	sw := &statusWriter{ResponseWriter: w, status: 200}
	r.next.ServeHTTP(sw, req)
	r.mu.Lock()
	r.log = append(r.log, seen{req.Method, req.URL.Path, req.Header.Get("Origin"), req.Header.Get("Content-Type"),
		req.Header.Get("Authorization") != "", sw.status})
	r.mu.Unlock()
	if req.Method == http.MethodPost { // few: the dashboard's polling GETs are not awaited
		r.answered <- req.URL.Path
	}
}

func (r *recorder) requests(path string) []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []seen
	for _, s := range r.log {
		if s.path == path {
			out = append(out, s)
		}
	}
	return out
}

func evalAsync[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %q: %v", expr, err)
	}
	return v
}

// An operator signed in to River's dashboard opens a foreign page. Its
// cross-site text/plain POSTs (a script's fetch, and a plain form whose
// navigation carries the browser's cached Basic credentials) reach the
// server and are refused:
// the task's shard jobs survive and recovery does not end the task. The
// dashboard's own requests, sent as River's UI sends them, still work.
func TestDashboardRefusesCrossSiteRequests(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := managed.Open(ctx, filepath.Join(t.TempDir(), "m.sqlite"), managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := controlplane.New(ctx, controlplane.Config{Store: s, BearerToken: token, Host: "host-a"})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(h)
	farm := httptest.NewServer(rec)
	t.Cleanup(farm.Close)
	submit := func(key string) managed.Task {
		t.Helper()
		sub := managed.NewSubmission()
		m := submission(key)
		sub.Plan, sub.Matrix, sub.IdempotencyKey = m["plan"], m["matrix"], key
		sub.OwnerToken = "owner-token-1234567890abcdef"
		task, err := s.Submit(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	task := submit("csrf-1")
	jobs, err := s.ShardJobs(ctx, task.TaskID)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("shard jobs %+v %v", jobs, err)
	}

	// The operator signs in: the browser keeps the Basic credentials for
	// the dashboard and sends them with every later request to it.
	u, _ := url.Parse(farm.URL + "/riverui/")
	u.User = url.UserPassword("operator", token)
	ui := browsertest.Open(t, browser, u.String(), 1280, 800)
	// Then the dashboard as the operator uses it, without the credentials
	// in its address (a page whose URL holds them cannot fetch).
	nav, navCancel := context.WithTimeout(ui.Ctx, 30*time.Second)
	defer navCancel()
	if err := chromedp.Do(nav, chromedp.Navigate(farm.URL+"/riverui/")); err != nil {
		t.Fatal(err)
	}
	if got := evalAsync[int](t, ui.Ctx, `fetch("/riverui/api/jobs/`+fmt.Sprint(jobs[0].JobID)+`").then(r => r.status)`); got != 200 {
		t.Fatalf("the signed-in dashboard reads the job: %d", got)
	}

	// The foreign page, on another site (localhost is not 127.0.0.1): a
	// script's fetch and a plain form whose text/plain body is the JSON
	// River's delete takes ({"ids":[…],"x":"="}).
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, id := r.URL.Query().Get("target"), r.URL.Query().Get("id")
		body := `{"ids":["` + id + `"]}`
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>cute cats</title>
<form id="f" method="POST" enctype="text/plain" action="%s"><input type="hidden" name='{"ids":["%s"],"x":"' value='"}'></form>
<script>
window.attack = () => fetch(%q, {method: "POST", mode: "no-cors", credentials: "include", body: %q}).then(() => "sent", e => "error: " + e);
</script>`, target, id, target, body)
	}))
	t.Cleanup(foreign.Close)
	attack := func(server string, r *recorder, jobID int64) {
		t.Helper()
		const path = "/riverui/api/jobs/delete"
		target := server + path
		q := url.Values{"target": {target}, "id": {fmt.Sprint(jobID)}}
		page := browsertest.Open(t, browser, strings.Replace(foreign.URL, "127.0.0.1", "localhost", 1)+"/?"+q.Encode(), 800, 600)
		if got := evalAsync[string](t, page.Ctx, `window.attack()`); got != "sent" {
			t.Fatalf("the foreign fetch: %s", got)
		}
		r.await(t, path)
		// The plain form: a cross-site navigation to the farm.
		nctx, ncancel := context.WithTimeout(page.Ctx, 30*time.Second)
		defer ncancel()
		if err := chromedp.Do(nctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("f").submit()`)); err != nil {
			t.Fatal(err)
		}
		r.await(t, path)
	}

	// The attack is real: against River's dashboard without the guard
	// (no authentication at all here), the form deletes a job and the
	// task ends not_tested.
	control := submit("csrf-control")
	controlJobs, _ := s.ShardJobs(ctx, control.TaskID)
	ui2, err := s.RiverUI(ctx, "/riverui")
	if err != nil {
		t.Fatal(err)
	}
	if err := ui2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bareRec := newRecorder(ui2)
	bare := httptest.NewServer(bareRec)
	t.Cleanup(bare.Close)
	attack(bare.URL, bareRec, controlJobs[0].JobID)
	if _, err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx, control.TaskID); st.Status != "not_tested" {
		t.Fatalf("the control attack did not delete the job: %+v", st)
	}

	attack(farm.URL, rec, jobs[0].JobID)
	attacks := rec.requests("/riverui/api/jobs/delete")
	if len(attacks) != 2 {
		t.Fatalf("the foreign page's requests did not both reach the server: %+v", attacks)
	}
	for _, a := range attacks {
		if !strings.HasPrefix(a.contentType, "text/plain") || a.status != http.StatusForbidden {
			t.Fatalf("a cross-site request was not refused: %+v", a)
		}
	}
	// The form's navigation carried the operator's Basic credentials:
	// only the guard stood between the page and the jobs.
	if !attacks[1].authorized {
		t.Fatalf("the cross-site form did not carry the cached credentials: %+v", attacks[1])
	}
	if _, err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx, task.TaskID)
	if err != nil || st.Status != "queued" || st.ShardCounts["queued"] != 1 {
		t.Fatalf("the task after the attack: %+v %v", st, err)
	}
	if got := evalAsync[int](t, ui.Ctx, `fetch("/riverui/api/jobs/`+fmt.Sprint(jobs[0].JobID)+`").then(r => r.status)`); got != 200 {
		t.Fatalf("the job is gone after the attack: %d", got)
	}

	// The dashboard renders the task's job.
	list, listCancel := context.WithTimeout(ui.Ctx, 30*time.Second)
	defer listCancel()
	if err := chromedp.Do(list, chromedp.Navigate(farm.URL+"/riverui/jobs?state=available")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(list, chromedp.Poll[bool](`document.body.innerText.includes("`+managed.KindShard+`")`)); err != nil {
		browsertest.Screenshot(t, ui, "riverui-jobs")
		t.Fatalf("the dashboard does not list the job: %v", err)
	}

	// The dashboard itself still changes state: the operator cancels the
	// job with the Cancel button of its page in River's UI.
	detail, detailCancel := context.WithTimeout(ui.Ctx, 30*time.Second)
	defer detailCancel()
	if err := chromedp.Do(detail, chromedp.Navigate(farm.URL+"/riverui/jobs/"+fmt.Sprint(jobs[0].JobID)),
		chromedp.Click(chromedp.Search(`//button[normalize-space(.)="Cancel"]`))); err != nil {
		browsertest.Screenshot(t, ui, "riverui-job")
		t.Fatalf("the dashboard's Cancel button: %v", err)
	}
	rec.await(t, "/riverui/api/jobs/cancel")
	if got := rec.requests("/riverui/api/jobs/cancel"); len(got) != 1 || got[0].status != 200 || got[0].contentType != "application/json" {
		t.Fatalf("the dashboard's own cancel: %+v", got)
	}
	state := evalAsync[string](t, ui.Ctx, `fetch("/riverui/api/jobs/`+fmt.Sprint(jobs[0].JobID)+`").then(r => r.json()).then(j => j.state)`)
	if state != "cancelled" {
		t.Fatalf("the job after the dashboard's cancel: %s", state)
	}
	if _, err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx, task.TaskID); st.Status != "not_tested" {
		t.Fatalf("the task after an operator cancelled its job: %+v", st)
	}
}
