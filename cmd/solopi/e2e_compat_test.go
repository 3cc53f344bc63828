package main

// End-to-end tests of solopi-ai compatibility and of the hardening items:
// the built binary against a simulated farm, faults injected through the
// simulator's control endpoint, the solopi-ai fields and exit codes
// asserted on the real stdout.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/sim"
)

// compatRig is an e2eRig plus the simulator's control endpoint.
type compatRig struct {
	*e2eRig
	control string
}

func newCompatRig(t *testing.T, o sim.FarmOptions) *compatRig {
	t.Helper()
	r := newE2ERig(t, o)
	srv := httptest.NewServer(r.farm.ControlHandler())
	t.Cleanup(srv.Close)
	return &compatRig{e2eRig: r, control: srv.URL}
}

// fault injects one fault into the rig's device through the control
// endpoint, as a user of `solopi sim serve` would.
func (r *compatRig) fault(name, body string) {
	r.t.Helper()
	code, out := postJSON(r.t, r.control+"/v1/devices/"+r.dev.Serial()+"/"+name, body)
	if code != 200 {
		r.t.Fatalf("fault %s %s: HTTP %d %s", name, body, code, out)
	}
}

// postJSON posts body and returns the HTTP status and the answer.
func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// writeFile writes a file under a fresh temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Hardening 7 and 8: a negative step index and broken case JSON are local
// input errors (exit 3) with stable codes, never a silent append or a
// guessed meaning.
func TestE2ECaseFileInputErrors(t *testing.T) {
	r := newCompatRig(t, sim.FarmOptions{})
	file := writeCase(t, nil)
	step := writeFile(t, "step.json", []byte(`{"operationMethod":{"actionEnum":"BACK"}}`))
	out := filepath.Join(t.TempDir(), "new.json")
	for _, at := range []string{"-1", "-7"} {
		m := r.expect(3, "case-step-add", "--file", file, "--step-file", step, "--output", out, "--at", at)
		if e2eStr(m, "errorCode") != "step_index_out_of_range" {
			t.Errorf("--at %s: %v", at, m)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused step-add wrote its output")
	}
	m := r.expect(0, "case-step-add", "--file", file, "--step-file", step, "--output", out)
	if e2eNum(m, "affectedIndex") != 7 {
		t.Errorf("append without --at: %v", m)
	}

	// Latin-1 in a case name: refused with the byte offset, by every
	// command that reads a case file (before any device contact).
	latin1 := writeFile(t, "latin1.json", []byte(strings.Replace(string(demoCase), `"counter-smoke"`, "\"caf\xe9\"", 1)))
	for _, args := range [][]string{{"case-validate", "--file", latin1}, {"case-import", "--file", latin1, "--replace"}} {
		m := r.expect(3, args...)
		if e2eStr(m, "errorCode") != "invalid_utf8" || m["offset"] == nil {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	dup := writeFile(t, "dup.json", []byte(strings.Replace(string(demoCase), `"priority": 1,`, `"priority": 1, "priority": 2,`, 1)))
	for _, args := range [][]string{{"case-validate", "--file", dup}, {"case-import", "--file", dup, "--replace"}, {"case-step-list", "--file", dup}} {
		m := r.expect(3, args...)
		if e2eStr(m, "errorCode") != "duplicate_key" || e2eStr(m, "key") != "priority" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	// Nothing reached the device: the case list is still empty.
	if m := r.expect(0, "cases"); len(m["cases"].([]any)) != 0 {
		t.Errorf("a refused import reached the device: %v", m)
	}
}

// Compatibility 6: exit codes solopi-ai scripts branch on.
func TestE2ECompatExitCodes(t *testing.T) {
	r := newCompatRig(t, sim.FarmOptions{})
	// perf-analyze of a directory without CSV files: 3.
	empty := t.TempDir()
	m := r.expect(3, "perf-analyze", "--input", empty)
	if e2eStr(m, "errorCode") != "no_csv_files" {
		t.Errorf("perf-analyze: %v", m)
	}
	// config-get/config-set of a key SoloPi does not have: 2, as the
	// device's own answer.
	for _, args := range [][]string{{"config-get", "--key", "KEY_NOPE"}, {"config-set", "--key", "KEY_NOPE", "--value", "1"}} {
		m := r.expect(2, args...)
		if e2eStr(m, "errorCode") != "unsupported_config" || e2eStr(m, "key") != "KEY_NOPE" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	// A refused key carries the config object next to our fields.
	m = r.expect(2, "config-set", "--key", "KEY_CONTROL_PORT", "--value", "23343")
	if cfg := e2eObj(m, "config"); e2eStr(cfg, "key") != "KEY_CONTROL_PORT" || cfg["writable"] != false {
		t.Errorf("config-set refusal: %v", m)
	}
	// No adb server and no adb executable: 3.
	res := runBinary(t, []string{"ANDROID_ADB_SERVER_PORT=1", "PATH=" + t.TempDir()}, "doctor")
	if res.code != 3 || !strings.Contains(string(res.stdout), `"errorCode":"adb_not_found"`) {
		t.Errorf("no adb: exit %d %s", res.code, res.stdout)
	}
}
