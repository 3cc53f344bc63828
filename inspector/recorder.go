package inspector

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// recordOutput is the case file's policy: replaced atomically after every
// step, so a reader (or a Ctrl-C) never sees half a case.
// recordOutput writes the recorded case 0600: like case-get --output, it
// holds what was typed in clear (a password field's step is marked
// encrypted, so runs redact it, but the file has its value).
var recordOutput = artifacts.Output{Mode: artifacts.Replace, MakeParents: true, Perm: 0o600}

// recorder performs the page's actions through an Agent session and
// appends each to the case file. The owner token lives only here: it is
// never sent to the page nor printed.
type recorder struct {
	client *agent.AgentClient
	path   string
	poll   time.Duration

	phone *sync.Mutex // the server's: no look at the phone while it acts

	mu    sync.Mutex // one action at a time
	c     *casefile.Case
	token agent.OwnerToken
	id    *agent.AgentIdentity // nil until the first action, or after the session ended
	added int
	// sessions counts the Agent sessions started (a session that reached
	// its idle or duration limit is replaced by a new one).
	sessions int
}

// newRecorder is the recorder of path (see CheckRecordTo).
func newRecorder(client *agent.AgentClient, path string, poll time.Duration) (*recorder, error) {
	abs, c, err := loadRecordFile(path)
	if err != nil {
		return nil, err
	}
	return &recorder{client: client, path: abs, poll: poll, token: agent.NewOwnerToken(), c: c}, nil
}

// CheckRecordTo checks a --record-to file before any device work: a new
// file must be creatable, a file that is there must be a case (its steps
// are kept and new ones appended after them).
func CheckRecordTo(path string) error {
	_, _, err := loadRecordFile(path)
	return err
}

func loadRecordFile(path string) (string, *casefile.Case, error) {
	abs, err := recordOutput.CheckFile(path)
	if err != nil {
		return "", nil, err
	}
	// The case a recording extends is the user's file: read with the
	// input files' cap, and a missing one is a new recording.
	b, err := artifacts.Input{What: "--record-to file", Code: fault.CodeInvalidOutputPath, Field: "output"}.Read(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return abs, nil, nil
	case err != nil:
		return "", nil, err
	}
	c, err := casefile.Load(b)
	if err != nil {
		return "", nil, caseError(err).With("file", abs)
	}
	return abs, c, nil
}

// caseName is the name of a new case: the file's base name.
func caseName(path string) string {
	n := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if n == "" {
		return "inspector-recording"
	}
	return n
}

// recorded is one appended step as the page and the final result show it.
type recorded struct {
	Index  int            `json:"index"`
	StepID string         `json:"stepId"`
	Action string         `json:"action"`
	Target agent.Selector `json:"selector"`
	Text   string         `json:"text,omitempty"`
}

// do performs a on nodes[i] (click and input on the phone; an assert is
// only written) and appends its step to the file.
func (r *recorder) do(ctx context.Context, nodes []Node, i int, a stepAction) (*recorded, error) {
	if i < 0 || i >= len(nodes) {
		return nil, fault.Usagef(fault.CodeInvalidParameter, "no node %d on this screen", i)
	}
	n := nodes[i]
	sel, unique := selectorFor(nodes, i)
	if !unique && a.kind != actAssert {
		return nil, fault.New(fault.Failed, fault.CodeSelectorAmbiguous, "no selector picks this node alone; a replay could not find it again").
			With("node", n)
	}
	if a.kind == actAssert {
		a.text = n.Text
	}
	a.secret = a.kind == actInput && secretField(n)
	step, err := caseStep(n, sel, a)
	if err != nil {
		return nil, caseError(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.kind != actAssert {
		r.phone.Lock()
		err := r.act(ctx, sel, a)
		r.phone.Unlock()
		if err != nil {
			return nil, err
		}
	}
	next, index, err := r.appended(step, n.PackageName)
	if err != nil {
		return nil, caseError(err)
	}
	b, err := casefile.MarshalAuthoring(next)
	if err != nil {
		return nil, caseError(err)
	}
	if _, err := recordOutput.WriteFile(r.path, append(b, '\n')); err != nil {
		return nil, err
	}
	r.c = next
	r.added++
	shown := a.text
	if a.secret {
		shown = redact.Marker
	}
	return &recorded{Index: index, StepID: next.Steps[index].StepID, Action: a.kind, Target: sel, Text: shown}, nil
}

// appended is the case with step after its last one: a new case, named
// after the file and targeting the node's app, for the first step.
func (r *recorder) appended(step casefile.Step, pkg string) (*casefile.Case, int, error) {
	if r.c != nil {
		res, err := casefile.Append(r.c, step, casefile.EditOptions{})
		if err != nil {
			return nil, 0, err
		}
		return res.Case, res.AffectedIndex, nil
	}
	c := &casefile.Case{CaseName: caseName(r.path), CaseDesc: "recorded with solopi inspect --serve", TargetAppPackage: pkg,
		RecordMode: "local", Priority: 1, Steps: []casefile.Step{step}}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{Operation: "import"})
	return n, 0, err
}

// act performs a on the node sel picks on a fresh observation, starting
// an Agent session when none is live.
func (r *recorder) act(ctx context.Context, sel agent.Selector, a stepAction) error {
	id, err := r.session(ctx)
	if err != nil {
		return err
	}
	ob, err := r.client.Observe(ctx, *id)
	if err != nil {
		return err
	}
	nodeID, err := agent.ResolveSelector(ob.Observation, sel)
	if err != nil {
		return err
	}
	req := agent.ActRequest{Identity: *id, StepID: agent.NewStepID(), ObservationID: ob.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &nodeID}, PollInterval: r.poll}
	if a.kind == actInput {
		text := a.text
		req.Action, req.Args.Text = protocol.ActInput, &text
	}
	_, err = r.client.Act(ctx, req)
	return err
}

// session is the live session, a new one when there is none or it ended
// (its idle timeout passes while the user reads the page).
func (r *recorder) session(ctx context.Context) (*agent.AgentIdentity, error) {
	if r.id != nil {
		st, err := r.client.Status(ctx, *r.id)
		if err == nil && st.IsLive() {
			return r.id, nil
		}
		if err != nil && fault.KindOf(err) == fault.Transport {
			return nil, err
		}
		r.id = nil
	}
	b := agent.DefaultAgentBudget()
	b.MaxSteps, b.MaxDurationMs, b.IdleTimeoutMs = protocol.AgentMaxSteps.Max, protocol.AgentMaxDurationMs.Max, protocol.AgentIdleTimeoutMs.Max
	b.MaxRepeatedActions, b.MaxNoProgressSteps = protocol.AgentMaxRepeatedActions.Max, protocol.AgentMaxNoProgressSteps.Max
	st, err := r.client.Start(ctx, agent.StartOptions{OwnerToken: r.token, Budget: b, PollInterval: r.poll})
	if err != nil {
		return nil, err
	}
	id := st.Identity(r.token)
	r.id, r.sessions = &id, r.sessions+1
	return r.id, nil
}

// close ends the live session; ctx may be cancelled already (Ctrl-C),
// so the end gets a bounded context of its own.
func (r *recorder) close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_, err := r.client.End(ctx, *r.id, agent.ControlOptions{PollInterval: r.poll})
	r.id = nil
	return err
}

// recording is the recording's part of the final result (fields in the
// alphabetical order of their JSON names: it used to be a map).
type recording struct {
	AgentSessions int    `json:"agentSessions"`
	CaseName      string `json:"caseName"`
	// EndError is set when the recording's Agent session did not end.
	EndError   *pageError `json:"endError,omitempty"`
	File       string     `json:"file"`
	Steps      int        `json:"steps"`
	StepsAdded int        `json:"stepsAdded"`
}

// status is the recording's part of the final result.
func (r *recorder) status() *recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &recording{File: r.path, StepsAdded: r.added, AgentSessions: r.sessions, CaseName: caseName(r.path)}
	if r.c != nil {
		st.Steps, st.CaseName = len(r.c.Steps), r.c.CaseName
	}
	return st
}

// caseError is a case file error with its stable code (exit 3), as the
// case commands report it.
func caseError(err error) *fault.Error {
	if e := replay.CaseFileError(err); e != nil {
		return e
	}
	return fault.From(err)
}
