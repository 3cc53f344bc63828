// Package worker is the farm's worker machinery on one host: the River
// worker that claims a shard on a device this host's adb server sees, runs
// it through a ShardExecutor while heartbeating the lease, and reports the
// verdict through the store's fence; the loop (Run) that hosts River's
// client, its leader's periodic expiry recovery and the devices' periodic
// re-probe; and the executor and probe interfaces a device backend
// implements.
package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/managed"
)

// ShardExecutor runs one claimed shard on its leased device: the
// verification plan, with the task's agent decisions, on exactly
// run.Assignment.Serial, writing its evidence under run.ArtifactsDir.
//
// ctx is cancelled when the task is cancelled, the lease is lost or the
// worker stops; the executor must then stop the device work it started (the
// exact replay run, the exact agent session) and return promptly.
//
// A returned error is an infrastructure failure, never a verdict: one of
// kind fault.Transport (adb, HTTP, protocol) is retried under the task's
// retry budget, any other ends the shard not_tested.
type ShardExecutor interface {
	ExecuteShard(ctx context.Context, run ShardRun) (ShardVerdict, error)
}

// ShardRun is what an executor runs.
type ShardRun struct {
	Assignment *managed.Assignment
	// ArtifactsDir is <artifacts-root>/<taskId>/<shardId>/<attemptId>; it
	// does not exist yet.
	ArtifactsDir string
}

// ShardVerdict is the Result Judge's verdict of one run.
type ShardVerdict struct {
	Status     string          // passed | failed | not_tested
	ReportPath string          // the verification report's absolute path
	Report     json.RawMessage // the verification report
	// Infrastructure, on a not_tested verdict, names the fault of the
	// phone, the adb link, SoloPi or another owner on the phone that kept
	// the plan from running to a verdict (a reason such as
	// replay_transport_failed or replay_not_started): no product verdict.
	// The worker retries such a shard on the task's budget like a
	// transport failure, on whichever phone is free, and completes it
	// not_tested only when no retry is left. "" for a verdict the product
	// earned.
	Infrastructure string
}

// DeviceLocker makes a phone belong to one process on its host
// (solopi/devicelock), so that a local `solopi run` and a worker never
// drive one phone at once.
type DeviceLocker interface {
	// LockDevice takes serial's host-wide lock without waiting; a phone
	// another process holds is an error (device_busy). unlock gives it
	// back.
	LockDevice(ctx context.Context, serial string) (unlock func(), err error)
}

// DeviceLister lists the devices this host's adb server sees online.
type DeviceLister interface {
	OnlineSerials(ctx context.Context) ([]string, error)
}

// DeviceProber checks one device the way `doctor` does.
type DeviceProber interface {
	ProbeDevice(ctx context.Context, serial string) (ProbeReport, error)
}

// ProbeReport is a probe's finding.
type ProbeReport struct {
	APILevel  int  // ro.build.version.sdk
	Installed bool // SoloPi is installed: the device can verify
	Ready     bool // doctor passed: the device can run agents and managed work
	// Doctor is the doctor's JSON object, echoed by managed-device-probe.
	Doctor any
	// ErrorCode, Error and UserAction say why a device is not ready (the
	// doctor's own).
	ErrorCode, Error, UserAction string
}

// FailureCategory is the failure category of a non-passed verification
// report: the category of the first scenario whose verdict is the report's
// own (a failed report names the failure, not an earlier not_tested
// scenario), else of the first scenario with one, else
// verification_<status>.
func FailureCategory(report json.RawMessage, status string) string {
	if status == "passed" {
		return ""
	}
	var r struct {
		Scenarios []struct {
			Status  string `json:"status"`
			Failure *struct {
				Category string `json:"category"`
			} `json:"failure"`
		} `json:"scenarios"`
	}
	if json.Unmarshal(report, &r) == nil {
		var first string
		for _, sc := range r.Scenarios {
			if sc.Failure == nil || !managed.ValidID(sc.Failure.Category) {
				continue
			}
			if sc.Status == status {
				return sc.Failure.Category
			}
			if first == "" {
				first = sc.Failure.Category
			}
		}
		if first != "" {
			return first
		}
	}
	return "verification_" + status
}

// EvidenceDigest is the SHA-256 over an evidence directory: for each file,
// in order of its relative path, the slash-separated path, a zero byte, its
// bytes and a zero byte (SoloPi's own host CLI computes the same). A
// missing directory digests as empty.
func EvidenceDigest(root string) (string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	// Ordered part by part, as Python orders paths (so "a/x" before "a-b/x").
	slices.SortFunc(files, func(a, b string) int {
		return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
	})
	h := sha256.New()
	for _, rel := range files {
		h.Write([]byte(rel))
		h.Write([]byte{0})
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
