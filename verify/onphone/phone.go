package onphone

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify/execution"
)

// Options are verify-run's device budgets (solopi-ai's flags and
// defaults).
type Options struct {
	// RestartApp is not here: the engine passes it with every replay.
	RunTimeout         time.Duration // --run-timeout, default 600 s
	ImportTimeout      time.Duration // --import-timeout, default 30 s
	AckTimeout         time.Duration // --ack-timeout (replay start), default 20 s
	AgentStartTimeout  time.Duration // --agent-start-timeout, default 30 s
	AgentActionTimeout time.Duration // --agent-action-timeout, default 20 s
	AgentEndTimeout    time.Duration // --agent-end-timeout, default 15 s
	PollInterval       time.Duration // --poll-interval, default 0.2 s
	// LaunchTimeout bounds bringing the target app to the front (default
	// 20 s, solopi-ai's).
	LaunchTimeout time.Duration
	// Foreground is the activity the SoloPi session recorded before it
	// launched SoloPi (device.Session.Foreground).
	Foreground string
	Progress   device.Progress
}

func (o *Options) defaults() {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.RunTimeout, 600 * time.Second}, {&o.ImportTimeout, 30 * time.Second}, {&o.AckTimeout, 20 * time.Second},
		{&o.AgentStartTimeout, 30 * time.Second}, {&o.AgentActionTimeout, 20 * time.Second}, {&o.AgentEndTimeout, 15 * time.Second},
		{&o.PollInterval, 200 * time.Millisecond}, {&o.LaunchTimeout, 20 * time.Second},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
}

// Phone is one SoloPi device seen through verify-run's ports.
type Phone struct {
	dev    *device.Device
	agent  *agent.AgentClient
	o      Options
	mu     sync.Mutex
	tokens map[string]agent.OwnerToken // sessionId → its owner token
}

var (
	_ execution.CaseRunner   = (*Phone)(nil)
	_ execution.AgentSession = (*Phone)(nil)
)

// New returns the ports over d (an open SoloPi session's channel). Close
// releases the Agent client's streams.
func New(d *device.Device, o Options) *Phone {
	o.defaults()
	return &Phone{dev: d, o: o, tokens: map[string]agent.OwnerToken{},
		agent: agent.NewAgentClient(d, agent.AgentOptions{Foreground: o.Foreground, PollInterval: o.PollInterval})}
}

// Close releases the Agent client.
func (p *Phone) Close() { p.agent.Close() }

// tree is v as a JSON object tree (what the engine writes as evidence).
func tree(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"success": false, "errorCode": "internal_error", "error": "cannot encode the device answer: " + err.Error()}
	}
	t, err := canonjson.Decode(b)
	if err != nil {
		return map[string]any{"success": false, "errorCode": "internal_error", "error": "cannot decode the device answer: " + err.Error()}
	}
	m, _ := t.(map[string]any)
	return m
}

// failure is an error as the answer object a command would have printed.
func failure(err error) map[string]any { return fault.From(err).Fields() }
