package verifycmd

// verify-run against a simulated phone running the Counter app: solopi-ai's
// fixtures reach the verdicts and outcome fingerprints solopi-ai itself
// reaches on the same simulator.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify"
)

// Outcome fingerprints solopi-ai computes for its fixtures on the
// simulator's Counter app.
const (
	e2eOutcomeSuccess      = "b98aee168968e31c0129a3b4b6b2c5ebaeedecebc9d6e106d88cb208ce6a79fa"
	e2eOutcomeMatrix       = "61e3753994ad27d965fd556d4dd7aef201ccd686c435390e489577bbe519a91a"
	e2eOutcomeNoDecisions  = "89c20de7008a76c345446859d2e48f02cc88d8ecc2d15b00174edd52ea9186a2"
	verificationTokenRegex = `verification-[0-9a-f]{32}`
)

func scenarioStatuses(r *verify.Report) map[string]string {
	out := map[string]string{}
	for _, s := range r.Scenarios {
		out[s.ScenarioID] = s.Status
	}
	return out
}

// TestVerifyRunGoldenOutcomes runs solopi-ai's three golden runs
// through the simulator, then checks the matrix run's evidence directory:
// solopi-ai's layout, content-addressed evidence, no owner token anywhere,
// and the JUnit report.
func TestVerifyRunGoldenOutcomes(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	dir := t.TempDir()
	matrix := cmdtest.FixturePlan(t, "counter-outcome-matrix")
	decisions := fixture("counter-agent-decisions")
	cases := []struct {
		name      string
		args      []string
		exit      int
		status    string
		outcome   string
		scenarios map[string]string
	}{
		{"counter-success", []string{"--plan", cmdtest.FixturePlan(t, "counter-success")}, 0, verify.Passed, e2eOutcomeSuccess,
			map[string]string{"deterministic-success": verify.Passed}},
		{"matrix", []string{"--plan", matrix, "--agent-decisions", decisions, "--junit", filepath.Join(dir, "junit.xml")}, 2, verify.Failed, e2eOutcomeMatrix,
			map[string]string{"hybrid-success": verify.Passed, "product-failure": verify.Failed, "agent-false-done": verify.Failed,
				"uncovered-checkpoint": verify.NotTested, "cleanup-failure": verify.Failed}},
		{"matrix-no-decisions", []string{"--plan", matrix}, 2, verify.NotTested, e2eOutcomeNoDecisions,
			map[string]string{"hybrid-success": verify.NotTested, "product-failure": verify.NotTested, "agent-false-done": verify.NotTested,
				"uncovered-checkpoint": verify.NotTested, "cleanup-failure": verify.NotTested}},
	}
	outputs := map[string]cmdtest.Result{}
	for _, c := range cases {
		art := filepath.Join(dir, c.name)
		r, m := r0.verifyRun(append(c.args, "--artifacts", art)...)
		outputs[c.name] = r
		if r.Code != c.exit || m["status"] != c.status || m["outcomeFingerprint"] != c.outcome || m["success"] != (c.exit == 0) {
			events, _ := os.ReadFile(filepath.Join(art, "events.jsonl"))
			t.Fatalf("%s: exit %d %s\nstderr %s\nevents %s", c.name, r.Code, r.Stdout, r.Stderr, events)
		}
		rep := cmdtest.ReadVerifyReport(t, filepath.Join(art, "report.json"))
		if got := scenarioStatuses(rep); !mapsEqual(got, c.scenarios) {
			t.Errorf("%s: scenarios %v, want %v", c.name, got, c.scenarios)
		}
		// The HTML report beside report.json, written by the run itself.
		if m["htmlReport"] != filepath.Join(art, "report.html") {
			t.Errorf("%s: htmlReport %v (%v)", c.name, m["htmlReport"], m["htmlReportError"])
		} else if b, err := os.ReadFile(filepath.Join(art, "report.html")); err != nil || !strings.Contains(string(b), rep.RequirementID) {
			t.Errorf("%s: report.html does not name the requirement: %v", c.name, err)
		}
	}
	if r0.Dev.App.AgentGeneration() == 0 {
		t.Error("SoloPi's generation did not move: the refused-input test's check would prove nothing")
	}
	art := filepath.Join(dir, "matrix")
	checkVerifyLayout(t, art)
	checkEvidenceAddressed(t, art)
	tok := regexp.MustCompile(verificationTokenRegex)
	cmdtest.EachFileUnder(t, art, func(path string, b []byte) {
		if tok.Match(b) || strings.Contains(string(b), `"ownerToken"`) {
			t.Errorf("%s holds an owner token", path)
		}
	})
	for name, r := range outputs {
		if tok.Match(r.Stdout) || tok.Match(r.Stderr) {
			t.Errorf("%s: the output holds an owner token", name)
		}
	}
	checkVerifyJUnit(t, filepath.Join(dir, "junit.xml"))
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkVerifyLayout checks solopi-ai's evidence layout: plan, events and
// report at the top; each deterministic segment's compiled case, import
// receipt, run response and replay files; each explore segment that ran
// its transcript and timeline.
func checkVerifyLayout(t *testing.T, art string) {
	t.Helper()
	for _, f := range []string{"plan.json", "events.jsonl", "report.json"} {
		if _, err := os.Stat(filepath.Join(art, f)); err != nil {
			t.Error(err)
		}
	}
	rep := cmdtest.ReadVerifyReport(t, filepath.Join(art, "report.json"))
	fixed, dynamic := 0, 0
	for _, s := range rep.Scenarios {
		for _, seg := range s.Segments {
			if len(seg.EvidenceRefs) == 0 {
				continue // not run
			}
			sd := filepath.Join(art, "segments", verify.EvidenceDirName(seg.SegmentID))
			want := []string{"compiled-case.json", "import-receipt.json", "run-response.json", "replay/result.json", "replay/screen.png", "replay/logcat.txt", "replay/manifest.json"}
			if seg.Route == verify.RouteDynamic {
				want = []string{"agent-transcript.json"}
				if seg.AgentDone {
					want = append(want, "agent-timeline.json")
				}
				dynamic++
			} else {
				fixed++
			}
			for _, f := range want {
				if st, err := os.Stat(filepath.Join(sd, f)); err != nil || st.Size() == 0 {
					t.Errorf("segment %s: %s missing (%v)", seg.SegmentID, f, err)
				}
			}
		}
	}
	if fixed == 0 || dynamic == 0 {
		t.Errorf("%d deterministic and %d dynamic segments ran", fixed, dynamic)
	}
	events, err := os.ReadFile(filepath.Join(art, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(events)), "\n")
	if !strings.Contains(lines[0], `"type":"verification_started"`) || !strings.Contains(lines[len(lines)-1], `"type":"verification_finished"`) {
		t.Errorf("events.jsonl: first %s, last %s", lines[0], lines[len(lines)-1])
	}
}

// checkEvidenceAddressed checks that every file evidence is named by its
// content: evidence-<sha256[:20]> of the file's bytes, each ID once.
func checkEvidenceAddressed(t *testing.T, art string) {
	t.Helper()
	rep := cmdtest.ReadVerifyReport(t, filepath.Join(art, "report.json"))
	seen := map[string]bool{}
	files := 0
	for _, e := range rep.Evidence {
		if seen[e.ID] {
			t.Errorf("evidence %s listed twice", e.ID)
		}
		seen[e.ID] = true
		if e.Path == "" {
			continue
		}
		files++
		b, err := os.ReadFile(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		if e.SHA256 != h || e.ID != "evidence-"+h[:20] || e.Size == nil || *e.Size != int64(len(b)) {
			t.Errorf("evidence %s (%s) is not addressed by its content %s", e.ID, e.Path, h)
		}
	}
	if files < 10 {
		t.Errorf("only %d file evidence entries", files)
	}
}

// checkVerifyJUnit: one suite per scenario, one testcase per checkpoint
// (plus cleanup), a failed checkpoint's message naming its oracle, the
// expected and the actual value.
func checkVerifyJUnit(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	suites := map[string]map[string]string{}
	for _, s := range doc.Suites {
		suites[s.Name] = map[string]string{}
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				suites[s.Name][c.Name] = "failed: " + c.Failure.Message
			case c.Skipped != nil:
				suites[s.Name][c.Name] = "skipped"
			default:
				suites[s.Name][c.Name] = "passed"
			}
		}
	}
	if len(suites) != 5 {
		t.Fatalf("%d suites: %v", len(suites), suites)
	}
	want := map[string]map[string]string{
		"hybrid-success":       {"hybrid-value-one": "passed", "cleanup": "passed"},
		"uncovered-checkpoint": {"cleanup": "passed"},
		"cleanup-failure":      {"test-value-one": "passed", "cleanup": "failed"},
	}
	for s, cases := range want {
		for c, st := range cases {
			if got := suites[s][c]; !strings.HasPrefix(got, st) {
				t.Errorf("%s/%s = %q, want %s", s, c, got, st)
			}
		}
	}
	msg := suites["agent-false-done"]["false-done-value-one"]
	for _, part := range []string{"oracle_mismatch", "ui oracle", "counter_value", `"1"`, `actual "0"`} {
		if !strings.Contains(msg, part) {
			t.Errorf("the false-done failure %q does not name %s", msg, part)
		}
	}
}

// Bad inputs are refused with exit 3 and a stable errorCode before the
// phone is touched: SoloPi is never even started on the device.
func TestVerifyRunRefusesBadInputs(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	dir := t.TempDir()
	plan := cmdtest.FixturePlan(t, "counter-outcome-matrix")
	visionPlan := visionOraclePlan(t)
	decisions := fixture("counter-agent-decisions")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	planText, _ := os.ReadFile(plan)
	changed := strings.Replace(string(planText), `"expected": "2"`, `"expected": "3"`, 1)
	if changed == string(planText) {
		t.Fatal("the plan was not tampered with")
	}
	tampered := write("tampered.json", changed)
	exists := filepath.Join(dir, "exists")
	if err := os.Mkdir(exists, 0o755); err != nil {
		t.Fatal(err)
	}
	art := func() string { return filepath.Join(t.TempDir(), "run") }
	for _, c := range []struct {
		code string
		args []string
	}{
		{"invalid_json", []string{"--plan", write("garbage.json", "{not json"), "--artifacts", art()}},
		{"fingerprint_mismatch", []string{"--plan", tampered, "--artifacts", art()}},
		{"artifacts_exist", []string{"--plan", plan, "--artifacts", exists}},
		{"invalid_decisions", []string{"--plan", plan, "--artifacts", art(), "--agent-decisions", write("bad.json", `{"hybrid-success":[]}`)}},
		{"provider_not_supported", []string{"--plan", plan, "--artifacts", art(), "--decision-provider", "on-device", "--model-package", "m.zip"}},
		{"invalid_provider_options", []string{"--plan", plan, "--artifacts", art(), "--public-key", "k.pem"}},
		{"invalid_provider_options", []string{"--plan", plan, "--artifacts", art(), "--decision-provider", "cloud"}},
		{"provider_conflict", []string{"--plan", plan, "--artifacts", art(), "--decision-provider", "cloud", "--cloud-endpoint", "http://127.0.0.1:1/d", "--agent-decisions", decisions}},
		{"invalid_option", []string{"--plan", plan, "--artifacts", art(), "--console"}},
		{"model_config_invalid", []string{"--plan", plan, "--artifacts", art(), "--decision-provider", "vision", "--no-calibration-cache"}},
		// A plan with vision oracles needs the model whatever the provider.
		{"model_config_invalid", []string{"--plan", visionPlan, "--artifacts", art(), "--no-calibration-cache"}},
	} {
		r, m := r0.verifyRun(c.args...)
		if r.Code != 3 || m["errorCode"] != c.code {
			t.Errorf("%s: exit %d %s", c.code, r.Code, r.Stdout)
		}
	}
	if g := r0.Dev.App.AgentGeneration(); g != 0 {
		t.Errorf("a refused run started SoloPi (generation %d)", g)
	}
}

// An interrupt while an explore step waits for its decision: the Agent session
// is cancelled exactly (the device is free again), the partial report is
// marked interrupted, exit 130.
func TestVerifyRunInterruptDuringExplore(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	var once sync.Once
	asked := make(chan struct{})
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body read to its end lets the server see the client go.
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(func() { close(asked) })
		<-r.Context().Done() // the decision never comes
	}))
	t.Cleanup(cloud.Close)
	plan := cmdtest.FixturePlan(t, "counter-outcome-matrix")
	art := filepath.Join(t.TempDir(), "run")
	dev := r0.Dev
	var holder string
	ready := func() bool {
		select {
		case <-asked:
			holder = dev.App.LeaseHolder()
			return true
		default:
			return false
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		testwait.Until(t, 60*time.Second, "the decision to be asked", ready)
		cancel()
	}()
	res := r0.RunCtx(ctx, "verify-run", "--plan", plan, "--artifacts", art, "--decision-provider", "cloud", "--cloud-endpoint", cloud.URL)
	schematest.Validate(t, "verify-run", res.Stdout)
	code, m := res.Code, res.Object(t)
	if code != 130 {
		t.Fatalf("exit %d: %v", code, m)
	}
	if holder == "" {
		t.Error("no Agent session held the device while the decision was pending")
	}
	rep := cmdtest.ReadVerifyReport(t, m["report"].(string))
	explore := rep.Scenarios[0].Segments[1]
	cmdtest.CheckInterruptedReport(t, m, explore.SegmentID)
	if dev.App.LeaseHolder() != "" {
		t.Errorf("the device is still held by %s", dev.App.LeaseHolder())
	}
	b, err := os.ReadFile(filepath.Join(art, "segments", verify.EvidenceDirName(explore.SegmentID), "agent-transcript.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	last := tr.Events[len(tr.Events)-1]
	result, _ := last["result"].(map[string]any)
	if last["type"] != "cancel" || result["state"] != "cancelled" {
		t.Errorf("the transcript ends with %v, want the session's exact cancel", last)
	}
	for _, s := range rep.Scenarios[1:] {
		for _, seg := range s.Segments {
			if len(seg.EvidenceRefs) > 0 {
				t.Errorf("segment %s ran after the interrupt", seg.SegmentID)
			}
		}
	}
}

// The vision provider drives the matrix's explore steps on the simulator:
// the hybrid scenario passes on the planner's click and confirmed done,
// every decision carries its model receipt, the live console is announced
// and named in the output, and the API key is nowhere.
func TestVerifyRunVisionProvider(t *testing.T) {
	t.Parallel()
	// Agent segments: SoloPi waits 5 s of device time for a controllable
	// root while the host brings the app back, so the device's clock must
	// not outrun a loaded host: half the package's scale leaves that 0.5 s
	// (it passed 12 runs at 20 with six copies and two busy loops on two
	// cores; 10 keeps a margin).
	r0 := newRig(t, sim.Options{TimeScale: verifyTimeScale / 2})
	r0.vision(fakemodel.Options{Coords: fakemodel.CoordsRelative})
	art := filepath.Join(t.TempDir(), "run")
	r, m := r0.verifyRun("--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"), "--artifacts", art, "--decision-provider", "vision",
		"--no-calibration-cache", "--console")
	if r.Code != 2 || m["status"] != verify.Failed {
		t.Fatalf("exit %d %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	rep := cmdtest.ReadVerifyReport(t, m["report"].(string))
	want := map[string]string{"hybrid-success": verify.Passed, "product-failure": verify.Failed, "agent-false-done": verify.Passed,
		"uncovered-checkpoint": verify.Passed, "cleanup-failure": verify.Failed}
	if got := scenarioStatuses(rep); !mapsEqual(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	hybrid := rep.Scenarios[0]
	if cp := hybrid.Checkpoints[0]; cp.Status != verify.Passed || cp.Reason != verify.ReasonMatched {
		t.Errorf("hybrid checkpoint %s/%s", cp.Status, cp.Reason)
	}
	b, err := os.ReadFile(filepath.Join(art, "segments", verify.EvidenceDirName(hybrid.Segments[1].SegmentID), "agent-transcript.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Events []struct {
			Type     string         `json:"type"`
			Decision map[string]any `json:"decision"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range tr.Events {
		if e.Decision == nil {
			continue
		}
		kinds = append(kinds, e.Type)
		if rc, _ := e.Decision["modelReceipt"].(map[string]any); rc["provider"] != "vision" {
			t.Errorf("a %s decision without the planner's receipt: %v", e.Type, e.Decision)
		}
	}
	if strings.Join(kinds, ",") != "act,done" {
		t.Errorf("planner decisions %v, want act then done", kinds)
	}
	url, _ := m["console"].(string)
	if url == "" || !strings.Contains(string(r.Stderr), `{"console":{"url":"`+url+`"}}`) {
		t.Errorf("console %q not announced on stderr: %s", url, r.Stderr)
	}
	cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{r.Stdout, r.Stderr}, art)
}

// A planner that claims done at once, confirmed by a gullible reviewer, is
// still judged failed: the UI oracle reads the final observation.
func TestVerifyRunVisionFalseDone(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	r0.vision(fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: fakemodel.QuirkFalseFinish, Review: fakemodel.ReviewApprove})
	r, m := r0.verifyRun("--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"), "--artifacts", filepath.Join(t.TempDir(), "run"),
		"--decision-provider", "vision", "--no-calibration-cache")
	if r.Code != 2 {
		t.Fatalf("exit %d %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	hybrid := cmdtest.ReadVerifyReport(t, m["report"].(string)).Scenarios[0]
	seg, cp := hybrid.Segments[1], hybrid.Checkpoints[0]
	if seg.State != verify.StateDone || !seg.AgentDone || hybrid.Status != verify.Failed || cp.Status != verify.Failed || cp.Reason != verify.ReasonOracleMismatch {
		t.Errorf("segment %s (done %v), scenario %s, checkpoint %s/%s: a false done must fail the oracle", seg.State, seg.AgentDone, hybrid.Status, cp.Status, cp.Reason)
	}
}

func visionOraclePlan(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cmdtest.Fixtures(), "..", "vision-requirement.json"))
	if err != nil {
		t.Fatal(err)
	}
	return cmdtest.CompilePlan(t, b)
}

// A plan with vision oracles runs the preflight and judges them with the
// isolated review of each replay's screenshot, whatever the provider;
// they never override the UI oracle.
func TestVerifyRunVisionOracle(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	r0.vision(fakemodel.Options{Coords: fakemodel.CoordsRelative})
	r, m := r0.verifyRun("--plan", visionOraclePlan(t), "--artifacts", filepath.Join(t.TempDir(), "run"), "--no-calibration-cache")
	if r.Code != 2 || m["status"] != verify.Failed {
		t.Fatalf("exit %d %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	want := map[string][3]string{
		"ui-one":    {verify.Passed, verify.ReasonCompiledOraclePassed, ""},
		"looks-one": {verify.Passed, verify.ReasonMatched, "vision"},
		"looks-two": {verify.Failed, verify.ReasonOracleMismatch, "vision"},
		"unsure":    {verify.NotTested, verify.ReasonVisionUncertain, "vision"},
	}
	for _, c := range cmdtest.ReadVerifyReport(t, m["report"].(string)).Scenarios[0].Checkpoints {
		if w := want[c.CheckpointID]; c.Status != w[0] || c.Reason != w[1] || c.Judge != w[2] {
			t.Errorf("%s = %s/%s judge %q, want %v", c.CheckpointID, c.Status, c.Reason, c.Judge, w)
		}
	}
}
