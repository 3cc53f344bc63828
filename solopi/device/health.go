package device

// SoloPi's harness?type=health judged into the checks of a ready device,
// with what a tester does about each: doctor reports them, the replay
// preflight refuses to start without them.

import (
	"slices"
)

// Check names: the five wire permission keys keep their wire spelling so a
// script can map a check to health.permissions without a table.
const (
	CheckInstalled        = "installed"
	CheckControlService   = "controlService"
	CheckProtocolVersions = "protocolVersions"
	CheckAppInitialized   = "appInitialized"
	CheckAdb              = "adb"
	CheckFloat            = "float"
	CheckBackground       = "background"
	CheckPowerSave        = "powerSave"
	CheckAccessibility    = "accessibility"
	CheckAutoStart        = "autoStart"
	CheckReady            = "ready"
)

// Upstream failedChecks values.
const (
	failedAppInitialized = "appInitialized"
	failedPermissions    = "permissions"
	FailedAutoStart      = "autoStart"
	FailedReady          = "ready"
)

type checkSpec struct {
	title  string // what holds when ok
	action string // what the tester does when it does not
}

// checkSpecs say, per requirement, what it means and what a tester does
// about it on the phone.
var checkSpecs = map[string]checkSpec{
	CheckInstalled:        {"SoloPi is installed", actionInstallSoloPi},
	CheckControlService:   {"SoloPi's control service answers on the device", ActionOpenSoloPi},
	CheckProtocolVersions: {"SoloPi speaks harness protocol 2.0 and agent protocol 1.0", actionMatchVersions},
	CheckAppInitialized: {"SoloPi finished initialising",
		"Open SoloPi on the phone and wait until its main screen appears; accept its first-start prompts."},
	CheckAdb: {"SoloPi's internal ADB connection is open",
		"Run `solopi adb-connect`, then unlock the phone and tap Allow on the USB debugging (RSA) prompt if one appears. " +
			"If it still fails, make sure the internal ADB address set in SoloPi (default localhost:5555) accepts connections."},
	CheckFloat: {"SoloPi may draw over other apps (floating window)",
		"On the phone open Settings > Apps > SoloPi > Display over other apps and allow it."},
	CheckBackground: {"SoloPi may run in the background",
		"On the phone open Settings > Apps > SoloPi > Battery and allow background activity."},
	CheckPowerSave: {"SoloPi is exempt from battery optimisation",
		"On the phone open Settings > Battery > Battery optimisation, pick SoloPi and choose Don't optimise."},
	CheckAccessibility: {"SoloPi's accessibility service is on",
		"On the phone open Settings > Accessibility > SoloPi and turn the service on."},
	CheckAutoStart: {"replays start automatically (KEY_REPLAY_AUTO_START)",
		"Run `solopi config-set --key KEY_REPLAY_AUTO_START --value true`, or turn on auto start in SoloPi's settings."},
	CheckReady: {"SoloPi reports itself ready",
		"Open SoloPi on the phone and complete the setup it asks for, then run `solopi doctor` again."},
}

// Check is one requirement of a ready device.
type Check struct {
	Name               string `json:"name"`
	OK                 bool   `json:"ok"`
	Title              string `json:"title"`
	Missing            string `json:"missing,omitempty"`
	UserActionRequired string `json:"userActionRequired,omitempty"`
	// FixedByRun marks a gap that run and verify-run close themselves
	// (replay auto-start): reported, but nothing to do on the phone.
	FixedByRun bool `json:"fixedByRun,omitempty"`
}

// ActionAutoStartByRun is what a tester does about auto-start being off:
// nothing, unless they keep it off on purpose.
const ActionAutoStartByRun = "Nothing to do: run and verify-run turn replay auto-start (KEY_REPLAY_AUTO_START) on themselves. " +
	"Only for run --no-auto-start, turn it on first: `solopi config-set --key KEY_REPLAY_AUTO_START --value true`."

func NewCheck(name string, ok bool, missing string) Check {
	c := Check{Name: name, OK: ok, Title: checkSpecs[name].title}
	if !ok {
		c.Missing = missing
		c.UserActionRequired = checkSpecs[name].action
	}
	return c
}

// healthVerdict is harness?type=health turned into findings with the
// reference host's rules (docs/device-protocol.md).
type healthVerdict struct {
	Ready              bool
	MissingPermissions []string
	FailedChecks       []string
	Checks             []Check
}

// EvaluateHealth judges a health object. Only a literal JSON true counts.
func EvaluateHealth(h WireObject) healthVerdict {
	v := healthVerdict{MissingPermissions: []string{}, FailedChecks: []string{}}
	isTrue := func(o WireObject, k string) bool { b, ok := o.Flag(k); return ok && b }
	init := isTrue(h, "appInitialized")
	if !init {
		v.FailedChecks = append(v.FailedChecks, failedAppInitialized)
	}
	v.Checks = append(v.Checks, NewCheck(CheckAppInitialized, init, "health.appInitialized is not true"))

	perms, permsObj := h["permissions"].(map[string]any)
	lacksKey := !permsObj
	for _, k := range []string{CheckAdb, CheckFloat, CheckBackground, CheckPowerSave, CheckAccessibility} {
		if _, present := perms[k]; permsObj && !present {
			lacksKey = true
		}
		ok := permsObj && isTrue(perms, k)
		if !ok {
			v.MissingPermissions = append(v.MissingPermissions, k)
		}
		v.Checks = append(v.Checks, NewCheck(k, ok, "health.permissions."+k+" is not true"))
	}
	slices.Sort(v.MissingPermissions)
	if lacksKey {
		v.FailedChecks = append(v.FailedChecks, failedPermissions)
	}
	auto := isTrue(h, "autoStart")
	if !auto {
		v.FailedChecks = append(v.FailedChecks, FailedAutoStart)
	}
	v.Checks = append(v.Checks, NewCheck(CheckAutoStart, auto, "health.autoStart is not true"))

	ready := isTrue(h, "ready")
	if !ready && len(v.FailedChecks) == 0 && len(v.MissingPermissions) == 0 {
		v.FailedChecks = append(v.FailedChecks, FailedReady)
	}
	v.Checks = append(v.Checks, NewCheck(CheckReady, ready, "health.ready is not true"))
	v.Ready = ready && len(v.FailedChecks) == 0 && len(v.MissingPermissions) == 0
	return v
}
