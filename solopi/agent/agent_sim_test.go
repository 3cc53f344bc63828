package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// The Agent client against the product's simulator (sim/soloapp implements
// the device side of docs/device-protocol.md): the same code path as a phone,
// with the counter app in front. It checks the contract, not the fake.
func TestAgentAgainstSimulator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev, c := simAgentClient(t, counterPkg)
	if _, err := c.Capabilities(ctx); err != nil {
		t.Fatal(err)
	}
	tok := NewOwnerToken()
	st, err := c.Start(ctx, StartOptions{OwnerToken: tok, Budget: simBudget(), AckTimeout: 15 * time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := st.Identity(tok)
	node, err := ResolveSelector(st.Observation, Selector{Text: "+1"})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := c.Act(ctx, ActRequest{Identity: id, StepID: "sim-001", ObservationID: st.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Receipt.Status != receiptSucceeded || ar.SettledObservation() == nil {
		t.Fatalf("receipt %+v", ar.Receipt)
	}
	if _, err := ResolveSelector(ar.SettledObservation(), Selector{Text: "1"}); err != nil {
		t.Fatalf("settled observation does not show 1: %v", err)
	}
	end, err := c.End(ctx, id, ControlOptions{PollInterval: 20 * time.Millisecond})
	if err != nil || end.Session.State != "ended" {
		t.Fatalf("end %+v %v", end, err)
	}
	tl, err := c.Timeline(ctx, id)
	if err != nil || !tl.Check.Complete {
		t.Fatalf("timeline %+v %v", tl, err)
	}
	saved, err := c.SaveTimeline(ctx, id, st.TimelinePath, t.TempDir()+"/timeline.jsonl", false)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Check.Complete || saved.Check.EventCount != tl.Check.EventCount {
		t.Fatalf("pulled timeline %+v vs %+v", saved.Check, tl.Check)
	}
	if pkg, _ := dev.Phone.Foreground(); !strings.HasPrefix(pkg, "com.example.counter") {
		t.Errorf("foreground left at %s", pkg)
	}
}

// Rejections, screenshots, an immediately failed start and an interrupted
// act against the simulator.
func TestAgentSimulatorRejectionsAndCleanup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev, c := simAgentClient(t, counterPkg)

	// touch service down: the session is terminal at once (exit 2).
	dev.App.SetTouchServiceAvailable(false)
	_, err := c.Start(ctx, StartOptions{OwnerToken: NewOwnerToken(), Budget: simBudget()})
	e := wantErr(t, err, fault.CodeSessionTerminal, fault.Failed)
	if e.Details["terminalReason"] != protocol.ErrTouchServiceUnavailable {
		t.Fatalf("details %v", e.Details)
	}
	dev.App.SetTouchServiceAvailable(true)

	tok := NewOwnerToken()
	st, err := c.Start(ctx, StartOptions{OwnerToken: tok, Budget: simBudget()})
	if err != nil {
		t.Fatal(err)
	}
	id := st.Identity(tok)
	ob, err := c.Observe(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ob.Observation.ScreenshotError == "" {
		f, err := c.SaveScreenshot(ctx, id, ob.Observation, t.TempDir()+"/obs.png", false)
		if err != nil || f.SHA256 != ob.Observation.ScreenshotSHA256 {
			t.Fatalf("screenshot %v %v", f, err)
		}
	}
	node, err := ResolveSelector(ob.Observation, Selector{Text: "+1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Act(ctx, ActRequest{Identity: id, StepID: "stale-1", ObservationID: st.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}})
	wantErr(t, err, protocol.ErrStaleObservation, fault.Failed)
	_, err = c.Act(ctx, ActRequest{Identity: AgentIdentity{SessionID: id.SessionID, OwnerToken: NewOwnerToken()}, StepID: "owner-1",
		ObservationID: ob.Observation.ObservationID, Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}})
	wantErr(t, err, protocol.ErrOwnerMismatch, fault.Failed)

	// A slow settle, interrupted: the exact session is cancelled.
	dev.App.SetSettleDelay(time.Hour)
	ictx, icancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, icancel)
	_, err = c.Act(ictx, ActRequest{Identity: id, StepID: "slow-1", ObservationID: ob.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}})
	e = wantErr(t, err, fault.CodeInterrupted, fault.Interrupted)
	cl := e.Details["cleanup"].(agentCleanup)
	if !cl.Attempted || !cl.Success || cl.State != "cancelled" || cl.SessionID != id.SessionID {
		t.Fatalf("cleanup %+v", cl)
	}
	tl, err := c.Timeline(ctx, id)
	if err != nil || !tl.Check.Complete || tl.Check.TypeCounts[eventActionRejected] != 1 {
		t.Fatalf("timeline %v %+v", err, tl.Check)
	}
}

// A planted owner token goes on the wire and nowhere else: not into any
// result, error, event, pulled file or formatted value of a session that
// starts, acts, is refused, ends and saves its evidence.
func TestAgentSimPlantedTokenStaysOut(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, c := simAgentClient(t, counterPkg)
	const planted = "planted-owner-token-0123456789"
	tok, err := ParseOwnerToken(planted)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []any
	keep := func(v any, err error) {
		outputs = append(outputs, v)
		if err != nil {
			outputs = append(outputs, err, err.Error())
		}
	}
	st, err := c.Start(ctx, StartOptions{OwnerToken: tok, Budget: simBudget(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	keep(st, err)
	id := st.Identity(tok)
	outputs = append(outputs, id, tok)
	node, err := ResolveSelector(st.Observation, Selector{Text: "+1"})
	if err != nil {
		t.Fatal(err)
	}
	keep(c.Act(ctx, ActRequest{Identity: id, StepID: "secret-1", ObservationID: st.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}, PollInterval: 20 * time.Millisecond}))
	keep(c.Act(ctx, ActRequest{Identity: id, StepID: "secret-2", ObservationID: "observation-stale",
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}, PollInterval: 20 * time.Millisecond}))
	obs, err := c.Observe(ctx, id)
	keep(obs, err)
	if err == nil {
		keep(c.SaveScreenshot(ctx, id, obs.Observation, t.TempDir()+"/shot.png", false))
	}
	keep(c.End(ctx, id, ControlOptions{PollInterval: 20 * time.Millisecond}))
	keep(c.Timeline(ctx, id))
	dir := t.TempDir()
	keep(c.SaveTimeline(ctx, id, st.TimelinePath, dir+"/timeline.jsonl", false))
	file, _ := os.ReadFile(dir + "/timeline.jsonl")
	if len(file) == 0 {
		t.Fatal("no timeline pulled")
	}
	outputs = append(outputs, string(file))
	for i, v := range outputs {
		j, _ := json.Marshal(v)
		for _, s := range []string{string(j), fmt.Sprintf("%v %+v %#v", v, v, v)} {
			if strings.Contains(s, planted) {
				t.Errorf("output %d (%T) holds the owner token: %.300s", i, v, s)
			}
		}
	}
}

// Another owner's live session holds the phone: the start is refused at
// once as lease_conflict (exit 2), from SoloPi's own logged answer, not
// after the ack timeout as agent_start_timeout; no session is left.
func TestAgentStartDuringForeignSessionIsLeaseConflict(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev, c := simAgentClient(t, counterPkg)
	if _, err := dev.App.StartForeignAgentSession("someone-else-0123456789abcdef", 300_000); err != nil {
		t.Fatal(err)
	}
	holder := dev.App.LeaseHolder()
	// An ack timeout no slow machine reaches: only the refusal ends it.
	_, err := c.Start(ctx, StartOptions{OwnerToken: NewOwnerToken(), Budget: simBudget(), AckTimeout: 50 * time.Second, PollInterval: 20 * time.Millisecond})
	e := wantErr(t, err, protocol.ErrLeaseConflict, fault.Failed)
	if e.Details["deviceErrorCode"] != protocol.ErrSessionConflict || e.UserAction == "" {
		t.Errorf("refusal: %+v", e)
	}
	if ctx.Err() != nil {
		t.Fatal("the refusal came only at the deadline")
	}
	if dev.App.LeaseHolder() != holder {
		t.Errorf("the lease moved from %s to %s", holder, dev.App.LeaseHolder())
	}
	// A second refused start finds the first refusal in the log and its
	// own after it.
	_, err = c.Start(ctx, StartOptions{OwnerToken: NewOwnerToken(), Budget: simBudget(), AckTimeout: 50 * time.Second, PollInterval: 20 * time.Millisecond})
	wantErr(t, err, protocol.ErrLeaseConflict, fault.Failed)
}
