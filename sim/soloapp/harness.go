package soloapp

import (
	"context"
	"slices"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// harness is the harness resolver (docs/device-protocol.md#harness).
func (a *App) harness(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	t := q["type"]
	switch t {
	case "":
		return core.E1(protocol.ErrMissingType, "Parameter 'type' is required")
	case protocol.HarnessCapabilities:
		return a.capabilities()
	case protocol.HarnessHealth:
		return a.health(p)
	case protocol.HarnessInfo:
		return a.info()
	case protocol.HarnessCases:
		return a.listCases()
	case protocol.HarnessApps:
		return a.apps()
	case protocol.HarnessCase:
		return a.caseQuery(q)
	case protocol.HarnessStatus, protocol.HarnessResult:
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.runSnapshotLocked(p)
	case protocol.HarnessCancel:
		return a.cancelRun(p, via, q)
	case protocol.HarnessCaseImport:
		return a.caseImport(p, via, q)
	case protocol.HarnessCaseImportStatus:
		return a.receiptStatus(p, q, &st(p).importReceipt, protocol.ErrImportReceiptNotFound, "No matching case import receipt is available")
	case protocol.HarnessCaseDelete:
		return a.caseDelete(p, via, q)
	case protocol.HarnessCaseDeleteStatus:
		return a.receiptStatus(p, q, &st(p).deleteReceipt, protocol.ErrCaseDeleteReceiptNotFound, "No matching case delete receipt is available")
	case protocol.HarnessAdbConnect:
		return a.adbConnect(p, via, q)
	case protocol.HarnessAdbConnectStatus:
		return a.adbConnectStatus(p, q)
	}
	return core.E1(protocol.ErrUnsupportedType, "Unsupported harness type: "+t)
}

func (a *App) capabilities() core.Obj {
	a.Mu.Lock()
	port := a.IntSetting(core.KeyControlPort)
	a.Mu.Unlock()
	return core.OK(
		"protocolVersion", protocol.HarnessProtocolVersion,
		"packageName", a.Cfg.Package,
		"devicePort", port,
		"queries", []string{"capabilities", "health", "info", "apps", "cases", "case", "status", "result", "case-import-status", "case-delete-status", "adb-connect-status"},
		"commands", []string{"replay", "cancel", "config", "case-import", "case-delete", "record", "stress", "screen-record", "video-analysis", "history", "plugin", "scan", "adb-connect"},
		"performanceQueries", []string{"listItems", "status", "current"},
		"performanceCommands", []string{"start", "stop"},
		"performanceDisplayQueries", []string{"status"},
		"performanceDisplayCommands", []string{"start", "stop"},
		"screenRecordQueries", []string{"status"},
		"screenRecordCommands", []string{"start", "stop"},
		"scanQueries", []string{"status"},
		"scanCommands", []string{"start", "cancel"},
		"videoAnalysisQueries", []string{"status"},
		"videoAnalysisCommands", []string{"start"},
		"historyQueries", []string{"listReplay", "getReplay", "listPerformance", "getPerformance", "mutationStatus"},
		"historyCommands", []string{"deleteReplay", "deletePerformance"},
		"pluginQueries", []string{"list", "mutationStatus"},
		"pluginCommands", []string{"import", "remove"},
		"agentProtocolVersion", protocol.AgentProtocolVersion,
		"agentQueries", []string{"capabilities", "start-status", "status", "observe", "receipt", "timeline"},
		"agentCommands", []string{"start", "act", "pause", "resume", "end", "cancel"},
		"transports", []string{"adb-forward-http", "adb-scheme"},
	)
}

func (a *App) health(p *core.Process) core.Obj {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	init := a.InitializedLocked()
	perms := core.Obj{}
	all := true
	for _, n := range core.PermissionNames {
		g := a.PermissionLocked(n)
		perms.Set(n, g)
		all = all && g
	}
	auto := a.BoolSetting(core.KeyReplayAutoStart)
	return core.OK("protocolVersion", protocol.HarnessProtocolVersion, "appInitialized", init,
		"permissions", perms, "autoStart", auto, "ready", init && all && auto,
		"run", a.runSnapshotLocked(p))
}

func (a *App) info() core.Obj {
	d := a.Cfg.Device
	return core.OK("protocolVersion", protocol.HarnessProtocolVersion, "packageName", a.Cfg.Package,
		"versionName", a.Cfg.VersionName, "versionCode", a.Cfg.VersionCode, "license", "Apache-2.0",
		"device", core.NewObj("manufacturer", d.Manufacturer, "brand", d.Brand, "model", d.Model,
			"product", d.Product, "androidVersion", d.AndroidVersion, "sdk", d.SDK,
			"supportedAbis", slices.Clone(d.SupportedAbis)))
}

func (a *App) apps() core.Obj {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	list := a.AppListLocked()
	apps := make([]core.Obj, 0, len(list))
	for _, app := range list {
		o := core.NewObj("packageName", app.Package, "label", app.Label, "system", app.System)
		if app.VersionName != "" {
			o.Set("versionName", app.VersionName)
		}
		if app.VersionCode != 0 {
			o.Set("versionCode", app.VersionCode)
		}
		apps = append(apps, o)
	}
	return core.OK("count", len(apps), "includesSystemApps", a.BoolSetting(core.KeyDisplaySystemApp), "apps", apps)
}

// receiptStatus answers case-import-status / case-delete-status from a
// single-slot receipt.
func (a *App) receiptStatus(p *core.Process, q core.Params, slot *core.Obj, notFound, msg string) core.Obj {
	id := q["requestId"]
	if id == "" {
		return core.E1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if *slot == nil {
		return append(core.E1(notFound, msg), core.KV{K: "requestId", V: id})
	}
	if got, _ := slot.Get("requestId").(string); got != id {
		return append(core.E1(notFound, msg), core.KV{K: "requestId", V: id})
	}
	return slot.Clone()
}
