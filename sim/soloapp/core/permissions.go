package core

import (
	"slices"
	"strings"
)

// PermissionLocked reads one health permission; background is a device
// placeholder that is always true.
func (a *App) PermissionLocked(name string) bool {
	if name == PermBackground {
		return true
	}
	return a.Perms[name]
}

// AppListLocked is the cached installed-application list that both
// harness?type=apps and targetApp validation use
// (docs/device-protocol.md#harness).
func (a *App) AppListLocked() []AppInfo {
	withSystem := a.BoolSetting(KeyDisplaySystemApp)
	var out []AppInfo
	for _, app := range a.Phone.Apps() {
		if app.Package == a.Cfg.Package || (app.System && !withSystem) {
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
