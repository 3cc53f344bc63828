package soloapp

import (
	"errors"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// ReplaceReplay is another client taking the replay slot in one move: it
// cancels the live run with that run's runId (read from the status, as any
// client can) and starts its own replay of the newest case named caseName
// before anyone reads the status again. The host that owned the cancelled
// run sees a run it did not start.
func (a *App) ReplaceReplay(caseName string) (requestID, runID string, err error) {
	id, fp, err := a.CaseFingerprint(caseName)
	if err != nil {
		return "", "", err
	}
	requestID = "replay-" + strings.ReplaceAll(core.NewUUID(), "-", "")
	a.Mu.Lock()
	defer a.Mu.Unlock()
	p := a.P
	r := st(p).harness
	if r == nil || r.state != protocol.ReplayRunning {
		return "", "", errors.New("soloapp: no running replay to replace")
	}
	a.stepRunLocked(p, r, protocol.EvReplayCancel, "")
	a.stepRunLocked(p, r, protocol.EvReplayCancelled, "")
	resp := a.startRunLocked(p, caseName, requestID, replayRequest{caseID: id, fingerprint: fp, restart: a.BoolSetting(core.KeyRestartAppOnPlay)})
	rid, found := resp.Get("runId").(string)
	if !found {
		msg, _ := resp.Get("error").(string)
		return requestID, "", errors.New("soloapp: replacing replay rejected: " + msg)
	}
	return requestID, rid, nil
}
