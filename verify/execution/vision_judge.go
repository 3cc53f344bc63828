package execution

import (
	"context"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

// CodeVisionReview is a vision checkpoint the reviewer could not judge
// (the screenshot is unreadable, the model failed).

// visionReviewer judges vision checkpoints with the planner's isolated
// completion review: the assertion is the task and the checkpoint's
// screenshot the only thing the model sees. Confirmed is passed, rejected
// failed, and a reviewer that cannot tell leaves the checkpoint
// not_tested (vision_uncertain); the model's words are the verdict's
// reason. Each review's model exchange and the run's coordinate profile
// are written to vision-review-<checkpointId>.json in the segment's
// directory.
type visionReviewer struct {
	v *vision
}

// NewVisionReviewer returns the judge.
func NewVisionReviewer(cfg VisionConfig) (*visionReviewer, error) {
	v, err := cfg.check()
	if err != nil {
		return nil, err
	}
	return &visionReviewer{v: v}, nil
}

var reviewVerdicts = map[string]string{
	agentloop.CompletionConfirmed: verify.Passed,
	agentloop.CompletionRejected:  verify.Failed,
	agentloop.CompletionUncertain: verify.NotTested,
}

// Review judges one checkpoint on its screenshot.
func (j *visionReviewer) Review(ctx context.Context, req visionRequest) (verify.VisionVerdict, error) {
	b, err := os.ReadFile(req.Screenshot)
	if err != nil {
		return verify.VisionVerdict{}, fault.Wrap(fault.Transport, fault.CodeVisionReviewFailed, "cannot read the checkpoint's screenshot", err)
	}
	screen, err := agentloop.NewScreen(b, j.v.clock.Now())
	if err != nil {
		return verify.VisionVerdict{}, fault.Wrap(fault.Failed, fault.CodeVisionReviewFailed, "the checkpoint's screenshot is not a usable PNG", err)
	}
	rev, err := agentloop.ReviewCompletion(ctx, j.v.model, j.v.runtime, req.Assertion, screen)
	if err != nil {
		if ctx.Err() != nil {
			return verify.VisionVerdict{}, fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while the vision reviewer judged", err)
		}
		return verify.VisionVerdict{}, fault.Wrap(fault.Transport, fault.CodeVisionReviewFailed, j.v.redact("the vision reviewer failed: "+err.Error()), err)
	}
	out := verify.VisionVerdict{Status: reviewVerdicts[rev.Verdict], Reason: rev.Reason}
	if req.Evidence == nil || req.EvidenceDir == "" {
		return out, nil
	}
	tree := j.v.tree(map[string]any{
		"scenarioId": req.ScenarioID, "checkpointId": req.CheckpointID, "assertion": req.Assertion,
		"verdict": rev.Verdict, "reason": rev.Reason, "screenshotSha256": screen.SHA256,
		"model": j.v.info, "coordinateProfile": j.v.profile, "metrics": rev.Metrics, "events": rev.Events,
	})
	path := filepath.Join(req.EvidenceDir, "vision-review-"+verify.EvidenceDirName(req.CheckpointID)+".json")
	ev, err := (&artifactDir{dir: req.Evidence, red: req.Redactor}).writeJSON(path, tree, "vision_review")
	if err != nil {
		return out, err
	}
	out.Evidence = []verify.Evidence{ev}
	return out, nil
}
