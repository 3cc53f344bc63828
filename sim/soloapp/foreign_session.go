package soloapp

import (
	"fmt"
	"strconv"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// StartForeignAgentSession starts an Agent session, as another host would,
// under ownerToken with an idle timeout (ms; the device's range applies):
// what a verify-run killed mid-exploration or someone's agent-session-start
// leaves behind. It holds the control lease (replays are refused, another
// Agent start too) until it expires, is cancelled with its token, or SoloPi
// restarts. It answers the sessionId; the session fails at once without a
// controllable foreground app, as any start does.
func (a *App) StartForeignAgentSession(ownerToken string, idleTimeoutMs int64) (string, error) {
	a.Mu.Lock()
	p := a.P
	a.Mu.Unlock()
	resp := a.Agent.Agent(p.Ctx, p, core.ViaAdb, core.Params{"type": protocol.AgentStart, "ownerToken": ownerToken,
		protocol.ParamIdleTimeoutMs: strconv.FormatInt(idleTimeoutMs, 10), protocol.ParamMaxDurationMs: strconv.FormatInt(protocol.AgentMaxDurationMs.Max, 10)})
	if ok, _ := resp.Get("success").(bool); !ok {
		msg, _ := resp.Get("error").(string)
		return "", fmt.Errorf("soloapp: the foreign Agent session was refused: %s", msg)
	}
	s, _ := resp.Get("session").(core.Obj)
	id, _ := s.Get("sessionId").(string)
	return id, nil
}
