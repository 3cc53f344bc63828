package main

// The farm tests: `solopi sim serve` devices, several managed-worker-loop
// processes of the built binary sharing one store, shards of
// counter-success, and workers SIGKILLed at random moments (while they run
// shards) and restarted. Every shard must end terminal exactly once with
// the verdict a single-device verify-run reaches, no device may stay
// leased, and no task's event sequence may have a gap.

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for the checks
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", for the checks

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/internal/testwait"
)

// farmSpec sizes a farm test.
type farmSpec struct {
	database, driver string // the store and the database/sql driver the checks read it with
	devices, workers int
	concurrency      int // shards per worker process at once
	tasks, replicas  int // shards = tasks × replicas (at most 64 per task)
	kills            int // SIGKILLs, each followed by a restart
}

// simServe runs `solopi sim serve` and returns the environment that points
// the binary at its adb server.
func simServe(t *testing.T, devices int, scale float64) []string {
	t.Helper()
	cmd := exec.Command(binPath, "sim", "serve", "--devices", strconv.Itoa(devices), "--no-adbd",
		"--time-scale", strconv.FormatFloat(scale, 'f', -1, 64))
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
		AdbServer struct{ Port int } `json:"adbServer"`
		Devices   []any              `json:"devices"`
	}
	if err != nil || json.Unmarshal(line, &out) != nil || len(out.Devices) != devices {
		t.Fatalf("sim serve printed %q (%v)", line, err)
	}
	return []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", out.AdbServer.Port), "ANDROID_SERIAL="}
}

// farmDB reads the store the workers share, for progress and invariants.
type farmDB struct {
	t      *testing.T
	db     *sql.DB
	driver string
}

func openFarmDB(t *testing.T, driver, database string) *farmDB {
	t.Helper()
	db, err := sql.Open(driver, database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &farmDB{t: t, db: db, driver: driver}
}

func (d *farmDB) count(query string, args ...any) int {
	d.t.Helper()
	var n int
	if err := d.db.QueryRow(query, args...).Scan(&n); err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// liveAttempts maps each worker that holds a live attempt to those
// attempts.
func (d *farmDB) liveAttempts() map[string][]string {
	d.t.Helper()
	rows, err := d.db.Query(`SELECT worker_id, attempt_id FROM managed_attempts WHERE status IN ('leased', 'running')`)
	if err != nil {
		d.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var w, a string
		if err := rows.Scan(&w, &a); err != nil {
			d.t.Fatal(err)
		}
		out[w] = append(out[w], a)
	}
	return out
}

// attemptStatus is an attempt's status.
func (d *farmDB) attemptStatus(id string) string {
	d.t.Helper()
	var st string
	if err := d.db.QueryRow(`SELECT status FROM managed_attempts WHERE attempt_id = `+d.param(1), id).Scan(&st); err != nil {
		d.t.Fatalf("attempt %s: %v", id, err)
	}
	return st
}

// param is the driver's placeholder n.
func (d *farmDB) param(n int) string {
	if d.driver == "pgx" {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// dump logs the store's state, for a farm that did not finish.
func (d *farmDB) dump() {
	d.t.Helper()
	for _, q := range []string{
		`SELECT status, COUNT(*) FROM managed_shards GROUP BY status`,
		`SELECT status || '/' || COALESCE(failure_category, '-'), COUNT(*) FROM managed_attempts GROUP BY 1`,
		`SELECT device_id || ' ' || health || ' lease=' || COALESCE(lease_id, '-') || ' failures=' || consecutive_failures || ' circuit=' || circuit_open_until_ms, 1 FROM managed_devices`,
		`SELECT kind || ' ' || state, COUNT(*) FROM river_job GROUP BY 1`,
		`SELECT s.shard_id || ' ' || s.status || ' job=' || COALESCE(CAST(s.river_job_id AS TEXT), '-') || ' next=' || COALESCE(CAST(s.next_attempt_ms AS TEXT), '-'), 1 FROM managed_shards s WHERE s.status NOT IN ('passed') LIMIT 10`,
	} {
		rows, err := d.db.Query(q)
		if err != nil {
			d.t.Logf("%s: %v", q, err)
			continue
		}
		for rows.Next() {
			var k string
			var n int
			_ = rows.Scan(&k, &n)
			d.t.Logf("  %s: %d", k, n)
		}
		rows.Close()
	}
}

const terminalShards = `SELECT COUNT(*) FROM managed_shards WHERE status IN ('passed', 'failed', 'not_tested', 'cancelled')`

// runFarm runs the farm test of spec.
func runFarm(t *testing.T, spec farmSpec) {
	start := time.Now()
	env := simServe(t, spec.devices, 25)
	m := newManagedFarm(t, env, spec.database)
	db := openFarmDB(t, spec.driver, spec.database)
	for i := range spec.devices {
		m.ready(fmt.Sprintf("sim-%04d", i+1))
	}
	plan := cmdtest.FixturePlan(t, "counter-success")
	single := filepath.Join(t.TempDir(), "single")
	if r, _ := m.cmd("--serial", "sim-0001", "verify-run", "--plan", plan, "--artifacts", single); r.code != 0 {
		t.Fatalf("the single-device verify-run: exit %d %s", r.code, r.stdout)
	}
	want := cmdtest.ReadVerifyReport(t, filepath.Join(single, "report.json"))
	var tasks []string
	for i := range spec.tasks {
		// A short lease: a killed worker's shards are recovered in seconds.
		tasks = append(tasks, m.submit(plan, fmt.Sprintf("farm-%d", i), spec.replicas, "--lease-duration-ms", "4000", "--max-retries", "3"))
	}
	total := spec.tasks * spec.replicas
	setup := time.Since(start)

	workerFlags := []string{"--concurrency", strconv.Itoa(spec.concurrency), "--probe-interval", "600"}
	workers := make([]*workerProc, spec.workers)
	id := func(i int) string { return fmt.Sprintf("w%d", i+1) }
	for i := range workers {
		workers[i] = m.startWorker(id(i), workerFlags...)
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d: %d shards, %d devices, %d workers × %d", seed, total, spec.devices, spec.workers, spec.concurrency)
	deadline := 3 * time.Minute
	// interrupted are the attempts each counted kill interrupted: still
	// live after their worker died, so only the lease's expiry can end
	// them. A kill that landed just after its worker's attempts reported
	// their verdicts interrupted none; it is not counted and another kill
	// follows, so spec.kills kills really interrupt running shards. dead
	// are the interrupted attempts: live until their lease expires, under
	// the worker id the restart reuses, they do not make it busy.
	var interrupted [][]string
	dead := map[string]bool{}
	for k, tries := 0, 0; k < spec.kills; tries++ {
		if tries == 4*spec.kills {
			t.Fatalf("%d of %d kills interrupted a running attempt after %d tries", k, spec.kills, tries)
		}
		// Kill k comes once a random share of the shards (within its slice
		// of 15 %..75 %) has ended, on a worker that is running a shard.
		at := int(float64(total) * (0.15 + 0.6*(float64(k)+rng.Float64())/float64(spec.kills)))
		var victim int
		var live []string
		testwait.Until(t, deadline, fmt.Sprintf("%d shards to end and a worker to be busy", at), func() bool {
			if db.count(terminalShards) < at {
				return false
			}
			busy := db.liveAttempts()
			for _, i := range rng.Perm(spec.workers) {
				live = live[:0]
				for _, a := range busy[id(i)] {
					if !dead[a] {
						live = append(live, a)
					}
				}
				if len(live) > 0 {
					victim = i
					return true
				}
			}
			return false
		})
		workers[victim].signal(syscall.SIGKILL)
		<-workers[victim].done
		// A COMMIT the worker had sent before it died still lands: a
		// PostgreSQL backend finishes the statement it received after its
		// client is gone. The attempts are read once the database has had
		// a second for that (far less than the lease, so no expiry ends
		// one in between), and only those still live were interrupted.
		time.Sleep(time.Second)
		var cut []string
		for _, a := range live {
			if st := db.attemptStatus(a); st == "leased" || st == "running" {
				cut = append(cut, a)
				dead[a] = true
			}
		}
		t.Logf("SIGKILL %s after %d shards interrupted attempts %v (of %v); restarted", id(victim), db.count(terminalShards), cut, live)
		workers[victim] = m.startWorker(id(victim), workerFlags...)
		if len(cut) > 0 {
			interrupted = append(interrupted, cut)
			k++
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			db.dump()
		}
	})
	testwait.Until(t, deadline, "every task to end", func() bool {
		return db.count(`SELECT COUNT(*) FROM managed_tasks WHERE status IN ('passed', 'failed', 'not_tested', 'cancelled')`) == spec.tasks
	})
	elapsed := time.Since(start) - setup
	for _, w := range workers {
		w.signal(syscall.SIGINT)
	}
	for i, w := range workers {
		if code, out := w.wait(time.Minute); code != 130 || out["interrupted"] != true {
			t.Errorf("%s exit %d %v", id(i), code, out)
		}
	}
	t.Logf("%d shards in %v (%.1f shards/s), setup %v", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), setup.Round(time.Millisecond))

	checkFarmStore(t, db, total, interrupted)
	m.noDeviceLeased()
	for _, task := range tasks {
		checkFarmTask(t, m, task, want.PlanFingerprint, want.OutcomeFingerprint, spec.replicas)
	}
}

// checkFarmStore checks the tables: every shard passed, exactly one
// completed attempt per shard, no live attempt, no leased device, and every
// attempt a kill interrupted ended expired.
func checkFarmStore(t *testing.T, db *farmDB, total int, interrupted [][]string) {
	t.Helper()
	for _, c := range []struct {
		what  string
		query string
		want  int
	}{
		{"shards", `SELECT COUNT(*) FROM managed_shards`, total},
		{"passed shards", `SELECT COUNT(*) FROM managed_shards WHERE status = 'passed'`, total},
		{"completed attempts", `SELECT COUNT(*) FROM managed_attempts WHERE status IN ('passed', 'failed', 'not_tested')`, total},
		{"shards completed more than once", `SELECT COUNT(*) FROM (SELECT shard_id FROM managed_attempts
			WHERE status IN ('passed', 'failed', 'not_tested') GROUP BY shard_id HAVING COUNT(*) > 1) AS twice`, 0},
		{"live attempts", `SELECT COUNT(*) FROM managed_attempts WHERE status IN ('leased', 'running')`, 0},
		{"attempts neither completed nor expired", `SELECT COUNT(*) FROM managed_attempts
			WHERE status NOT IN ('passed', 'expired') AND NOT (status = 'retryable_failed' AND failure_category = 'worker_stopped')`, 0},
		{"leased devices", `SELECT COUNT(*) FROM managed_devices WHERE lease_id IS NOT NULL`, 0},
	} {
		if got := db.count(c.query); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	for _, cut := range interrupted {
		for _, a := range cut {
			if st := db.attemptStatus(a); st != "expired" {
				t.Errorf("attempt %s, interrupted by a kill, ended %s, want expired", a, st)
			}
		}
	}
}

// checkFarmTask checks one task through the binary: the report equals a
// farm where every shard passed with the single-device run's outcome, and
// the events are contiguous with one completion per shard.
func checkFarmTask(t *testing.T, m *managedFarm, task, planFingerprint, outcome string, replicas int) {
	t.Helper()
	code, rep := m.report(task)
	shards := make([]any, replicas)
	for i := range shards {
		shards[i] = map[string]any{"targetId": "counter", "replicaIndex": int64(i), "status": "passed", "failureCategory": nil, "outcomes": []any{outcome}}
	}
	want, err := canonjson.Fingerprint(map[string]any{"planFingerprint": planFingerprint, "status": "passed", "shards": shards})
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || rep["status"] != "passed" || rep["outcomeFingerprint"] != want {
		t.Errorf("%s: report exit %d status %v outcome %v, want %s", task, code, rep["status"], rep["outcomeFingerprint"], want)
	}
	for _, sh := range rep["shards"].([]any) {
		for _, a := range sh.(map[string]any)["attempts"].([]any) {
			a := a.(map[string]any)
			if a["status"] != "passed" {
				continue
			}
			if _, err := os.Stat(a["reportPath"].(string)); err != nil || a["verificationOutcomeFingerprint"] != outcome {
				t.Errorf("%s: attempt %v: %v", task, a["attemptId"], err)
			}
		}
	}

	_, evs := m.cmd("managed-events", "--task-id", task)
	ended := map[string]int{}     // attemptId → events that ended it
	completed := map[string]int{} // shardId → attempt_completed events
	finished := 0
	for i, e := range evs["events"].([]any) {
		e := e.(map[string]any)
		if e["taskSequence"] != float64(i+1) {
			t.Fatalf("%s: event %d has taskSequence %v: a gap", task, i, e["taskSequence"])
		}
		attempt, _ := e["attemptId"].(string)
		switch e["type"] {
		case "assignment_claimed":
			ended[attempt] += 0
		case "attempt_completed":
			ended[attempt]++
			completed[e["shardId"].(string)]++
		case "attempt_failed", "attempt_released", "lease_expired":
			ended[attempt]++
		case "task_finished":
			finished++
		}
	}
	if n := len(evs["events"].([]any)); float64(n) != rep["eventCount"] {
		t.Errorf("%s: %d events, the report counts %v", task, n, rep["eventCount"])
	}
	if len(completed) != replicas || finished != 1 {
		t.Errorf("%s: %d shards completed, %d task_finished", task, len(completed), finished)
	}
	for s, n := range completed {
		if n != 1 {
			t.Errorf("%s: shard %s completed %d times", task, s, n)
		}
	}
	for a, n := range ended {
		if n != 1 {
			t.Errorf("%s: attempt %s ended %d times", task, a, n)
		}
	}
}

// TestE2EFarmPostgres is the farm: 8 simulated devices, four
// worker processes (two shards each at once) sharing one PostgreSQL
// database, 200 shards of counter-success (four tasks of 50), two workers
// SIGKILLed while they run shards and restarted.
func TestE2EFarmPostgres(t *testing.T) {
	t.Parallel()
	runFarm(t, farmSpec{database: pgtest.Schema(t), driver: "pgx", devices: 8, workers: 4, concurrency: 2,
		tasks: 4, replicas: 50, kills: 2})
}

// TestE2EFarmSQLite is the same test, smaller, on one host's SQLite file:
// 4 devices, two worker processes, 32 shards, two kills.
func TestE2EFarmSQLite(t *testing.T) {
	t.Parallel()
	runFarm(t, farmSpec{database: filepath.Join(t.TempDir(), "managed.sqlite"), driver: "sqlite", devices: 4, workers: 2,
		concurrency: 2, tasks: 2, replicas: 16, kills: 2})
}
