package managedcmd

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
)

// managed-report --wait on a task nobody works: --timeout runs out (exit
// 124, task_wait_timeout, the report as it is, the JUnit with the shard
// skipped), Ctrl-C stops the wait (130); --timeout without --wait and an
// existing --junit file are refused before the store is read.
func TestManagedReportWait(t *testing.T) {
	t.Parallel()
	r := newRig(t, filepath.Join(t.TempDir(), "managed.sqlite"), nil)
	task := r.submit(cmdtest.FixturePlan(t, "counter-success"), "waited", 1)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.managed(124, "managed-report", "--task-id", task, "--wait", "--timeout", "0.2", "--poll-interval", "0.05", "--junit", junit)
	if m["errorCode"] != fault.CodeTaskWaitTimeout || m["terminal"] != false || m["status"] != "queued" || m["junit"] != junit {
		t.Fatalf("timed-out wait %v", m)
	}
	commandSchema(t, "managed-report", m)
	if s := readJUnit(t, junit); len(s) != 1 || s[0].Name != "not-run" || len(s[0].Cases) != 1 || s[0].Cases[0].Skipped == nil {
		t.Errorf("junit of a queued task %+v", s)
	}
	if e := r.managed(3, "managed-report", "--task-id", task, "--junit", junit); e["errorCode"] != "output_exists" {
		t.Errorf("an existing --junit file: %v", e)
	}
	if e := r.managed(3, "managed-report", "--task-id", task, "--timeout", "5"); e["errorCode"] != "invalid_option" {
		t.Errorf("--timeout without --wait: %v", e)
	}
	if e := r.managed(3, "managed-report", "--task-id", "task-unknown", "--wait"); e["errorCode"] != fault.CodeTaskNotFound {
		t.Errorf("waiting for an unknown task: %v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	if e := r.ExpectCtx(ctx, 130, "managed-report", "managed-report", "--database", r.db, "--task-id", task, "--wait", "--poll-interval", "0.05"); e["errorCode"] != fault.CodeInterrupted {
		t.Errorf("an interrupted wait: %v", e)
	}
}

// The wait polls on its clock: with a fake clock the timeout is exactly
// the clock's, whatever the machine's load.
func TestWaitTerminalOnItsClock(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "managed.sqlite")
	r := newRig(t, db, nil)
	task := r.submit(cmdtest.FixturePlan(t, "counter-success"), "clocked", 1)
	s, err := managed.Open(context.Background(), db, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	done := make(chan *fault.Error, 1)
	go func() {
		f, err := waitTerminal(context.Background(), s, managedReportOptions{taskID: task, timeout: 10 * time.Second, interval: 3 * time.Second, clock: clk})
		if err != nil {
			t.Error(err)
		}
		done <- f
	}()
	sleeping := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := clk.WaitForSleepers(ctx, 1); err != nil {
			t.Fatal("the wait never slept")
		}
	}
	// Three pauses of the poll interval, then the second left.
	for range 3 {
		sleeping()
		clk.Advance(3 * time.Second)
	}
	sleeping()
	clk.Advance(time.Second)
	if f := <-done; f == nil || f.Code != fault.CodeTaskWaitTimeout || f.Kind != fault.Timeout {
		t.Fatalf("wait ended %v", f)
	}
}
