package sim

import (
	"crypto/rand"
	"encoding/hex"
)

// agentFaults are the control routes about Agent sessions of other owners.
func agentFaults() map[string]faultFunc {
	return map[string]faultFunc{
		// A session another host started and left: it holds the control
		// lease until it expires (idleTimeoutMs of device time, default 5
		// minutes) or SoloPi restarts; no token means a fresh random one.
		"foreign-agent-session": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			in := struct {
				OwnerToken    string
				IdleTimeoutMs int64
			}{IdleTimeoutMs: 300_000}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if in.OwnerToken == "" {
				tok := make([]byte, 16)
				_, _ = rand.Read(tok)
				in.OwnerToken = "foreign-" + hex.EncodeToString(tok)
			}
			id, err := d.App.StartForeignAgentSession(in.OwnerToken, in.IdleTimeoutMs)
			return map[string]any{"sessionId": id}, err
		},
	}
}
