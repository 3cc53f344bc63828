package agentloop

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ScreenSource loads the screenshot of a SoloPi observation.
type ScreenSource func(ctx context.Context, obs *agent.Observation) (*Screen, error)

// sessionOfDir returns <id> when dir is .../agent-sessions/<id>/ with id a
// valid agent identifier.
func sessionOfDir(dir string) (string, bool) {
	rest, ok := strings.CutSuffix(dir, "/")
	i := strings.LastIndex(rest, "/agent-sessions/")
	if !ok || i < 0 {
		return "", false
	}
	sid := rest[i+len("/agent-sessions/"):]
	return sid, protocol.ValidID(sid, 160)
}

// DeviceScreens pulls observation screenshots read-only through the
// device channel. A DecisionInput carries no session id, so the check is
// that the file is an observation PNG inside some agent-sessions/<id>/
// directory, with its SHA-256 equal to the observation's.
func DeviceScreens(dev *device.Device) ScreenSource {
	return func(ctx context.Context, obs *agent.Observation) (*Screen, error) {
		dir, _ := path.Split(obs.ScreenshotPath)
		sid, ok := sessionOfDir(dir)
		if !ok {
			return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation's screenshot is not inside an agent-sessions directory"}
		}
		b, err := FetchScreenshot(ctx, dev, sid, obs)
		if err != nil {
			return nil, err
		}
		s, err := NewScreen(b, time.Now())
		if err != nil {
			return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation screenshot is not a usable PNG", Err: err}
		}
		s.Ref = obs.ObservationID
		return s, nil
	}
}

// Provider is the pure-vision planner as a agent.DecisionProvider: each
// Decide plans on the observation's screenshot (Planner.Propose) and
// proposes one typed action on a hit-tested nodeId, done, or blocked. It
// has no device handle: freshness before dispatch is the device's own
// stale_observation check (the tree signature at act time), and pixel
// verification compares consecutive observations.
type Provider struct {
	model   Model
	screens ScreenSource
	cfg     Config

	mu      sync.Mutex
	planner *Planner
	nodes   NodeMapper
}

// NewProvider returns the planner provider.
func NewProvider(model Model, screens ScreenSource, cfg Config) (*Provider, error) {
	if model == nil || screens == nil {
		return nil, errors.New("agentloop: the provider needs a model and a screenshot source")
	}
	return &Provider{model: model, screens: screens, cfg: cfg}, nil
}

// State is the provider's audit state (nil before the first decision).
func (p *Provider) State() *AgentState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.planner == nil {
		return nil
	}
	return p.planner.State()
}

// Trajectory returns the provider's audit trail so far.
func (p *Provider) Trajectory(model ModelInfo) *Trajectory {
	p.mu.Lock()
	pl := p.planner
	p.mu.Unlock()
	if pl == nil {
		return nil
	}
	return pl.Trajectory(model)
}

// Decide implements agent.DecisionProvider. The first decision starts
// the task: every plan may act once, a few zero-touch replans included.
func (p *Provider) Decide(ctx context.Context, in agent.DecisionInput) (agent.Proposal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.Observation == nil {
		return agent.Proposal{}, errors.New("agentloop provider: the decision input has no observation")
	}
	if p.planner == nil {
		task := Task{Goal: in.Goal, MaxSteps: max(int(in.Budget.MaxSteps), 1) * maxPlansPerProposal,
			MaxDuration: time.Duration(in.Budget.MaxDurationMs) * time.Millisecond}
		pl, err := NewPlanner(p.model, p.cfg, task, nil)
		if err != nil {
			return agent.Proposal{}, err
		}
		p.planner = pl
	} else if in.Goal != p.planner.Goal() {
		return agent.Proposal{}, ErrGoalChanged
	}
	screen, err := p.screens(ctx, in.Observation)
	if err != nil {
		return agent.Proposal{}, fmt.Errorf("load the observation screenshot: %w", err)
	}
	screen.Ref = in.Observation.ObservationID
	prop, err := p.planner.Propose(ctx, screen, feedbackOf(in.History), func(cmd Command) (TypedAction, error) {
		return p.nodes.Map(cmd, in.Observation)
	})
	if err != nil {
		return agent.Proposal{}, err
	}
	switch prop.Kind {
	case ProposeAct:
		return agent.Proposal{Kind: agent.ProposalAct, Reason: prop.Reason, Action: prop.Typed.Action, Args: prop.Typed.Args}, nil
	case ProposeDone:
		return agent.Proposal{Kind: agent.ProposalDone, Reason: prop.Reason}, nil
	}
	return agent.Proposal{Kind: agent.ProposalBlocked, Reason: prop.Reason}, nil
}

// feedbackOf is what the host did with the previous proposal.
func feedbackOf(history []agent.StepRecord) *Feedback {
	if len(history) == 0 {
		return nil
	}
	last := history[len(history)-1]
	return &Feedback{Sent: last.Sent, Succeeded: last.Sent && last.Receipt != nil && last.Receipt.Status == agent.ReceiptSucceeded,
		ErrorCode: last.ErrorCode, Error: last.Error}
}
