package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// want lists, independently of machines.go, every allowed edge of every
// machine as "from -event-> to". Every other (state, event) pair must be
// rejected with a *TransitionError.
var want = map[string][]string{
	"replay": {
		"idle -start-> running", "idle -lease_busy-> failed",
		"running -results_passed-> passed", "running -results_failed-> failed", "running -start_failed-> failed",
		"running -cancel-> cancel_requested",
		"cancel_requested -manager_stopped-> cancelled", "cancel_requested -cancelled_before_start-> cancelled",
	},
	"adb-connect": {
		"new -attempt-> connecting", "new -already_healthy-> connected", "new -rejected-> failed",
		"connecting -connected-> connected", "connecting -connect_failed-> failed",
	},
	"case-import": {"pending -receipt_stored-> succeeded", "pending -receipt_rejected-> failed"},
	"case-delete": {"pending -receipt_stored-> succeeded", "pending -receipt_rejected-> failed"},
	"agent-session": {
		"idle -start-> active", "active -pause-> paused", "paused -resume-> active",
		"active -action_accepted-> acting", "acting -action_settled-> active", "acting -action_failed-> failed",
		"active -end-> ended", "paused -end-> ended",
		"active -cancel-> cancelled", "paused -cancel-> cancelled", "acting -cancel-> cancelled",
		"active -fail-> failed", "paused -fail-> failed", "acting -fail-> failed",
		"active -expire-> expired", "paused -expire-> expired", "acting -expire-> expired",
	},
	"agent-receipt": {
		"new -accept-> accepted", "new -reject-> rejected",
		"accepted -succeed-> succeeded", "accepted -fail-> failed",
	},
	"record": {
		"idle -start-> starting", "starting -ready-> recording", "starting -stop_before_start-> stopped",
		"recording -stop-> stopping", "stopping -stopped-> stopped",
		"starting -error-> failed", "recording -error-> failed", "stopping -error-> failed",
	},
	"screen-record": {
		"idle -start-> pending-user-confirmation", "pending-user-confirmation -user_granted-> starting",
		"pending-user-confirmation -stop_before_start-> stopped", "starting -encoder_running-> recording",
		"starting -stop-> stopping", "recording -stop-> stopping", "recording -auto_stop-> stopping",
		"stopping -stopped-> stopped",
		"pending-user-confirmation -error-> failed", "starting -error-> failed", "recording -error-> failed", "stopping -error-> failed",
	},
	"scan": {
		"idle -start-> starting", "starting -permission_missing-> pending-camera-permission",
		"starting -camera_ready-> scanning", "pending-camera-permission -permission_granted-> scanning",
		"scanning -code_read-> completed",
		"starting -cancel-> cancelled", "pending-camera-permission -cancel-> cancelled", "scanning -cancel-> cancelled",
		"starting -error-> failed", "pending-camera-permission -error-> failed", "scanning -error-> failed",
	},
	"video-analysis": {
		"new -accept-> analyzing", "new -reject-> failed",
		"analyzing -complete-> completed", "analyzing -fail-> failed",
	},
	"performance": {
		"idle -start-> starting", "starting -ready-> recording",
		"starting -stop-> stopping", "recording -stop-> stopping",
		"starting -cleanup_incomplete-> stopping", "stopping -cleanup_incomplete-> stopping",
		"stopping -stopped-> stopped",
		"starting -error-> failed", "recording -error-> failed", "stopping -error-> failed",
	},
	"performance-display": {
		"idle -start-> starting", "starting -ready-> running",
		"starting -stop-> stopping", "running -stop-> stopping",
		"starting -cleanup_incomplete-> stopping", "stopping -cleanup_incomplete-> stopping",
		"stopping -stopped-> stopped",
		"starting -error-> failed", "running -error-> failed", "stopping -error-> failed",
	},
	"stress": {
		"idle -start-> starting", "starting -ready-> running", "starting -stop_before_start-> stopped",
		"running -stop-> stopping", "running -auto_stop-> stopping", "stopping -stopped-> stopped",
		"starting -error-> failed", "stopping -error-> failed",
	},
	"plugin-mutation": {
		"new -accept-> in_progress", "in_progress -complete-> completed_restart_required", "in_progress -fail-> failed",
	},
	"history-delete": {
		"new -accept-> in_progress", "in_progress -complete-> completed", "in_progress -fail-> failed",
	},
	"managed-task": {
		"queued -claim-> running", "running -requeue-> queued",
		"running -pass-> passed", "running -fail-> failed",
		"queued -not_tested-> not_tested", "running -not_tested-> not_tested",
		"queued -cancel-> cancelled", "running -cancel-> cancelled",
	},
	"managed-shard": {
		"queued -claim-> leased", "leased -begin-> running",
		"leased -pass-> passed", "running -pass-> passed",
		"leased -fail-> failed", "running -fail-> failed",
		"leased -not_tested-> not_tested", "running -not_tested-> not_tested",
		"queued -give_up-> not_tested", "leased -give_up-> not_tested", "running -give_up-> not_tested",
		"leased -requeue-> queued", "running -requeue-> queued",
		"queued -cancel-> cancelled", "leased -cancel-> cancelled", "running -cancel-> cancelled",
	},
	"managed-attempt": {
		"leased -begin-> running",
		"leased -pass-> passed", "running -pass-> passed",
		"leased -fail-> failed", "running -fail-> failed",
		"leased -not_tested-> not_tested", "running -not_tested-> not_tested",
		"leased -give_up-> failed", "running -give_up-> failed",
		"leased -retryable_failure-> retryable_failed", "running -retryable_failure-> retryable_failed",
		"leased -release-> retryable_failed", "running -release-> retryable_failed",
		"leased -expire-> expired", "running -expire-> expired",
		"leased -cancel-> cancelled", "running -cancel-> cancelled",
	},
}

func edgeString(from State, ev Event, to State) string {
	return fmt.Sprintf("%s -%s-> %s", from, ev, to)
}

func TestEveryMachineIsListed(t *testing.T) {
	t.Parallel()
	var names []string
	for _, m := range all() {
		names = append(names, m.Name)
		if _, ok := want[m.Name]; !ok {
			t.Errorf("machine %s has no expected table", m.Name)
		}
	}
	for name := range want {
		if !slices.Contains(names, name) {
			t.Errorf("expected machine %s is missing from All()", name)
		}
	}
}

func TestTablesAreWellFormed(t *testing.T) {
	t.Parallel()
	for _, m := range all() {
		if err := m.Validate(); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestEveryStateEventPair walks the full product of states and events of each
// machine: listed edges are allowed and lead where expected, all others are
// rejected with a typed error and leave the state unchanged.
func TestEveryStateEventPair(t *testing.T) {
	t.Parallel()
	for _, m := range all() {
		allowed := map[string]bool{}
		for _, e := range want[m.Name] {
			allowed[e] = true
		}
		seen := 0
		for _, s := range m.States {
			for _, ev := range m.Events() {
				to, err := m.Step(s, ev)
				if err == nil {
					e := edgeString(s, ev, to)
					if !allowed[e] {
						t.Errorf("%s: unexpected allowed transition %s", m.Name, e)
					}
					seen++
					continue
				}
				var te *TransitionError
				if !errors.As(err, &te) || te.From != s || te.Event != ev || te.Machine != m.Name {
					t.Errorf("%s: (%s,%s) gave %v, want *TransitionError", m.Name, s, ev, err)
				}
				if to != s {
					t.Errorf("%s: rejected (%s,%s) moved to %s", m.Name, s, ev, to)
				}
				if m.Can(s, ev) {
					t.Errorf("%s: Can(%s,%s) true for a rejected pair", m.Name, s, ev)
				}
			}
		}
		if seen != len(want[m.Name]) {
			t.Errorf("%s: %d transitions allowed, want %d", m.Name, seen, len(want[m.Name]))
		}
	}
}

func TestTerminalStatesAreIrreversible(t *testing.T) {
	t.Parallel()
	for _, m := range all() {
		for _, s := range m.Terminal {
			for _, ev := range m.Events() {
				if m.Can(s, ev) {
					t.Errorf("%s: terminal %s accepts %s", m.Name, s, ev)
				}
			}
			if m.IsLive(s) {
				t.Errorf("%s: terminal %s is live", m.Name, s)
			}
		}
	}
}

func TestLiveSetsMatchTheWire(t *testing.T) {
	t.Parallel()
	cases := map[string][]State{
		"replay":              {ReplayRunning, replayCancelRequested},
		"agent-session":       {AgentActive, AgentPaused, AgentActing},
		"screen-record":       {ScreenPending, SessionStarting, SessionRecording, SessionStopping},
		"scan":                {SessionStarting, ScanPendingPermission, ScanScanning},
		"performance":         {SessionStarting, SessionRecording, SessionStopping},
		"performance-display": {SessionStarting, SessionRunning, SessionStopping},
		"stress":              {SessionStarting, SessionRunning, SessionStopping},
		"record":              {SessionStarting, SessionRecording, SessionStopping},
	}
	for _, m := range all() {
		exp, ok := cases[m.Name]
		if !ok {
			continue
		}
		for _, s := range m.States {
			if m.IsLive(s) != slices.Contains(exp, s) {
				t.Errorf("%s: IsLive(%s) = %v", m.Name, s, m.IsLive(s))
			}
		}
	}
}

func TestValidateRejectsBadTables(t *testing.T) {
	t.Parallel()
	bad := []*Machine{
		{Name: "no-initial", Initial: "x", States: []State{"a"}},
		{Name: "terminal-out", Initial: "a", States: []State{"a", "b"}, Terminal: []State{"b"},
			Transitions: []transition{{"b", "e", "a"}}},
		{Name: "ambiguous", Initial: "a", States: []State{"a", "b"},
			Transitions: []transition{{"a", "e", "b"}, {"a", "e", "a"}}},
		{Name: "undeclared", Initial: "a", States: []State{"a"}, Transitions: []transition{{"a", "e", "z"}}},
		{Name: "live-terminal", Initial: "a", States: []State{"a"}, Terminal: []State{"a"}, Live: []State{"a"}},
	}
	for _, m := range bad {
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), m.Name) {
			t.Errorf("%s: Validate() = %v, want an error naming the machine", m.Name, err)
		}
	}
}

// all returns every machine, for the exhaustive tests.
func all() []*Machine {
	return []*Machine{
		Replay(), AdbConnect(), CaseImport(), CaseDelete(), AgentSession(), AgentReceipt(),
		Record(), ScreenRecord(), Scan(), VideoAnalysis(), Performance(), PerformanceDisplay(),
		Stress(), PluginMutation(), HistoryDelete(), ManagedTask(), ManagedShard(), ManagedAttempt(),
	}
}
