package execution

import (
	"context"
	"os"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
)

// RunOptions are verify-run's inputs.
type RunOptions struct {
	// Plan is the plan file's bytes; Artifacts the evidence directory
	// (must not exist).
	Plan      []byte
	Artifacts string
	// DecisionsFile is --agent-decisions ("" for none); DecisionsJSON
	// holds the decisions themselves instead (a managed assignment carries
	// them). At most one of the two is set.
	DecisionsFile string
	DecisionsJSON []byte
	Provider      ProviderOptions
	// JUnit, when set, is where the JUnit XML is written.
	JUnit string
	// Video records every phone's screen for the run (--video); see
	// Engine.Video.
	Video        video.Mode
	VideoOptions video.Options
	// Setup, when set, runs once every input was checked and before the
	// phone is reached: verify-run runs the planner preflight there when
	// the plan needs a vision judge or the provider is vision, and returns
	// the vision provider (set as Provider.Vision) and judge.
	Setup func(plan *verify.Plan) (DecisionProvider, VisionJudge, error)
}

// RunSummary is verify-run's output: success is status == passed. The
// command exits 0 when passed, 2 when failed or not_tested, 130 when
// Interrupted.
type RunSummary struct {
	Success            bool   `json:"success"`
	Status             string `json:"status"`
	Interrupted        bool   `json:"interrupted,omitempty"`
	ReportID           string `json:"reportId"`
	PlanFingerprint    string `json:"planFingerprint"`
	OutcomeFingerprint string `json:"outcomeFingerprint"`
	Report             string `json:"report"`
	Events             string `json:"events"`
	JUnit              string `json:"junit,omitempty"`
	// Timeline is timeline.json; Segments are its segments, each with
	// its steps and durations.
	Timeline string            `json:"timeline"`
	Segments []SegmentTimeline `json:"segments"`
	// Video is what became of each phone's recording (--video).
	Video []PhoneVideo `json:"video,omitempty"`
}

// Prepared is a verification run whose inputs were all checked.
type Prepared struct {
	o         RunOptions
	plan      *verify.Plan
	provider  DecisionProvider
	decisions decisions
	judge     VisionJudge
}

// decisionsFile is how --decisions is read: JSON, so UTF-8 (invalid bytes
// are refused here, before the phone, rather than decoded as U+FFFD).
var decisionsFile = artifacts.Input{What: "decisions file", Code: fault.CodeInvalidDecisions, Field: "file", UTF8: true}

// Prepare validates the plan, checks the provider options, reads the
// decisions, checks the output paths, runs Setup and builds the provider.
// Every input problem (invalid plan or decisions, provider misuse, an
// existing artifacts directory or JUnit file) is refused here, before
// Setup reaches the model and before the phone is touched.
func Prepare(o RunOptions) (*Prepared, error) {
	plan, _, err := verify.LoadPlan(o.Plan)
	if err != nil {
		return nil, err
	}
	o.Provider.DecisionsFile = o.DecisionsFile
	if _, ok := video.ParseMode(string(o.Video)); !ok {
		return nil, fault.Usage(fault.CodeInvalidOption, "--video must be off, on-failure or always")
	}
	if err := checkProvider(o.Provider); err != nil {
		return nil, err
	}
	p := &Prepared{o: o, plan: plan}
	decisions := o.DecisionsJSON
	if o.DecisionsFile != "" {
		if decisions, err = decisionsFile.Read(o.DecisionsFile); err != nil {
			return nil, err
		}
	}
	if decisions != nil {
		if p.decisions, err = parseDecisions(decisions, plan); err != nil {
			return nil, err
		}
	}
	if o.JUnit != "" {
		if _, err := artifacts.JUnitOutput(false).CheckFile(o.JUnit); err != nil {
			return nil, err
		}
	}
	if _, err := os.Lstat(o.Artifacts); err == nil {
		return nil, fault.Usage(fault.CodeArtifactsExist, "the artifacts directory already exists; give a new path").With("artifacts", o.Artifacts)
	}
	if o.Setup != nil {
		if o.Provider.Vision, p.judge, err = o.Setup(plan); err != nil {
			return nil, err
		}
	}
	if p.provider, err = selectProvider(o.Provider); err != nil {
		return nil, err
	}
	return p, nil
}

// Run runs the engine (e carries the ports, RestartApp and the clock; its
// Provider and Decisions are the prepared ones, and its Vision judge
// Setup's when Setup gave one) and writes the report and the JUnit file.
func (p *Prepared) Run(ctx context.Context, e Engine) (*RunSummary, error) {
	e.Provider, e.Decisions = p.provider, p.decisions
	e.Video, e.VideoOptions = p.o.Video, p.o.VideoOptions
	if p.judge != nil {
		e.Vision = p.judge
	}
	out, err := e.Run(ctx, p.plan, p.o.Artifacts)
	if err != nil {
		return nil, err
	}
	r := out.Report
	s := &RunSummary{
		Success: r.Status == verify.Passed && !r.Interrupted, Status: r.Status, Interrupted: r.Interrupted,
		ReportID: r.ReportID, PlanFingerprint: r.PlanFingerprint, OutcomeFingerprint: r.OutcomeFingerprint,
		Report: out.ReportPath, Events: out.EventsPath,
		Timeline: out.TimelinePath, Segments: out.Timeline.Segments, Video: out.Timeline.Videos,
	}
	if p.o.JUnit != "" {
		if err := writeJUnit(p.o.JUnit, r, p.plan, out.EventsPath, out.Timeline, out.redact); err != nil {
			return nil, fault.Wrap(fault.Internal, fault.CodeArtifactWriteFailed, "cannot write the JUnit report", err).With("junit", p.o.JUnit)
		}
		s.JUnit = p.o.JUnit
	}
	return s, nil
}
