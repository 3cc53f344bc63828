package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agentfake"
	"github.com/solopi-dev/solopi/solopi/device"
)

// scripted is a DecisionProvider that replays proposals and records what it
// was shown.
type scripted struct {
	proposals []Proposal
	inputs    []DecisionInput
}

func (s *scripted) Decide(ctx context.Context, in DecisionInput) (Proposal, error) {
	s.inputs = append(s.inputs, in)
	if len(s.inputs) > len(s.proposals) {
		return Proposal{}, errors.New("script exhausted")
	}
	return s.proposals[len(s.inputs)-1], nil
}

func runOpts(tok OwnerToken) AgentRunOptions {
	return AgentRunOptions{Goal: "sign in", Start: StartOptions{OwnerToken: tok, Budget: DefaultAgentBudget(), AckTimeout: 5 * time.Second},
		StepIDPrefix: "explore-1", PollInterval: 20 * time.Millisecond}
}

func TestRunSessionDone(t *testing.T) {
	fake, c := newAgentFixture(t)
	tok := NewOwnerToken()
	p := &scripted{proposals: []Proposal{
		{Kind: ProposalAct, Reason: "wrong guess", Action: protocol.ActClick, Selector: &Selector{Text: "Log in"}},
		{Kind: ProposalAct, Reason: "two match", Action: protocol.ActClick, Selector: &Selector{Text: "Sign in"}},
		{Kind: ProposalAct, Reason: "the button", Action: protocol.ActClick, Selector: &Selector{Text: "Sign in", ClassName: "android.widget.Button"}},
		{Kind: ProposalDone, Reason: "welcome is shown"},
	}}
	var seen []StepRecord
	o := runOpts(tok)
	o.OnStep = func(r StepRecord) { seen = append(seen, r) }
	res, err := RunSession(context.Background(), c, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != RunDone || res.Reason != "welcome is shown" || res.Finish != "end" || res.Session.State != "ended" {
		t.Fatalf("outcome %s %q finish %s state %s", res.Outcome, res.Reason, res.Finish, res.Session.State)
	}
	if len(res.Steps) != 4 || len(seen) != 4 {
		t.Fatalf("%d steps", len(res.Steps))
	}
	if res.Steps[0].Sent || res.Steps[0].ErrorCode != CodeSelectorNoMatch || res.Steps[1].ErrorCode != CodeSelectorAmbiguous {
		t.Fatalf("refused steps %+v %+v", res.Steps[0], res.Steps[1])
	}
	st := res.Steps[2]
	if !st.Sent || st.StepID != "explore-1-001" || st.Receipt.Status != ReceiptSucceeded || st.NodeID == "" {
		t.Fatalf("acted step %+v", st)
	}
	// The provider saw the same, unconsumed observation until it acted,
	// then the settled one, and its own history.
	if p.inputs[0].Observation.ObservationID != p.inputs[2].Observation.ObservationID ||
		p.inputs[3].Observation.ObservationID != st.Receipt.SettledObservation.ObservationID || len(p.inputs[3].History) != 3 {
		t.Fatal("decision inputs do not follow the observations")
	}
	if res.LastObservation.ObservationID != st.Receipt.SettledObservation.ObservationID || fake.Screen() != "home" {
		t.Fatal("last observation")
	}
	if res.Timeline == nil || !res.Timeline.Check.Complete {
		t.Fatalf("timeline %+v", res.Timeline)
	}
	b, _ := json.Marshal(res.Steps)
	if strings.Contains(string(b), tok.Reveal()) || !strings.Contains(string(b), `"arguments":{"nodeId":"`) {
		t.Fatalf("steps JSON %s", b)
	}
}

// The device ending the session (no progress) stops the loop; nothing is
// sent afterwards.
func TestRunSessionDeviceTerminates(t *testing.T) {
	fake, c := newAgentFixture(t)
	tok := NewOwnerToken()
	o := runOpts(tok)
	o.Start.Budget.MaxNoProgressSteps = 2
	o.Start.Budget.MaxRepeatedActions = 5
	help := &Selector{ResourceID: agentfake.AppPackage + ":id/help"}
	var props []Proposal
	for range 5 {
		props = append(props, Proposal{Kind: ProposalAct, Reason: "help", Action: protocol.ActClick, Selector: help})
	}
	res, err := RunSession(context.Background(), c, &scripted{proposals: props}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != RunSessionTerminal || res.Session.TerminalReason != "no_progress_loop_detected" || res.Finish != "" {
		t.Fatalf("outcome %s reason %s finish %q", res.Outcome, res.Session.TerminalReason, res.Finish)
	}
	if n := countMutations(fake, protocol.AgentAct); n != 2 {
		t.Fatalf("%d acts", n)
	}
	if !res.Timeline.Check.Complete {
		t.Fatalf("%+v", res.Timeline.Check)
	}
}

// A provider failure or an interrupt cancels exactly the run's session.
func TestRunSessionErrorsCancel(t *testing.T) {
	t.Run("provider", func(t *testing.T) {
		fake, c := newAgentFixture(t)
		tok := NewOwnerToken()
		res, err := RunSession(context.Background(), c, &scripted{}, runOpts(tok))
		wantErr(t, err, RunProviderError, fault.Transport)
		if res.Outcome != RunProviderError || res.Finish != "cancel" || res.Cleanup == nil || !res.Cleanup.Success {
			t.Fatalf("%+v", res)
		}
		checkExactCancel(t, fake, res.SessionID, tok)
	})
	t.Run("interrupt", func(t *testing.T) {
		fake, c := newAgentFixture(t)
		tok := NewOwnerToken()
		ctx, cancel := context.WithCancel(context.Background())
		prov := DecisionFunc(func(ctx context.Context, in DecisionInput) (Proposal, error) {
			cancel()
			<-ctx.Done()
			return Proposal{}, ctx.Err()
		})
		res, err := RunSession(ctx, c, prov, runOpts(tok))
		wantErr(t, err, device.CodeInterrupted, fault.Interrupted)
		if res.Finish != "cancel" || res.Session.State != "cancelled" || !res.Timeline.Check.Complete {
			t.Fatalf("%+v", res)
		}
		checkExactCancel(t, fake, res.SessionID, tok)
	})
	t.Run("rejected", func(t *testing.T) {
		fake, c := newAgentFixture(t)
		tok := NewOwnerToken()
		prov := DecisionFunc(func(ctx context.Context, in DecisionInput) (Proposal, error) {
			// Someone pauses the session behind the run's back.
			sid, _, _ := fake.SessionState()
			id := AgentIdentity{SessionID: sid, OwnerToken: tok}
			if _, err := c.Pause(ctx, id, ControlOptions{}); err != nil {
				return Proposal{}, err
			}
			return Proposal{Kind: ProposalAct, Reason: "back", Action: protocol.ActBack}, nil
		})
		res, err := RunSession(context.Background(), c, prov, runOpts(tok))
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != RunActionRejected || !strings.HasPrefix(res.Reason, protocol.ErrSessionPaused) || res.Finish != "end" || res.Session.State != "ended" {
			t.Fatalf("outcome %s %q finish %s state %s", res.Outcome, res.Reason, res.Finish, res.Session.State)
		}
	})
}
