package managedcmd

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// fileTree lists the files under root by slash-separated relative path.
func fileTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// onlyAttempt is the only attempt of a report's only shard.
func onlyAttempt(t *testing.T, rep map[string]any) map[string]any {
	t.Helper()
	shards := rep["shards"].([]any)
	if len(shards) != 1 {
		t.Fatalf("report has %d shards", len(shards))
	}
	attempts := shards[0].(map[string]any)["attempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("shard has %d attempts: %v", len(attempts), attempts)
	}
	return attempts[0].(map[string]any)
}

// A worker runs a counter-success shard on the leased phone and reaches
// what verify-run reaches on it: the verdict, the outcome fingerprint and
// the evidence layout; the report and the evidence digest land in the
// store, and the device is released.
func TestWorkerOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, filepath.Join(t.TempDir(), "managed.sqlite"), &sim.Options{})
	plan := cmdtest.FixturePlan(t, "counter-success")
	single := filepath.Join(t.TempDir(), "single")
	r.Expect(0, "verify-run", "verify-run", "--plan", plan, "--artifacts", single)
	want := cmdtest.ReadVerifyReport(t, filepath.Join(single, "report.json"))

	r.ready()
	task := r.submit(plan, "once", 1)
	// managed-report --wait blocks until the worker has run the shard.
	junit := filepath.Join(t.TempDir(), "ci", "junit.xml")
	waited := make(chan cmdtest.Result, 1)
	go func() {
		waited <- r.Run("managed-report", "--database", r.db, "--task-id", task, "--wait", "--poll-interval", "0.05", "--junit", junit)
	}()
	once := r.managed(0, "managed-worker-once", "--worker-id", "host-a-1", "--artifacts-root", r.root)
	w := <-waited
	if m := w.Object(t); w.Code != 0 || m["status"] != "passed" || m["terminal"] != true || m["junit"] != junit || m["errorCode"] != nil {
		t.Errorf("managed-report --wait: exit %d %v", w.Code, m)
	}
	suites := readJUnit(t, junit)
	if len(suites) != 1 || suites[0].Name != r.dev.Serial() || len(suites[0].Cases) != 1 || suites[0].Cases[0].Name != "counter" ||
		suites[0].Cases[0].Failure != nil || suites[0].Cases[0].Error != nil {
		t.Errorf("junit %+v", suites)
	}
	// The task's HTML report is a batch's: its suite report and page; the
	// report command renders the directory again.
	html := filepath.Join(r.root, task)
	h := r.managed(0, "managed-report", "--task-id", task, "--html", html)
	if h["htmlReport"] != filepath.Join(html, "report.html") {
		t.Fatalf("managed-report --html: %v", h)
	}
	page, err := os.ReadFile(filepath.Join(html, "report.html"))
	if err != nil || !strings.Contains(string(page), "counter") || !strings.Contains(string(page), r.dev.Serial()) {
		t.Errorf("the task's report.html (%v) shows neither its case nor its phone", err)
	}
	if _, err := os.Stat(filepath.Join(html, "suite.json")); err != nil {
		t.Errorf("no suite.json beside it: %v", err)
	}
	res := cmdtest.Obj(once, "result")
	if once["claimed"] != true || once["success"] != true || res["shardStatus"] != "passed" || res["taskStatus"] != "passed" {
		t.Fatalf("worker-once %v", once)
	}
	a := cmdtest.Obj(once, "assignment")
	dir := filepath.Join(r.root, task, a["shardId"].(string), a["attemptId"].(string))
	if once["report"] != filepath.Join(dir, "report.json") || a["serial"] != r.dev.Serial() {
		t.Fatalf("report %v, assignment %v", once["report"], a)
	}
	got := cmdtest.ReadVerifyReport(t, filepath.Join(dir, "report.json"))
	if got.Status != want.Status || got.OutcomeFingerprint != want.OutcomeFingerprint {
		t.Errorf("the shard's report: %s %s, the single-device run's: %s %s", got.Status, got.OutcomeFingerprint, want.Status, want.OutcomeFingerprint)
	}
	if g, w := fileTree(t, dir), fileTree(t, single); !slices.Equal(g, w) {
		t.Errorf("evidence layout differs from verify-run's:\n%v\n%v", g, w)
	}
	rep := r.managed(0, "managed-report", "--task-id", task)
	at := onlyAttempt(t, rep)
	digest, err := worker.EvidenceDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep["status"] != "passed" || at["verificationOutcomeFingerprint"] != want.OutcomeFingerprint || at["evidenceDigest"] != digest || at["reportPath"] != once["report"] {
		t.Errorf("managed-report: %v", rep)
	}
	r.noDeviceLeased()
	// Nothing left: claimed:false, exit 0.
	if again := r.managed(0, "managed-worker-once", "--worker-id", "host-a-1", "--artifacts-root", r.root); again["claimed"] != false {
		t.Errorf("second worker-once %v", again)
	}
	// Bad worker options are refused.
	r.managed(3, "managed-worker-once", "--worker-id", "bad id", "--artifacts-root", r.root)
	r.managed(3, "managed-worker-once", "--worker-id", "w", "--artifacts-root", r.root, "--restart-app", "--no-restart-app")
	r.managed(3, "managed-worker-loop", "--worker-id", "w", "--artifacts-root", r.root, "--concurrency", "0")
}

// A shard whose plan has vision oracles (stored past managed-submit's
// check) is a worker error: exit 3, the shard ends not_tested.
func TestWorkerOnceWorkerError(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "managed.sqlite")
	r := newRig(t, db, &sim.Options{})
	r.ready()
	s, err := managed.Open(context.Background(), db, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub := managed.NewSubmission()
	tree, err := canonjson.Decode(cmdtest.Read(t, visionOraclePlan(t)))
	if err != nil {
		t.Fatal(err)
	}
	sub.Plan, sub.Matrix = tree, []any{map[string]any{"id": "counter", "replicas": 1}}
	sub.IdempotencyKey, sub.OwnerToken, sub.MaxRetries = "vision", ownerToken, 0
	if _, err := s.Submit(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	e := r.managed(3, "managed-worker-once", "--worker-id", "host-a-1", "--artifacts-root", r.root)
	if cmdtest.Obj(e, "assignmentFailure")["shardStatus"] != "not_tested" || !strings.Contains(e["error"].(string), "vision") {
		t.Fatalf("worker-once %v", e)
	}
}

// The loop works shards until it idles: a shard that did not pass is a
// failure (exit 2), and an interrupt hands the running shard back (exit
// 130).
func TestWorkerLoop(t *testing.T) {
	t.Parallel()
	r := newRig(t, filepath.Join(t.TempDir(), "managed.sqlite"), &sim.Options{})
	r.ready()
	r.submit(cmdtest.FixturePlan(t, "counter-success"), "pass", 2)
	failing := r.submit(cmdtest.FixturePlan(t, "counter-outcome-matrix"), "fail", 1)
	// Idle polls are generous: River hands a job over on its own fetch
	// cadence, which a loaded host stretches.
	m := r.managed(2, "managed-worker-loop", "--worker-id", "host-a", "--artifacts-root", r.root, "--idle-interval", "0.05", "--max-idle-polls", "20")
	if m["processed"] != float64(3) || m["failures"] != float64(1) || m["success"] != false || m["interrupted"] != false ||
		m["errorCode"] != "shards_not_passed" || m["error"] == "" {
		t.Fatalf("loop %v", m)
	}
	commandSchema(t, "managed-worker-loop", m)
	// Without decisions the matrix's explore steps are not tested.
	junit := filepath.Join(t.TempDir(), "junit.xml")
	rep := r.managed(3, "managed-report", "--task-id", failing, "--junit", junit)
	if rep["status"] != "not_tested" || rep["errorCode"] != "task_not_tested" || rep["error"] == "" {
		t.Fatalf("report %v", rep)
	}
	commandSchema(t, "managed-report", rep)
	if suites := readJUnit(t, junit); len(suites) != 1 || len(suites[0].Cases) != 1 || suites[0].Cases[0].Error == nil {
		t.Errorf("junit of a not_tested task: %+v", suites)
	}

	task := r.submit(cmdtest.SlowPlan(t, 120), "slow", 1, "--max-retries", "0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		testwait.Until(t, 30*time.Second, "the shard's replay to hold the device", func() bool { return r.dev.App.LeaseHolder() != "" })
		cancel()
	}()
	m = r.ExpectCtx(ctx, 130, "managed-worker-loop", "managed-worker-loop", "--database", r.db, "--worker-id", "host-a", "--artifacts-root", r.root, "--idle-interval", "0.05")
	if m["interrupted"] != true || m["processed"] != float64(0) || m["errorCode"] != "interrupted" {
		t.Fatalf("interrupted loop %v", m)
	}
	rep = r.managed(4, "managed-report", "--task-id", task)
	if at := onlyAttempt(t, rep); at["status"] != "retryable_failed" || at["failureCategory"] != "worker_stopped" {
		t.Errorf("report %v", rep)
	}
	testwait.Until(t, 15*time.Second, "the device to be released", func() bool { return r.dev.App.LeaseHolder() == "" })
	r.noDeviceLeased()
}

// The doctor decides health and capabilities; labels are key=value.
func TestDeviceProbe(t *testing.T) {
	t.Parallel()
	r := newRig(t, filepath.Join(t.TempDir(), "managed.sqlite"), &sim.Options{})
	caps := func(p map[string]any) string {
		var out []string
		for _, c := range cmdtest.Obj(p, "device")["capabilities"].([]any) {
			out = append(out, c.(string))
		}
		return strings.Join(out, ",")
	}
	// A fresh SoloPi has only auto start off, which verify-run turns on
	// itself: the device is healthy.
	p := r.managed(0, "managed-device-probe", "--label", "rack=r1")
	if d := cmdtest.Obj(p, "device"); p["success"] != true || d["health"] != "healthy" || caps(p) != "adb,agent,managed-worker,verification" ||
		d["apiLevel"] != float64(34) || d["serial"] != r.dev.Serial() || cmdtest.Obj(p, "doctor")["ready"] != true {
		t.Fatalf("probe of a fresh device: %v", p)
	}
	// Accessibility off is a real gap: doctor fails, the device is
	// registered degraded and cannot run agents.
	if err := r.dev.App.SetPermission("accessibility", false); err != nil {
		t.Fatal(err)
	}
	p = r.managed(2, "managed-device-probe", "--label", "rack=r1")
	if d := cmdtest.Obj(p, "device"); p["success"] != false || d["health"] != "degraded" || caps(p) != "adb,verification" ||
		cmdtest.Obj(p, "doctor")["ready"] != false ||
		p["errorCode"] != "solopi_not_ready" || !strings.Contains(p["error"].(string), "registered degraded") {
		t.Fatalf("probe of a device without accessibility: %v", p)
	}
	commandSchema(t, "managed-device-probe", p)
	if err := r.dev.App.SetPermission("accessibility", true); err != nil {
		t.Fatal(err)
	}
	p = r.managed(0, "managed-device-probe", "--capability", "counter", "--label", "rack=r1")
	if d := cmdtest.Obj(p, "device"); p["success"] != true || d["health"] != "healthy" || d["deviceId"] != r.dev.Serial() ||
		caps(p) != "adb,agent,counter,managed-worker,verification" || cmdtest.Obj(d, "labels")["rack"] != "r1" {
		t.Fatalf("probe of a ready device: %v", p)
	}
	for _, label := range []string{"bad", "a=1,a=2", "=x"} {
		args := []string{"managed-device-probe"}
		for _, l := range strings.Split(label, ",") {
			args = append(args, "--label", l)
		}
		if e := r.managed(3, args...); e["errorCode"] != "invalid_label" {
			t.Errorf("label %q: %v", label, e)
		}
	}
	if l := r.managed(0, "managed-device-list"); l["count"] != float64(1) {
		t.Errorf("list %v", l)
	}
	// Another id for a registered serial is refused.
	if e := r.managed(3, "managed-device-probe", "--device-id", "phone-1"); e["errorCode"] != "serial_conflict" {
		t.Errorf("another id: %v", e)
	}
}

// noDeviceLeased fails when the store still leases a device.
func (r *rig) noDeviceLeased() {
	r.t.Helper()
	list := r.managed(0, "managed-device-list")
	for _, d := range list["devices"].([]any) {
		if d := d.(map[string]any); d["leased"] != false {
			r.t.Errorf("device %s is still leased: %v", d["deviceId"], d)
		}
	}
}

// commandSchema checks an object against its command's own schema (a
// failure object is checked against the error schema by the rig).
func commandSchema(t *testing.T, name string, m map[string]any) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.NewSet().ValidateBytes(name, b); err != nil {
		t.Errorf("%s: %v\n%s", name, err, b)
	}
}

// junitSuite is what the tests read of a JUnit testsuite.
type junitSuite struct {
	Name  string `xml:"name,attr"`
	Cases []struct {
		Name    string    `xml:"name,attr"`
		Time    string    `xml:"time,attr"`
		Failure *struct{} `xml:"failure"`
		Error   *struct{} `xml:"error"`
		Skipped *struct{} `xml:"skipped"`
	} `xml:"testcase"`
}

func readJUnit(t *testing.T, path string) []junitSuite {
	t.Helper()
	var doc struct {
		Suites []junitSuite `xml:"testsuite"`
	}
	if err := xml.Unmarshal(cmdtest.Read(t, path), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Suites
}
