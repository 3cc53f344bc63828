package casefile

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/casefile/paramcrypt"
)

func TestFingerprintVectors(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	in := FingerprintInput{
		ID: i64(7), CaseName: Str("smoke"), CaseDesc: Str("desc"),
		TargetAppPackage: Str("com.example.target"), TargetAppLabel: Str("Target"),
		RecordMode: Str("local"), AdvanceSettings: Str("{}"), OperationLog: Str(`{"steps":[]}`),
		Priority: i64(2), GmtCreate: i64(10), GmtModify: i64(20),
	}
	if got, want := Fingerprint(in), "34a7592a2230b2021d65c156a426806ca435035d685aca881855894626e999b5"; got != want {
		t.Errorf("vector 1: got %s, want %s", got, want)
	}
	in.CaseDesc = nil
	in.AdvanceSettings = Str("")
	if got, want := Fingerprint(in), "ee5e7aaa9668daab54d7f019ea06aa3a416aebdcf22b5c5e0c4891a0391c9315"; got != want {
		t.Errorf("vector 2: got %s, want %s", got, want)
	}
}

func TestSnapshotCaseMatchesVector(t *testing.T) {
	t.Parallel()
	id := int64(7)
	c := &Case{ID: &id, CaseName: "smoke", CaseDesc: "desc", TargetAppPackage: "com.example.target",
		TargetAppLabel: "Target", RecordMode: "local", AdvanceSettings: "{}", Priority: 2, GmtCreate: 10, GmtModify: 20,
		Steps: []Step{}}
	snap, err := Snapshot(c, paramcrypt.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if snap.OperationLog != `{"steps":[]}` {
		t.Errorf("operationLog = %s", snap.OperationLog)
	}
	if snap.CaseFingerprint != "34a7592a2230b2021d65c156a426806ca435035d685aca881855894626e999b5" {
		t.Errorf("fingerprint = %s", snap.CaseFingerprint)
	}
	b, _ := json.Marshal(snap)
	if !strings.HasPrefix(string(b), `{"id":7,"caseName":"smoke","caseDesc":"desc","targetAppPackage"`) {
		t.Errorf("field order: %s", b)
	}
}

// The snapshot of the upstream sample equals its stored operationLog with
// every param decrypted, encrypt:false and the INPUT params key-sorted.
func TestSnapshotOperationLogSample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/settings-search-wlan.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ OperationLog string }
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`"encrypt":true`, `"encrypt":false`,
		"0BF1ED67E2091631E9BA056D4A8BBB393506827F26051F79A15F03459CE000E6", "0.5138889,0.5138889",
		`{"text":"70E64B6009261E23085996D7F3785F4C","localClickPos":"A3B7B9427C4ABA1306B67EE0A2B330FC"}`, `{"localClickPos":"0.5,0.5","text":"WLAN"}`,
		`{"assertMode":"734004355480DBF845632F90FC02B32D","assertInputContent":"70E64B6009261E23085996D7F3785F4C"}`, `{"assertInputContent":"WLAN","assertMode":"assert_contain"}`,
		"DF4287CE5CF1D64E46B63D442C8F898E", "2000",
		"95305271AA1362E46505FFC3934F7D86", "after_search",
	).Replace(raw.OperationLog)
	c, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SnapshotOperationLog(c.Steps, paramcrypt.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("snapshot mismatch\n got: %s\nwant: %s", got, want)
	}
	// With an empty seed the device does not decrypt: values stay raw, the
	// flag still becomes false.
	got, _ = SnapshotOperationLog(c.Steps, "")
	if !strings.Contains(got, `"text":"DF4287CE5CF1D64E46B63D442C8F898E"`) || strings.Contains(got, `"encrypt":true`) {
		t.Errorf("empty-seed snapshot: %s", got)
	}
}

func TestSnapshotOperationLogRules(t *testing.T) {
	t.Parallel()
	steps := []Step{{
		OperationID: "op", StepID: "s<1>&", OperationIndex: 3,
		Method: Method{ActionEnum: "click", SafeEncrypt: Bool(false), Params: map[string]*string{
			"z": Str("plain"), "a": nil, "m": Str("A3B7B9427C4ABA1306B67EE0A2B330FC"),
		}},
		Node: &Node{Text: Str("a\"b\\c\n\u2028\u0085/é"), Depth: 2, NodeBound: &Rect{Left: 5, Right: 5, Top: 1, Bottom: 9},
			AssistantNodes: json.RawMessage(`[{"text":"t","zzz":1,"className":null}]`),
			Unknown:        map[string]json.RawMessage{"bogus": json.RawMessage(`1`)}},
		Unknown: map[string]json.RawMessage{"bogus": json.RawMessage(`1`)},
	}}
	got, err := SnapshotOperationLog(steps, paramcrypt.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"steps":[{"operationId":"op","operationIndex":3,"operationMethod":{"actionEnum":"CLICK","encrypt":false,` +
		`"operationParam":{"m":"0.5,0.5","z":"plain"}},"operationNode":{"assistantNodes":[{"parentHeight":0,"text":"t"}],` +
		`"depth":2,"extra":{},"nodeBound":{"bottom":9,"empty":true,"left":5,"right":5,"top":1},` +
		`"text":"a\"b\\c\n\u2028\u0085/é"},"stepId":"s<1>&"}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
