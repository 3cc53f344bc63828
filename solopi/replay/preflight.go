package replay

import (
	"context"
	"errors"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// checkPlugins refuses a case whose plugin-backed steps cannot run.
func checkPlugins(ctx context.Context, d *device.Device, c *casefile.Case) error {
	need := casefile.RequiredPlugins(c)
	if len(need) == 0 {
		return nil
	}
	m, err := d.Query(ctx, protocol.ActionPlugin, device.P(protocol.ParamAction, "list"))
	if err != nil {
		return err
	}
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return device.DeviceRefusal(m, "the device refused the plugin list")
	}
	list, ok := m["plugins"].([]any)
	if !ok {
		return device.ContractError("plugin list has no plugins array", m)
	}
	byName := map[string]map[string]any{}
	for _, x := range list {
		if p, ok := x.(map[string]any); ok {
			byName[device.WireObject(p).Str("name")] = p
		}
	}
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var missing []map[string]any
	for _, n := range names {
		p, installed := byName[n]
		loaded := false
		if installed {
			loaded, _ = device.WireObject(p).Flag("runtimeLoaded")
		}
		if !loaded {
			idx := need[n]
			if idx == nil {
				idx = []int{}
			}
			missing = append(missing, map[string]any{"name": n, "stepIndexes": idx, "installed": installed, "runtimeLoaded": loaded})
		}
	}
	if len(missing) > 0 {
		return fault.New(fault.Failed, fault.CodePluginsUnavailable, "the case needs SoloPi plugins that are not loaded").
			With("unavailablePlugins", missing).
			WithUserAction("Install the listed plugins (solopi plugin-install) and restart SoloPi, then run the case again.")
	}
	return nil
}

// checkReplayHealth requires the five permissions, an initialised app
// and auto-start (the doctor's rules; `ready` itself is not required, as
// upstream). The refusal lists what is missing and what to do about it.
func checkReplayHealth(ctx context.Context, d *device.Device) error {
	m, err := d.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessHealth))
	if err != nil {
		return err
	}
	if ok, _ := m.Flag("success"); !ok {
		return device.Rekind(device.DeviceRefusal(m, "the device refused the health query"), fault.Transport)
	}
	v := device.EvaluateHealth(m)
	failed := slices.DeleteFunc(slices.Clone(v.FailedChecks), func(c string) bool { return c == device.FailedReady })
	if len(v.MissingPermissions) == 0 && len(failed) == 0 {
		return nil
	}
	var actions []string
	for _, c := range v.Checks {
		if !c.OK && c.Name != device.CheckReady && c.UserActionRequired != "" {
			actions = append(actions, c.UserActionRequired)
		}
	}
	return fault.New(fault.Failed, fault.CodeDeviceNotReady, "SoloPi is not ready to replay: one-time device setup is missing").
		With("missingPermissions", v.MissingPermissions).With("failedChecks", failed).With("health", m).
		WithUserAction(strings.Join(actions, " "))
}

// autoStartChange says what the run did to KEY_REPLAY_AUTO_START.
type autoStartChange struct {
	previous bool
	changed  bool
}

// autoStartReport is the run's "autoStart" object.
type autoStartReport struct {
	Changed  bool   `json:"changed"`
	Key      string `json:"key"`
	Previous bool   `json:"previous"`
}

func (a *autoStartChange) report() *autoStartReport {
	return &autoStartReport{Key: keyReplayAutoStart, Changed: a.changed, Previous: a.previous}
}

// readAutoStart reads KEY_REPLAY_AUTO_START through config?action=get.
func readAutoStart(ctx context.Context, d *device.Device) (bool, error) {
	m, err := d.Query(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "get", protocol.ParamKey, keyReplayAutoStart))
	if err != nil {
		return false, err
	}
	if ok, _ := device.WireObject(m).Flag("success"); !ok {
		return false, device.Rekind(device.DeviceRefusal(m, "the device refused to read the auto-start setting"), fault.Transport)
	}
	cfg, _ := m["config"].(map[string]any)
	v, ok := device.WireObject(cfg).Flag("value")
	if cfg == nil || device.WireObject(cfg).Str("key") != keyReplayAutoStart || !ok {
		return false, device.ContractError("config get did not return a boolean KEY_REPLAY_AUTO_START", m)
	}
	return v, nil
}

// writeAutoStart sets the key through the protected activity and waits
// until the device reads back the same value.
func writeAutoStart(ctx context.Context, d *device.Device, v bool, timeout time.Duration) error {
	if err := d.Mutate(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "set", protocol.ParamKey, keyReplayAutoStart, protocol.ParamValue, strconv.FormatBool(v))); err != nil {
		return err
	}
	err := device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: timeout, Interval: 200 * time.Millisecond, Initial: 50 * time.Millisecond}, func(ctx context.Context) (bool, error) {
		got, err := readAutoStart(ctx, d)
		return err == nil && got == v, err
	})
	if errors.Is(err, device.ErrPollTimeout) {
		return device.Recode(device.PollTimeout("SoloPi did not confirm the auto-start setting in time"), fault.CodeAutoStartNotConfirmed).With("expectedValue", v)
	}
	return err
}

// ensureAutoStart turns auto-start on when it is off. It is left on when
// the command ends, as solopi-ai leaves it: the replay manager reads it
// when it begins executing steps, so turning it off again could stall a
// run that is still starting (ours left with --no-wait, or another
// client's), and doctor would fail after every run.
func ensureAutoStart(ctx context.Context, d *device.Device, timeout time.Duration) (*autoStartChange, error) {
	cur, err := readAutoStart(ctx, d)
	if err != nil {
		return nil, err
	}
	ch := &autoStartChange{previous: cur}
	if cur {
		return ch, nil
	}
	ch.changed = true
	return ch, writeAutoStart(ctx, d, true, timeout)
}

// evidenceRoots are the device directories replay evidence may come from:
// SoloPi's data directory in its usual spellings and the app's external
// directory (the data-directory fallback lives there).
func evidenceRoots(pkg string) []string {
	return []string{
		"/sdcard/solopi/",
		"/storage/emulated/0/solopi/",
		"/storage/self/primary/solopi/",
		"/sdcard/Android/data/" + pkg + "/",
		"/storage/emulated/0/Android/data/" + pkg + "/",
	}
}

// checkEvidencePath accepts a device path only when it is absolute, clean
// (no "." or ".." segments), free of control characters and under one of
// SoloPi's evidence directories.
func checkEvidencePath(pkg, p string) error {
	if p == "" || !strings.HasPrefix(p, "/") {
		return errors.New("not an absolute path")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return errors.New("control character in path")
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == ".." || seg == "." || seg == "" {
			return errors.New("path has empty, '.' or '..' segments")
		}
	}
	if path.Clean(p) != p {
		return errors.New("path is not clean")
	}
	for _, root := range evidenceRoots(pkg) {
		if strings.HasPrefix(p, root) && len(p) > len(root) {
			return nil
		}
	}
	return errors.New("path is outside SoloPi's directories")
}
