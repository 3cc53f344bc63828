package main

// A suite across the phones of `solopi sim serve --devices 4`, run by the
// built binary: one JUnit with a testsuite per phone, the index and batch
// reports, `solopi report ROOT`; and two solopi processes given the same
// phone, which never overlap on it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

func TestE2ESuiteAcrossFourPhones(t *testing.T) {
	t.Parallel()
	env := append(simServe(t, 4, 50), "XDG_RUNTIME_DIR="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	dir := t.TempDir()
	for i := range 8 {
		name := fmt.Sprintf("case-%02d", i+1)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(cmdtest.Renamed(name)(cmdtest.DemoCase(t))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(t.TempDir(), "out")
	junit := filepath.Join(root, "junit.xml")
	r := runBinary(t, env, "run-batch", "--dir", dir, "--devices", "all", "--artifacts", root, "--junit", junit, "--ack-timeout", "10", "--poll-interval", "0.05")
	if r.code != 0 {
		t.Fatalf("run-batch exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "run-batch", r.stdout)
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || len(doc.Suites) != 4 || doc.Tests != 8 {
		t.Fatalf("junit: %d suites, %d tests (%v)", len(doc.Suites), doc.Tests, err)
	}
	// run-batch --help's own example.
	rep := runBinary(t, env, "report", root)
	if rep.code != 0 {
		t.Fatalf("report exit %d: %s", rep.code, rep.stdout)
	}
	schematest.Validate(t, "report", rep.stdout)
	m := decodeObject(t, rep)
	if m["kind"] != "index" || m["report"] != filepath.Join(root, "report.html") {
		t.Fatalf("report: %s", rep.stdout)
	}
}

// Two processes given the same phone: the second fails at once with
// device_busy naming the first's pid, or waits for it with --device-wait
// and starts its replay only after the first one's ended.
func TestE2ETwoProcessesOnOnePhoneNeverOverlap(t *testing.T) {
	t.Parallel()
	simEnv, control := simServeControl(t)
	env := append(simEnv, "XDG_RUNTIME_DIR="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	slow, err := os.ReadFile(cmdtest.SlowCase(t, 3600000))
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(long, []byte(cmdtest.Renamed("long")(string(slow))), 0o600); err != nil {
		t.Fatal(err)
	}
	quick := filepath.Join(t.TempDir(), "quick.json")
	if err := os.WriteFile(quick, []byte(cmdtest.Renamed("quick")(cmdtest.DemoCase(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	// The first one waits for the phone too: the test's own probes below
	// hold it for a moment.
	first := exec.Command(binPath, "--device-wait", "60", "run", "--file", long, "--ack-timeout", "10", "--poll-interval", "0.05")
	first.Env = append(os.Environ(), env...)
	var firstOut bytes.Buffer
	first.Stdout = &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	var busy map[string]any
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	testwait.Until(t, 60*time.Second, "the first process to hold the phone", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("the first process ended (%v): %s", err, firstOut.Bytes())
		default:
		}
		r := runBinary(t, env, "status")
		if r.code != 2 {
			return false
		}
		busy = decodeObject(t, r)
		return busy["errorCode"] == "device_busy"
	})
	if h, _ := busy["holder"].(map[string]any); h == nil || h["pid"] != float64(first.Process.Pid) || !strings.Contains(fmt.Sprint(h["command"]), "run --file "+long) {
		t.Fatalf("busy: %v", busy)
	}
	second := exec.Command(binPath, "--device-wait", "120", "run", "--file", quick, "--ack-timeout", "10", "--poll-interval", "0.05")
	second.Env = append(os.Environ(), env...)
	var secondOut bytes.Buffer
	second.Stdout = &secondOut
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	// The first one's replay is under way: interrupt it (it cancels
	// exactly its run), and the second one takes the phone.
	testwait.Until(t, 60*time.Second, "the first replay to bring the Counter app up", func() bool {
		return strings.Contains(foreground(t, control), "com.example.counter")
	})
	if err := first.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Fatalf("the interrupted run exited 0: %s", firstOut.Bytes())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("the waiting run: %v %s", err, secondOut.Bytes())
	}
	var a, b map[string]any
	if json.Unmarshal(firstOut.Bytes(), &a) != nil || json.Unmarshal(secondOut.Bytes(), &b) != nil {
		t.Fatalf("outputs %s / %s", firstOut.Bytes(), secondOut.Bytes())
	}
	end, _ := a["finishedAt"].(float64)
	start, _ := b["startedAt"].(float64)
	if a["errorCode"] != "interrupted" || b["success"] != true || end == 0 || start < end {
		t.Fatalf("first %v (finished %v), second %v (started %v)", a["errorCode"], end, b["success"], start)
	}
}

// simServeControl runs `solopi sim serve` with one phone and returns the
// environment that points the binary at it and its control URL.
func simServeControl(t *testing.T) ([]string, string) {
	t.Helper()
	cmd := exec.Command(binPath, "sim", "serve", "--devices", "1", "--no-adbd", "--time-scale", "50")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	var out struct {
		AdbServer struct{ Port int }   `json:"adbServer"`
		Control   struct{ URL string } `json:"control"`
	}
	if err != nil || json.Unmarshal(line, &out) != nil || out.Control.URL == "" {
		t.Fatalf("sim serve printed %q (%v)", line, err)
	}
	return []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", out.AdbServer.Port), "ANDROID_SERIAL="}, out.Control.URL
}

// foreground is the simulated phone's foreground activity.
func foreground(t *testing.T, control string) string {
	t.Helper()
	resp, err := http.Get(control + "/v1/devices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Devices []struct{ Foreground string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Devices) != 1 {
		t.Fatalf("control: %v", err)
	}
	return out.Devices[0].Foreground
}
