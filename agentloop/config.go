package agentloop

import (
	"time"

	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/redact"
)

// Config configures a PhoneAgent.
type Config struct {
	Space        coord.Space
	Policy       coord.ResizePolicy
	ProfileKey   ProfileKey
	CacheDir     string
	Recalibrate  bool
	SettleDelay  time.Duration
	Rechecks     int
	RecheckDelay time.Duration
	// HardBudget bounds each hard failure class; SoftBudget bounds
	// consecutive failed completion reviews.
	HardBudget int
	SoftBudget int
	// RepeatLimit is how many identical dispatched actions without any
	// visible effect are tolerated before a human is asked.
	RepeatLimit int
	Confirmer   Confirmer
	// Preflight, when set, is the endpoint preflight this run follows:
	// its coordinate profile is used as frozen (nothing is negotiated
	// again) and its events and metrics open the run's audit trail.
	Preflight *PreflightReport
	OnEvent   func(AgentEvent)
	// Redact removes secrets from every event (the API key): the one
	// redactor's Text, as redact.Secret.Redact gives it (nil:
	// redact.New().Text, the fixed rules only).
	Redact func(string) string
	// Clock is the run's time: timestamps, the deadline, the settle and
	// recheck waits (clock.System when nil).
	Clock clock.Clock
}

func (c *Config) defaults() {
	if c.Space == "" {
		c.Space = coord.SpaceAuto
	}
	if c.Policy == (coord.ResizePolicy{}) {
		c.Policy = coord.DefaultResizePolicy()
	}
	if c.Rechecks == 0 {
		c.Rechecks = defaultFreshRechecks
	}
	if c.RecheckDelay == 0 {
		c.RecheckDelay = defaultRecheckDelay
	}
	if c.HardBudget <= 0 {
		c.HardBudget = 3
	}
	if c.SoftBudget <= 0 {
		c.SoftBudget = 3
	}
	if c.RepeatLimit <= 0 {
		c.RepeatLimit = 3
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	if c.Redact == nil {
		c.Redact = redact.New().Text
	}
}

// Task is one goal with its limits. Run and Step share them.
type Task struct {
	Goal        string
	MaxSteps    int
	MaxDuration time.Duration
}
