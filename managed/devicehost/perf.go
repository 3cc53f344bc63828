package devicehost

// A shard's performance recording (managed-worker --perf ITEMS): a SoloPi
// performance session started on the leased phone before the plan runs and
// stopped by its exact sessionId after it, on every ending; its CSVs are
// pulled into perf/ of the attempt's evidence, analysed there
// (analysis.json, charts/, report.html) and described by
// perf/recording.json. It never changes the shard's verdict: the farm's
// verdict is the Result Judge's alone, so a budget has no place here, and
// a recording fault is written down, not judged.

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

// shardPerfDir is the recording's directory in the attempt's evidence.
const shardPerfDir = "perf"

// shardPerfStop bounds the stop and the pull after the plan (they run
// after an interrupt too, on a context of their own).
const shardPerfStop = 30 * time.Second

// shardPerfPoll paces the session's start and stop polls.
const shardPerfPoll = 100 * time.Millisecond

// shardPerf is what became of a shard's recording (perf/recording.json).
type shardPerf struct {
	Items     []string              `json:"items"`
	Target    string                `json:"target"` // the package measured, "-" for the whole device
	SessionID string                `json:"sessionId,omitempty"`
	Files     []artifacts.FileEntry `json:"files"`
	Errors    []string              `json:"errors,omitempty"`
}

func (p *shardPerf) fail(what string, err error) {
	p.Errors = append(p.Errors, what+": "+err.Error())
}

// planTarget is the one app every scenario of plan targets, "" (the whole
// device) when they target several.
func planTarget(plan []byte) string {
	target := ""
	for _, p := range gjson.GetBytes(plan, "intent.scenarios.#.targetAppPackage").Array() {
		switch {
		case target == "":
			target = p.String()
		case target != p.String():
			return ""
		}
	}
	return target
}

// onPhone runs fn on a session of serial opened for it alone.
func (h Host) onPhone(ctx context.Context, serial string, fn func(*device.Device) error) error {
	t, err := h.Devices.Bind(ctx, serial)
	if err != nil {
		return err
	}
	s, err := device.OpenSession(ctx, t, h.sessionOptions(true))
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s.Device)
}

// startPerf starts the shard's recording; nil without --perf. A recording
// that cannot start is written down and the shard runs without it.
func (h Host) startPerf(ctx context.Context, serial string, plan []byte) *shardPerf {
	if len(h.Perf) == 0 {
		return nil
	}
	target := planTarget(plan)
	p := &shardPerf{Items: h.Perf, Target: target, Files: []artifacts.FileEntry{}}
	if target == "" {
		p.Target = "-"
	}
	err := h.onPhone(ctx, serial, func(d *device.Device) error {
		id, err := sessions.PerfRecorder{}.Start(ctx, d, target, h.Perf, shardPerfPoll)
		p.SessionID = id
		return err
	})
	if err != nil {
		p.fail("the performance recording did not start", err)
	}
	return p
}

// finishPerf stops exactly the shard's session and keeps what it saved in
// dir/perf/ with its analysis; it runs on every ending of the plan.
func (h Host) finishPerf(ctx context.Context, serial string, p *shardPerf, dir string) {
	if p == nil {
		return
	}
	cctx, cancel := device.Cleanup(ctx, shardPerfStop+5*time.Second)
	defer cancel()
	if _, err := os.Stat(dir); err != nil {
		// The plan never ran (refused before the phone): the session is
		// stopped, and there is no evidence to keep it in.
		if p.SessionID != "" {
			_ = h.onPhone(cctx, serial, func(d *device.Device) error {
				_, err := sessions.PerfRecorder{}.Stop(cctx, d, p.SessionID, shardPerfStop, shardPerfPoll)
				return err
			})
		}
		return
	}
	ev, err := artifacts.Open(dir, artifacts.EvidenceOverwrite)
	if err != nil {
		p.fail("the attempt's evidence cannot take the recording", err)
		return
	}
	if p.SessionID != "" {
		err = h.onPhone(cctx, serial, func(d *device.Device) error {
			stopped, err := sessions.PerfRecorder{}.Stop(cctx, d, p.SessionID, shardPerfStop, shardPerfPoll)
			if err != nil {
				return err
			}
			p.Files, err = sessions.PerfRecorder{}.Pull(cctx, d, stopped, p.SessionID, ev, shardPerfDir)
			return err
		})
		if err != nil {
			p.fail("stopping or pulling the performance recording failed", err)
		}
	}
	if len(p.Files) > 0 {
		perfDir := filepath.Join(dir, shardPerfDir)
		if a, err := perfstats.AnalyzePerformance(context.WithoutCancel(ctx), perfstats.PerfAnalyzeOptions{Input: perfDir}); err != nil {
			p.fail("analysing the performance recording failed", err)
		} else if err := a.WriteEvidence(ev, shardPerfDir); err != nil {
			p.fail("writing the performance analysis failed", err)
		}
	}
	if _, err := ev.WriteJSON(shardPerfDir+"/recording.json", "recording", p); err != nil {
		p.fail("writing perf/recording.json failed", err)
	}
	if err := ev.Sync(); err != nil {
		p.fail("making the recording durable failed", err)
	}
	if len(p.Files) > 0 {
		// The recording's own page, which the attempt's suite row links.
		_, _ = report.Write(filepath.Join(dir, shardPerfDir), report.Options{})
	}
}
