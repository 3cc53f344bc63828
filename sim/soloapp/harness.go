package soloapp

import (
	"context"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
)

// harness is the harness resolver (docs/device-protocol.md#harness).
func (a *App) harness(ctx context.Context, p *process, via transport, q params) obj {
	t := q["type"]
	switch t {
	case "":
		return e1(protocol.ErrMissingType, "Parameter 'type' is required")
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
		a.mu.Lock()
		defer a.mu.Unlock()
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
	return e1(protocol.ErrUnsupportedType, "Unsupported harness type: "+t)
}

func (a *App) capabilities() obj {
	a.mu.Lock()
	port := a.intSetting(keyControlPort)
	a.mu.Unlock()
	return ok(
		"protocolVersion", protocol.HarnessProtocolVersion,
		"packageName", a.cfg.Package,
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

// permissionLocked reads one health permission; background is a device
// placeholder that is always true.
func (a *appCore) permissionLocked(name string) bool {
	if name == PermBackground {
		return true
	}
	return a.perms[name]
}

func (a *App) health(p *process) obj {
	a.mu.Lock()
	defer a.mu.Unlock()
	init := a.initializedLocked()
	perms := obj{}
	all := true
	for _, n := range permissionNames {
		g := a.permissionLocked(n)
		perms.set(n, g)
		all = all && g
	}
	auto := a.boolSetting(keyReplayAutoStart)
	return ok("protocolVersion", protocol.HarnessProtocolVersion, "appInitialized", init,
		"permissions", perms, "autoStart", auto, "ready", init && all && auto,
		"run", a.runSnapshotLocked(p))
}

func (a *App) info() obj {
	d := a.cfg.Device
	return ok("protocolVersion", protocol.HarnessProtocolVersion, "packageName", a.cfg.Package,
		"versionName", a.cfg.VersionName, "versionCode", a.cfg.VersionCode, "license", "Apache-2.0",
		"device", newObj("manufacturer", d.Manufacturer, "brand", d.Brand, "model", d.Model,
			"product", d.Product, "androidVersion", d.AndroidVersion, "sdk", d.SDK,
			"supportedAbis", slices.Clone(d.SupportedAbis)))
}

// appListLocked is the cached installed-application list that both
// harness?type=apps and targetApp validation use
// (docs/device-protocol.md#harness).
func (a *appCore) appListLocked() []AppInfo {
	withSystem := a.boolSetting(keyDisplaySystemApp)
	var out []AppInfo
	for _, app := range a.phone.Apps() {
		if app.Package == a.cfg.Package || (app.System && !withSystem) {
			continue
		}
		out = append(out, app)
	}
	// Collator(Locale.CHINA) approximated: case-insensitive, then raw.
	slices.SortStableFunc(out, func(x, y AppInfo) int {
		if c := strings.Compare(strings.ToLower(x.Label), strings.ToLower(y.Label)); c != 0 {
			return c
		}
		return strings.Compare(x.Label, y.Label)
	})
	return out
}

func (a *App) apps() obj {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.appListLocked()
	apps := make([]obj, 0, len(list))
	for _, app := range list {
		o := newObj("packageName", app.Package, "label", app.Label, "system", app.System)
		if app.VersionName != "" {
			o.set("versionName", app.VersionName)
		}
		if app.VersionCode != 0 {
			o.set("versionCode", app.VersionCode)
		}
		apps = append(apps, o)
	}
	return ok("count", len(apps), "includesSystemApps", a.boolSetting(keyDisplaySystemApp), "apps", apps)
}

// receiptStatus answers case-import-status / case-delete-status from a
// single-slot receipt.
func (a *App) receiptStatus(p *process, q params, slot *obj, notFound, msg string) obj {
	id := q["requestId"]
	if id == "" {
		return e1(protocol.ErrMissingRequestID, "Parameter 'requestId' is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if *slot == nil {
		return append(e1(notFound, msg), kv{"requestId", id})
	}
	if got, _ := slot.get("requestId").(string); got != id {
		return append(e1(notFound, msg), kv{"requestId", id})
	}
	return slot.clone()
}
