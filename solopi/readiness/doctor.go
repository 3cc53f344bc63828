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

// doctorReport is the doctor command's object: upstream's fields plus our
// checks[].
type doctorReport struct {
	Success            bool              `json:"success"`
	Ready              bool              `json:"ready"`
	Device             map[string]any    `json:"device"`
	Package            string            `json:"package"`
	Installed          bool              `json:"installed"`
	Launched           bool              `json:"launchedSoloPi"`
	Health             device.WireObject `json:"health,omitempty"`
	MissingPermissions []string          `json:"missingPermissions"`
	FailedChecks       []string          `json:"failedChecks"`
	Checks             []device.Check    `json:"checks"`
	// FixedByRun names the failed checks that run and verify-run fix
	// themselves (replay auto-start off): they do not make the device
	// unready.
	FixedByRun         []string `json:"fixedByRun,omitempty"`
	ErrorCode          string   `json:"errorCode,omitempty"`
	Error              string   `json:"error,omitempty"`
	UserActionRequired string   `json:"userActionRequired,omitempty"`
}

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	Session device.SessionOptions
	// Device describes the selected device (serial, state, model, ...);
	// nil gives {serial, state:"device"}.
	Device map[string]any
}

func newReport(t device.Transport, opts DoctorOptions) *doctorReport {
	dev := opts.Device
	if dev == nil {
		dev = map[string]any{"serial": t.Serial(), "state": "device"}
	}
	pkg := opts.Session.Device.Package
	if pkg == "" {
		pkg = protocol.DefaultPackage
	}
	return &doctorReport{Device: dev, Package: pkg, MissingPermissions: []string{}, FailedChecks: []string{}, Checks: []device.Check{}}
}

// Doctor opens a session and turns the health query into a verdict. A
// device without SoloPi is a finding (installed:false, exit 2), not an
// error. Session failures (control service, versions) come back as an
// *fault.Error whose details carry the report's fields and checks.
func Doctor(ctx context.Context, t device.Transport, opts DoctorOptions) (*doctorReport, error) {
	r := newReport(t, opts)
	installed, err := device.IsInstalled(ctx, t, r.Package)
	if err != nil {
		return nil, err
	}
	if !installed {
		c := device.NewCheck(device.CheckInstalled, false, "pm path "+r.Package+" printed no package: line")
		r.Checks = append(r.Checks, c)
		r.ErrorCode = fault.CodeSolopiNotInstalled
		r.Error = "SoloPi (" + r.Package + ") is not installed on the selected device"
		r.UserActionRequired = c.UserActionRequired
		return r, nil
	}
	r.Installed = true
	r.Checks = append(r.Checks, device.NewCheck(device.CheckInstalled, true, ""))
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

// doctorOnSession runs the health part of doctor on an open session.
func doctorOnSession(ctx context.Context, s *device.Session, selected map[string]any) (*doctorReport, error) {
	r := newReport(s.Device.Transport(), DoctorOptions{Session: s.Options(), Device: selected})
	r.Installed = true
	r.Checks = append(r.Checks, device.NewCheck(device.CheckInstalled, true, ""))
	if err := fillDoctor(ctx, s, r); err != nil {
		return nil, err
	}
	return r, nil
}

func fillDoctor(ctx context.Context, s *device.Session, r *doctorReport) error {
	r.Launched = s.Launched
	r.Checks = append(r.Checks, device.NewCheck(device.CheckControlService, true, ""), device.NewCheck(device.CheckProtocolVersions, true, ""))
	h, err := health(ctx, s)
	if err != nil {
		return err
	}
	v := device.EvaluateHealth(h)
	r.Health = h
	r.MissingPermissions = v.MissingPermissions
	r.FailedChecks = v.FailedChecks
	r.FixedByRun = markFixedByRun(v.Checks)
	r.Ready = v.Ready || r.FixedByRun != nil
	r.Success = r.Ready
	r.Checks = append(r.Checks, v.Checks...)
	if !r.Ready {
		r.ErrorCode = fault.CodeSolopiNotReady
		r.Error = "SoloPi needs a one-time device setup: " + strings.Join(missingNames(r.Checks), ", ")
		r.UserActionRequired = joinActions(r.Checks)
	}
	return nil
}

// markFixedByRun marks the failed checks run and verify-run fix on their
// own and returns their names, or nil when any other check failed (then
// the device needs its setup first and nothing is marked). Auto-start
// off is such a gap; so is health.ready false when auto-start is the only
// thing missing (SoloPi's ready is appInitialized, all five permissions
// and autoStart).
func markFixedByRun(cs []device.Check) []string {
	var idx []int
	for i, c := range cs {
		switch {
		case c.OK:
		case c.Name == device.CheckAutoStart || c.Name == device.CheckReady:
			idx = append(idx, i)
		default:
			return nil
		}
	}
	auto := false
	for _, i := range idx {
		auto = auto || cs[i].Name == device.CheckAutoStart
	}
	if !auto {
		// ready false with everything else true: not auto-start's doing.
		return nil
	}
	var names []string
	for _, i := range idx {
		cs[i].FixedByRun = true
		cs[i].UserActionRequired = device.ActionAutoStartByRun
		names = append(names, cs[i].Name)
	}
	return names
}

// health runs harness?type=health and requires success:true.
func health(ctx context.Context, s *device.Session) (device.WireObject, error) {
	h, err := s.Device.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessHealth))
	if err != nil {
		return h, err
	}
	if ok, _ := h.Flag("success"); !ok {
		return h, fault.New(fault.Transport, fault.CodeHealthUnavailable, "SoloPi answered the health query without success").
			With("response", device.SanitizedDeviceError(h))
	}
	return h, nil
}

func missingNames(cs []device.Check) []string {
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
func joinActions(cs []device.Check, exclude ...string) string {
	specific := false
	for _, c := range cs {
		if !c.OK && c.Name != device.CheckReady && !slices.Contains(exclude, c.Name) {
			specific = true
		}
	}
	var acts []string
	for _, c := range cs {
		if c.OK || c.UserActionRequired == "" || slices.Contains(exclude, c.Name) || (c.Name == device.CheckReady && specific) {
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
func (r *doctorReport) sessionFailure(err error) error {
	var e *fault.Error
	if !errors.As(err, &e) || e.Kind == fault.Interrupted {
		return err
	}
	switch e.Code {
	case fault.CodeProtocolVersionMismatch, fault.CodeSolopiVersionUnsupported:
		r.Checks = append(r.Checks, device.NewCheck(device.CheckControlService, true, ""),
			device.NewCheck(device.CheckProtocolVersions, false, e.Message))
	default:
		r.Checks = append(r.Checks, device.NewCheck(device.CheckControlService, false, e.Message))
	}
	e.With("device", r.Device).With("package", r.Package).With("installed", r.Installed).
		With("ready", false).With("checks", r.Checks).
		With("missingPermissions", r.MissingPermissions).With("failedChecks", r.FailedChecks)
	return e
}
