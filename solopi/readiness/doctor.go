package readiness

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Error codes of doctor.
const (
	CodeNotReady          = "solopi_not_ready"
	CodeHealthUnavailable = "health_unavailable"
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
	FailedAppInitialized = "appInitialized"
	FailedPermissions    = "permissions"
	FailedAutoStart      = "autoStart"
	FailedReady          = "ready"
)

type doctorCheckSpec struct {
	title  string // what holds when ok
	action string // what the tester does when it does not
}

// doctorCheckSpecs say, per requirement, what it means and what a tester does
// about it on the phone.
var doctorCheckSpecs = map[string]doctorCheckSpec{
	CheckInstalled:        {"SoloPi is installed", device.ActionInstallSoloPi},
	CheckControlService:   {"SoloPi's control service answers on the device", device.ActionOpenSoloPi},
	CheckProtocolVersions: {"SoloPi speaks harness protocol 2.0 and agent protocol 1.0", device.ActionMatchVersions},
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
}

func newCheck(name string, ok bool, missing string) Check {
	c := Check{Name: name, OK: ok, Title: doctorCheckSpecs[name].title}
	if !ok {
		c.Missing = missing
		c.UserActionRequired = doctorCheckSpecs[name].action
	}
	return c
}

// HealthVerdict is harness?type=health turned into findings with the
// reference host's rules (docs/device-protocol.md).
type HealthVerdict struct {
	Ready              bool
	MissingPermissions []string
	FailedChecks       []string
	Checks             []Check
}

// EvaluateHealth judges a health object. Only a literal JSON true counts.
func EvaluateHealth(h device.WireObject) HealthVerdict {
	v := HealthVerdict{MissingPermissions: []string{}, FailedChecks: []string{}}
	isTrue := func(o device.WireObject, k string) bool { b, ok := o.Flag(k); return ok && b }
	init := isTrue(h, "appInitialized")
	if !init {
		v.FailedChecks = append(v.FailedChecks, FailedAppInitialized)
	}
	v.Checks = append(v.Checks, newCheck(CheckAppInitialized, init, "health.appInitialized is not true"))

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
		v.Checks = append(v.Checks, newCheck(k, ok, "health.permissions."+k+" is not true"))
	}
	slices.Sort(v.MissingPermissions)
	if lacksKey {
		v.FailedChecks = append(v.FailedChecks, FailedPermissions)
	}
	auto := isTrue(h, "autoStart")
	if !auto {
		v.FailedChecks = append(v.FailedChecks, FailedAutoStart)
	}
	v.Checks = append(v.Checks, newCheck(CheckAutoStart, auto, "health.autoStart is not true"))

	ready := isTrue(h, "ready")
	if !ready && len(v.FailedChecks) == 0 && len(v.MissingPermissions) == 0 {
		v.FailedChecks = append(v.FailedChecks, FailedReady)
	}
	v.Checks = append(v.Checks, newCheck(CheckReady, ready, "health.ready is not true"))
	v.Ready = ready && len(v.FailedChecks) == 0 && len(v.MissingPermissions) == 0
	return v
}

// DoctorReport is the doctor command's object: upstream's fields plus our
// checks[].
type DoctorReport struct {
	Success            bool              `json:"success"`
	Ready              bool              `json:"ready"`
	Device             map[string]any    `json:"device"`
	Package            string            `json:"package"`
	Installed          bool              `json:"installed"`
	Launched           bool              `json:"launchedSoloPi"`
	Health             device.WireObject `json:"health,omitempty"`
	MissingPermissions []string          `json:"missingPermissions"`
	FailedChecks       []string          `json:"failedChecks"`
	Checks             []Check           `json:"checks"`
	ErrorCode          string            `json:"errorCode,omitempty"`
	Error              string            `json:"error,omitempty"`
	UserActionRequired string            `json:"userActionRequired,omitempty"`
}

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	Session device.SessionOptions
	// Device describes the selected device (serial, state, model, ...);
	// nil gives {serial, state:"device"}.
	Device map[string]any
}

func newReport(t device.Transport, opts DoctorOptions) *DoctorReport {
	dev := opts.Device
	if dev == nil {
		dev = map[string]any{"serial": t.Serial(), "state": "device"}
	}
	pkg := opts.Session.Device.Package
	if pkg == "" {
		pkg = protocol.DefaultPackage
	}
	return &DoctorReport{Device: dev, Package: pkg, MissingPermissions: []string{}, FailedChecks: []string{}, Checks: []Check{}}
}

// Doctor opens a session and turns the health query into a verdict. A
// device without SoloPi is a finding (installed:false, exit 2), not an
// error. Session failures (control service, versions) come back as an
// *fault.Error whose details carry the report's fields and checks.
func Doctor(ctx context.Context, t device.Transport, opts DoctorOptions) (*DoctorReport, error) {
	r := newReport(t, opts)
	installed, err := device.IsInstalled(ctx, t, r.Package)
	if err != nil {
		return nil, err
	}
	if !installed {
		c := newCheck(CheckInstalled, false, "pm path "+r.Package+" printed no package: line")
		r.Checks = append(r.Checks, c)
		r.ErrorCode = device.CodeNotInstalled
		r.Error = "SoloPi (" + r.Package + ") is not installed on the selected device"
		r.UserActionRequired = c.UserActionRequired
		return r, nil
	}
	r.Installed = true
	r.Checks = append(r.Checks, newCheck(CheckInstalled, true, ""))
	sopts := opts.Session
	sopts.Device.Package = r.Package
	s, err := device.OpenInstalled(ctx, t, sopts)
	if err != nil {
		return nil, r.sessionFailure(err)
	}
	defer s.Close()
	if err := fillDoctor(ctx, s, r); err != nil {
		return nil, err
	}
	return r, nil
}

// DoctorOnSession runs the health part of doctor on an open session.
func DoctorOnSession(ctx context.Context, s *device.Session, device map[string]any) (*DoctorReport, error) {
	r := newReport(s.Device.Transport(), DoctorOptions{Session: s.Options(), Device: device})
	r.Installed = true
	r.Checks = append(r.Checks, newCheck(CheckInstalled, true, ""))
	if err := fillDoctor(ctx, s, r); err != nil {
		return nil, err
	}
	return r, nil
}

func fillDoctor(ctx context.Context, s *device.Session, r *DoctorReport) error {
	r.Launched = s.Launched
	r.Checks = append(r.Checks, newCheck(CheckControlService, true, ""), newCheck(CheckProtocolVersions, true, ""))
	h, err := Health(ctx, s)
	if err != nil {
		return err
	}
	v := EvaluateHealth(h)
	r.Health = h
	r.Ready = v.Ready
	r.Success = v.Ready
	r.MissingPermissions = v.MissingPermissions
	r.FailedChecks = v.FailedChecks
	r.Checks = append(r.Checks, v.Checks...)
	if !v.Ready {
		r.ErrorCode = CodeNotReady
		r.Error = "SoloPi needs a one-time device setup: " + strings.Join(missingNames(r.Checks), ", ")
		r.UserActionRequired = joinActions(r.Checks)
	}
	return nil
}

// Health runs harness?type=health and requires success:true.
func Health(ctx context.Context, s *device.Session) (device.WireObject, error) {
	h, err := s.Device.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessHealth))
	if err != nil {
		return h, err
	}
	if ok, _ := h.Flag("success"); !ok {
		return h, fault.New(fault.Transport, CodeHealthUnavailable, "SoloPi answered the health query without success").
			With("response", device.SanitizedDeviceError(h))
	}
	return h, nil
}

func missingNames(cs []Check) []string {
	var out []string
	for _, c := range cs {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// joinActions numbers the distinct actions of the failing checks, leaving
// out the named ones. The generic "ready" action is left out whenever a
// more specific check already explains why the device is not ready.
func joinActions(cs []Check, exclude ...string) string {
	specific := false
	for _, c := range cs {
		if !c.OK && c.Name != CheckReady && !slices.Contains(exclude, c.Name) {
			specific = true
		}
	}
	var acts []string
	for _, c := range cs {
		if c.OK || c.UserActionRequired == "" || slices.Contains(exclude, c.Name) || (c.Name == CheckReady && specific) {
			continue
		}
		if !slices.Contains(acts, c.UserActionRequired) {
			acts = append(acts, c.UserActionRequired)
		}
	}
	if len(acts) == 1 {
		return acts[0]
	}
	var b strings.Builder
	for i, a := range acts {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("(")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(") ")
		b.WriteString(a)
	}
	return b.String()
}

// sessionFailure adds the report's fields and the failed bootstrap check to
// a session error, so doctor still says what is wrong and what to do.
func (r *DoctorReport) sessionFailure(err error) error {
	var e *fault.Error
	if !errors.As(err, &e) || e.Kind == fault.Interrupted {
		return err
	}
	switch e.Code {
	case device.CodeProtocolMismatch, device.CodeVersionUnsupported:
		r.Checks = append(r.Checks, newCheck(CheckControlService, true, ""),
			newCheck(CheckProtocolVersions, false, e.Message))
	default:
		r.Checks = append(r.Checks, newCheck(CheckControlService, false, e.Message))
	}
	e.With("device", r.Device).With("package", r.Package).With("installed", r.Installed).
		With("ready", false).With("checks", r.Checks).
		With("missingPermissions", r.MissingPermissions).With("failedChecks", r.FailedChecks)
	return e
}
