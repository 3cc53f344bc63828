package counterphone

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
)

// Run is one finished agent run on a Phone with the fake model.
type Run struct {
	Result     *agentloop.Result
	Trajectory string // path of trajectory.json
	Screens    int
	Phone      *phone
	Requests   []fakemodel.Request
}

// RunOptions configure RunAgent.
type RunOptions struct {
	Task      string
	Model     fakemodel.Options
	Confirmer agentloop.Confirmer
	// OnEvent and OnScreen also receive the run as it happens (a console).
	OnEvent  func(agentloop.AgentEvent)
	OnScreen func(*agentloop.Screen)
	MaxSteps int
}

// RunAgent runs the pure-vision runtime against a fresh Phone and the
// fake model, keeps every screenshot in dir/screens and writes
// dir/trajectory.json, as agent-run --trajectory does.
func RunAgent(ctx context.Context, dir string, o RunOptions) (*Run, error) {
	srv, err := fakemodel.Start(o.Model)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.Timeout = srv.URL, "fake-vision", 20*time.Second
	mc.InputPricePerMTok, mc.OutputPricePerMTok = 0.5, 1.5
	model, err := chat.NewClient(mc)
	if err != nil {
		return nil, err
	}
	screens, err := agentloop.NewScreenDir(filepath.Join(dir, "screens"))
	if err != nil {
		return nil, err
	}
	// The calibration cache is not evidence: it lives outside dir.
	cache, err := os.MkdirTemp("", "counterphone-calibration-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	phone := &phone{}
	dev := agentloop.ObserveScreens(phone, func(s *agentloop.Screen) {
		screens.Save(s)
		if o.OnScreen != nil {
			o.OnScreen(s)
		}
	})
	cfg := agentloop.Config{Space: coord.SpaceAuto, Policy: coord.DefaultResizePolicy(), CacheDir: cache,
		RecheckDelay: time.Millisecond, Confirmer: o.Confirmer, OnEvent: o.OnEvent,
		ProfileKey: agentloop.ProfileKey{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: chat.ThinkingAuto, Resize: coord.DefaultResizePolicy()}}
	agent, err := agentloop.New(cfg, dev, model)
	if err != nil {
		return nil, err
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 15
	}
	res, err := agent.Run(ctx, agentloop.Task{Goal: o.Task, MaxSteps: o.MaxSteps, MaxDuration: time.Minute})
	if err != nil {
		return nil, err
	}
	if err := screens.Err(); err != nil {
		return nil, err
	}
	tr := agentloop.BuildTrajectory(res, agent.State().Events(), chat.Info{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: chat.ThinkingAuto}, cfg.Policy)
	path := filepath.Join(dir, "trajectory.json")
	if err := agentloop.WriteTrajectory(path, tr); err != nil {
		return nil, fmt.Errorf("write the trajectory: %w", err)
	}
	return &Run{Result: res, Trajectory: path, Screens: screens.Count(), Phone: phone, Requests: srv.Requests()}, nil
}
