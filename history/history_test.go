package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/tooltest"
	"github.com/solopi-dev/solopi/suitereport"
)

// The test binary doubles as a second solopi process appending to the
// same store.
const (
	envChild = "SOLOPI_HISTORY_CHILD"
	envPath  = "SOLOPI_HISTORY_PATH"
)

func TestMain(m *testing.M) {
	if id := os.Getenv(envChild); id != "" {
		os.Exit(childAppend(id, os.Getenv(envPath)))
	}
	os.Exit(m.Run())
}

// childAppend appends 25 attempts, one transaction each.
func childAppend(id, path string) int {
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer s.Close()
	for i := range 25 {
		r := rec("batch-"+id, "case-"+strconv.Itoa(i%5), "sim-"+id, 1, suitereport.Passed, 1000+i)
		if err := s.Append(ctx, r); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	return 0
}

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func rec(batch, name, serial string, attempt int, v suitereport.Verdict, ms int) Record {
	start := t0.Add(time.Duration(len(batch)) * time.Minute)
	return Record{BatchID: batch, CaseName: name, CaseFingerprint: strings.Repeat("ab", 32), Serial: serial, Model: "Pixel 7",
		Attempt: attempt, Verdict: v, Started: start, Ended: start.Add(time.Duration(ms) * time.Millisecond), Duration: time.Duration(ms) * time.Millisecond}
}

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "data", "solopi", "history.sqlite"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenCreatesAVersionedWALStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	if fi, err := os.Stat(filepath.Dir(s.Path())); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory: %v %v", fi, err)
	}
	var mode string
	var app, version int
	s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	s.db.QueryRow(`PRAGMA application_id`).Scan(&app)
	s.db.QueryRow(`PRAGMA user_version`).Scan(&version)
	if mode != "wal" || app != applicationID || version != schemaVersion {
		t.Fatalf("journal %s, application id %x, version %d", mode, app, version)
	}
	if err := s.Append(ctx, rec("b1", "login", "sim-0001", 1, suitereport.Passed, 1200)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := Open(ctx, s.Path(), Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	ro, err := OpenReadOnly(ctx, s.Path(), Options{})
	if err != nil {
		t.Fatalf("read-only: %v", err)
	}
	defer ro.Close()
	sums, err := ro.Summaries(ctx, Query{})
	if err != nil || len(sums) != 1 || sums[0].Runs != 1 {
		t.Fatalf("summaries %+v %v", sums, err)
	}
	if err := ro.Append(ctx, rec("b2", "login", "sim-0001", 1, suitereport.Passed, 1)); fault.CodeOf(err) != fault.CodeHistoryReadOnly {
		t.Fatalf("append through a reader: %v", err)
	}
}

func TestSummariesAndMedians(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	rows := []Record{
		// login: passed, flaky (failed then passed on another phone),
		// failed twice, an infrastructure error then a pass.
		rec("b1", "login", "sim-0001", 1, suitereport.Passed, 1000),
		rec("b2", "login", "sim-0001", 1, suitereport.Failed, 3000),
		rec("b2", "login", "sim-0002", 2, suitereport.Passed, 2000),
		rec("b3", "login", "sim-0001", 1, suitereport.Failed, 4000),
		rec("b3", "login", "sim-0001", 2, suitereport.Failed, 5000),
		rec("b4", "login", "sim-0002", 1, suitereport.Error, 1),
		rec("b4", "login", "sim-0001", 2, suitereport.Passed, 6000),
		// A batch interrupted before its only attempt finished.
		rec("b5", "login", "sim-0001", 1, suitereport.Cancelled, 10),
		// search: errors only.
		rec("b1", "search", "sim-0002", 1, suitereport.Error, 5),
		// With shard-all, one batch holds one run per phone.
		rec("b6", "matrix", "sim-0001", 1, suitereport.Passed, 700),
		rec("b6", "matrix", "sim-0002", 1, suitereport.Failed, 900),
	}
	rows[9].Shard, rows[10].Shard = "sim-0001", "sim-0002"
	if err := s.Append(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	sums, err := s.Summaries(ctx, Query{Last: 3})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Summary{}
	for _, x := range sums {
		by[x.CaseName] = x
	}
	l := by["login"]
	if l.Runs != 4 || l.Attempts != 8 || l.Passed != 2 || l.Flaky != 1 || l.Failed != 1 || l.Errors != 0 {
		t.Fatalf("login %+v", l)
	}
	if l.PassRate != 0.5 || l.FlakeRate != 0.25 || l.MedianDurationMs != 3500 {
		t.Fatalf("login rates %v %v, median %d", l.PassRate, l.FlakeRate, l.MedianDurationMs)
	}
	if got := fmt.Sprint(l.LastVerdicts); got != "[passed failed flaky]" {
		t.Fatalf("login last verdicts %s", got)
	}
	if se := by["search"]; se.Runs != 1 || se.Errors != 1 || se.PassRate != 0 || se.MedianDurationMs != 0 {
		t.Fatalf("search %+v", se)
	}
	if m := by["matrix"]; m.Runs != 2 || m.Passed != 1 || m.Failed != 1 {
		t.Fatalf("matrix %+v", m)
	}
	one, err := s.Summaries(ctx, Query{Cases: []string{"search", "search", "nothing"}})
	if err != nil || len(one) != 1 || one[0].CaseName != "search" {
		t.Fatalf("selected summaries %+v %v", one, err)
	}
	med, err := s.MedianDurations(ctx, []string{"login", "search", "matrix", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(med) != 2 || med["login"] != 3500*time.Millisecond || med["matrix"] != 800*time.Millisecond {
		t.Fatalf("medians %v", med)
	}
	// The median follows the newest medianWindow product attempts.
	var recent []Record
	for i := range medianWindow {
		recent = append(recent, rec("n"+strconv.Itoa(i), "login", "sim-0001", 1, suitereport.Passed, 100))
	}
	if err := s.Append(ctx, recent...); err != nil {
		t.Fatal(err)
	}
	if med, _ = s.MedianDurations(ctx, []string{"login"}); med["login"] != 100*time.Millisecond {
		t.Fatalf("recent median %v", med)
	}
}

func TestAppendRefusesBadRecords(t *testing.T) {
	t.Parallel()
	s := open(t)
	ok := rec("b1", "login", "sim-0001", 1, suitereport.Passed, 1)
	for _, bad := range []func(*Record){
		func(r *Record) { r.BatchID = "" },
		func(r *Record) { r.CaseName = " " },
		func(r *Record) { r.Serial = "" },
		func(r *Record) { r.Attempt = 0 },
		func(r *Record) { r.Verdict = suitereport.Flaky },
		func(r *Record) { r.Duration = -1 },
	} {
		r := ok
		bad(&r)
		if err := s.Append(context.Background(), ok, r); fault.CodeOf(err) != fault.CodeHistoryInvalidRecord {
			t.Errorf("%+v: %v", r, err)
		}
	}
	sums, _ := s.Summaries(context.Background(), Query{})
	if len(sums) != 0 {
		t.Fatalf("a refused batch was half written: %+v", sums)
	}
}

// A reader never creates anything: a mistyped path stays absent.
func TestReadOnlyNeverCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	typo := filepath.Join(dir, "hsitory", "history.sqlite")
	if _, err := OpenReadOnly(ctx, typo, Options{}); fault.CodeOf(err) != fault.CodeHistoryNotFound || fault.KindOf(err) != fault.Invalid {
		t.Fatalf("missing path: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(typo)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the reader created %s: %v", filepath.Dir(typo), err)
	}
	if _, err := OpenReadOnly(ctx, dir, Options{}); fault.CodeOf(err) != fault.CodeHistoryInvalidPath {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := Open(ctx, dir, Options{}); fault.CodeOf(err) != fault.CodeHistoryInvalidPath {
		t.Fatalf("writer at a directory: %v", err)
	}
	// An empty file is an empty history for a reader, left as it is.
	empty := filepath.Join(dir, "empty.sqlite")
	os.WriteFile(empty, nil, 0o600)
	ro, err := OpenReadOnly(ctx, empty, Options{})
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	if sums, err := ro.Summaries(ctx, Query{}); err != nil || len(sums) != 0 {
		t.Fatalf("empty summaries %v %v", sums, err)
	}
	if m, err := ro.MedianDurations(ctx, []string{"a"}); err != nil || len(m) != 0 {
		t.Fatalf("empty medians %v %v", m, err)
	}
	ro.Close()
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Fatalf("the reader wrote %d bytes", fi.Size())
	}
}

func digest(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Files that are not a history of ours are refused with what is wrong,
// and left untouched.
func TestForeignCorruptAndNewerFilesAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "app.sqlite")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	corrupt := filepath.Join(dir, "corrupt.sqlite")
	os.WriteFile(corrupt, bytes.Repeat([]byte("not a database "), 300), 0o600)
	newer := filepath.Join(dir, "newer.sqlite")
	s, err := Open(ctx, newer, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.db.Exec(`PRAGMA user_version = 99`)
	s.Close()
	for _, tc := range []struct{ path, code string }{{foreign, fault.CodeHistoryNotOurs}, {corrupt, fault.CodeHistoryCorrupt}, {newer, fault.CodeHistorySchemaNewer}} {
		before := digest(t, tc.path)
		for name, open := range map[string]func(context.Context, string, Options) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
			st, err := open(ctx, tc.path, Options{})
			if err == nil {
				st.Close()
			}
			if e := fault.From(err); e.Code != tc.code || e.Kind != fault.Invalid || e.Details["history"] != tc.path {
				t.Errorf("%s %s: %v", name, filepath.Base(tc.path), err)
			}
		}
		if digest(t, tc.path) != before {
			t.Errorf("%s was changed", filepath.Base(tc.path))
		}
		if _, err := os.Stat(tc.path + "-wal"); err == nil && tc.code != fault.CodeHistorySchemaNewer {
			t.Errorf("%s got a WAL file", filepath.Base(tc.path))
		}
	}
}

// A location the user cannot write is history_read_only, found at open.
func TestUnwritableLocation(t *testing.T) {
	t.Parallel()
	// sysfs refuses new files even to root.
	if _, err := os.Stat("/sys/kernel"); err != nil {
		tooltest.Missing(t, "no /sys/kernel on this system: %v", err)
	}
	for _, p := range []string{"/sys/kernel/solopi-history.sqlite", "/sys/solopi-history/history.sqlite"} {
		_, err := Open(context.Background(), p, Options{})
		if e := fault.From(err); e.Code != fault.CodeHistoryReadOnly || e.Kind != fault.Invalid || e.UserAction == "" {
			t.Errorf("%s: %v", p, err)
		}
	}
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := Open(context.Background(), filepath.Join(file, "history.sqlite"), Options{}); fault.CodeOf(err) != fault.CodeHistoryReadOnly {
		t.Errorf("under a file: %v", err)
	}
}

// A writer that holds the database longer than the busy timeout makes the
// next write history_locked.
func TestLockedStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	other, err := Open(ctx, s.Path(), Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	err = other.Append(ctx, rec("b1", "login", "sim-0001", 1, suitereport.Passed, 1))
	if e := fault.From(err); e.Code != fault.CodeHistoryLocked || e.Kind != fault.Transport {
		t.Fatalf("locked: %v", err)
	}
}

// Concurrent solopi processes append to one store without losing a row.
func TestConcurrentProcessesAppend(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.sqlite")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 3 {
		c := exec.Command(exe, "-test.run=^$")
		c.Env = append(os.Environ(), envChild+"="+strconv.Itoa(i+1), envPath+"="+path)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, c), append(outs, &out)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v: %s", i, err, outs[i])
		}
	}
	s, err := OpenReadOnly(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sums, err := s.Summaries(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, x := range sums {
		total += x.Attempts
	}
	if len(sums) != 5 || total != 75 {
		t.Fatalf("%d cases, %d attempts, want 5 and 75", len(sums), total)
	}
}

func TestDefaultPath(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	if p, err := DefaultPath(os.Getenv); err != nil || p != filepath.Join(data, "solopi", "history.sqlite") {
		t.Fatalf("%s %v", p, err)
	}
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", home)
	if p, err := DefaultPath(os.Getenv); err != nil || p != filepath.Join(home, ".local", "share", "solopi", "history.sqlite") {
		t.Fatalf("%s %v", p, err)
	}
}
