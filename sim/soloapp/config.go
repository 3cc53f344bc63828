package soloapp

import (
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// config is the config resolver (docs/device-protocol.md#config).
func (a *App) config(p *core.Process, via core.Transport, q core.Params) core.Obj {
	action := q["action"]
	if action == "" && q.Has("key") && q.Has("value") {
		action = "set" // legacy form used by the reference host for auto-start
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	switch action {
	case "list":
		specs := core.ConfigSpecs()
		list := make([]core.Obj, 0, len(specs))
		for _, s := range specs {
			list = append(list, a.SpecObj(s, false))
		}
		return core.OK("count", len(list), "configs", list)
	case "get":
		s, found := core.ConfigSpecByKey(q["key"])
		if !found {
			return core.E1(protocol.ErrUnsupportedConfig, "Unsupported config key: "+core.JavaString(q, "key"))
		}
		return core.OK("config", a.SpecObj(s, true))
	case "set":
		if via != core.ViaAdb {
			return core.E1(protocol.ErrMutationTransportRequired, "Config changes require the ADB scheme transport")
		}
		s, found := core.ConfigSpecByKey(q["key"])
		if !found {
			return core.E1(protocol.ErrUnsupportedConfig, "Unsupported config key: "+core.JavaString(q, "key"))
		}
		if !s.Writable {
			if s.Sensitive {
				return core.E1(protocol.ErrSensitiveConfigUIRequired, "This sensitive config is available only in the SoloPi UI: "+s.Key)
			}
			return core.E1(protocol.ErrUIMigrationRequired, "This config changes stored data and must be updated in the SoloPi UI: "+s.Key)
		}
		if !q.Has("value") {
			return core.E1(protocol.ErrMissingValue, "Config value is required")
		}
		v, msg := s.Parse(q["value"])
		if msg != "" {
			return core.E1(protocol.ErrInvalidConfigValue, msg)
		}
		if !a.Faults.ConfigIgnored[s.Key] {
			a.Settings[s.Key] = v
			if s.Key == core.KeyScreenFactorRotate {
				n := v.(int64)
				a.Settings[core.KeyScreenRotation] = n == 1 || n == 3
			}
		}
		return core.OK("config", a.SpecObj(s, true))
	}
	return core.E1(protocol.ErrUnsupportedAction, "Unsupported config action")
}
