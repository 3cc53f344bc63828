package readiness

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

func runDoctor(t *testing.T, dev *sim.Device) *doctorReport {
	t.Helper()
	r, err := Doctor(context.Background(), dev, DoctorOptions{Session: fastSession()})
	if err != nil {
		t.Fatalf("Doctor: %v", err)
	}
	return r
}

func checkByName(r *doctorReport, name string) (device.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return device.Check{}, false
}

func TestDoctorAllPresent(t *testing.T) {
	t.Parallel()
	r := runDoctor(t, newSimDevice(t))
	if !r.Ready || !r.Success {
		t.Fatalf("ready=%v success=%v ", r.Ready, r.Success)
	}
	if len(r.MissingPermissions) != 0 || len(r.FailedChecks) != 0 || r.ErrorCode != "" || r.UserActionRequired != "" {
		t.Fatalf("unexpected findings %+v", r)
	}
	for _, name := range []string{device.CheckInstalled, device.CheckControlService, device.CheckProtocolVersions, device.CheckAppInitialized,
		device.CheckAdb, device.CheckFloat, device.CheckBackground, device.CheckPowerSave, device.CheckAccessibility, device.CheckAutoStart, device.CheckReady} {
		c, ok := checkByName(r, name)
		if !ok || !c.OK || c.UserActionRequired != "" || c.Title == "" {
			t.Errorf("check %s: %+v (present %v)", name, c, ok)
		}
	}
	if r.Device["serial"] != "sim-readiness" || r.Package != "com.alipay.hulu" || !r.Installed {
		t.Errorf("device %v package %s installed %v", r.Device, r.Package, r.Installed)
	}
	if ok, _ := r.Health.Flag("ready"); !ok {
		t.Errorf("health not passed through: %s", r.Health)
	}
}

func TestDoctorEachMissingPermission(t *testing.T) {
	t.Parallel()
	for _, perm := range healthPermissionKeys() {
		t.Run(perm, func(t *testing.T) {
			t.Parallel()
			dev := newSimDevice(t, denied(perm))
			if perm == device.CheckBackground {
				// SoloPi 1.0.2 always reports background as granted; a
				// build that checks it really is the one way to see it off.
				answerFault(t, dev, sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "health"},
					Set: map[string]any{"permissions/background": false, "ready": false}})
			}
			r := runDoctor(t, dev)
			if r.Ready || r.Success {
				t.Fatalf("ready with %s missing", perm)
			}
			if !slices.Equal(r.MissingPermissions, []string{perm}) || len(r.FailedChecks) != 0 {
				t.Fatalf("missing %v failed %v", r.MissingPermissions, r.FailedChecks)
			}
			c, _ := checkByName(r, perm)
			if c.OK || c.UserActionRequired == "" || c.Missing == "" {
				t.Fatalf("check %+v", c)
			}
			if r.ErrorCode != fault.CodeSolopiNotReady || r.UserActionRequired != c.UserActionRequired {
				// One missing permission: the top-level action is exactly its
				// own, not diluted by the generic "ready" advice.
				t.Fatalf("errorCode %q userAction %q", r.ErrorCode, r.UserActionRequired)
			}
			for _, c := range r.Checks {
				if c.Name != perm && c.Name != device.CheckReady && !c.OK {
					t.Errorf("check %s failed too", c.Name)
				}
			}
		})
	}
}

func TestEvaluateHealthRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		health  string
		missing []string
		failed  []string
		ready   bool
	}{
		{"all", `{"appInitialized":true,"permissions":{"adb":true,"float":true,"background":true,"powerSave":true,"accessibility":true},"autoStart":true,"ready":true}`, nil, nil, true},
		{"no permissions object", `{"appInitialized":true,"autoStart":true,"ready":false}`,
			[]string{"accessibility", "adb", "background", "float", "powerSave"}, []string{"permissions"}, false},
		{"key absent", `{"appInitialized":true,"permissions":{"adb":true,"float":true,"background":true,"powerSave":true},"autoStart":true,"ready":false}`,
			[]string{"accessibility"}, []string{"permissions"}, false},
		{"string true is not true", `{"appInitialized":"true","permissions":{"adb":1,"float":true,"background":true,"powerSave":true,"accessibility":true},"autoStart":true,"ready":true}`,
			[]string{"adb"}, []string{"appInitialized"}, false},
		{"autoStart and init", `{"appInitialized":false,"permissions":{"adb":true,"float":true,"background":true,"powerSave":true,"accessibility":true},"autoStart":false,"ready":false}`,
			nil, []string{"appInitialized", "autoStart"}, false},
		{"ready false alone", `{"appInitialized":true,"permissions":{"adb":true,"float":true,"background":true,"powerSave":true,"accessibility":true},"autoStart":true,"ready":false}`,
			nil, []string{"ready"}, false},
	}
	for _, c := range cases {
		h, _ := device.DecodeObject([]byte(c.health))
		v := device.EvaluateHealth(h)
		if !slices.Equal(v.MissingPermissions, append([]string{}, c.missing...)) || !slices.Equal(v.FailedChecks, append([]string{}, c.failed...)) || v.Ready != c.ready {
			t.Errorf("%s: missing %v failed %v ready %v", c.name, v.MissingPermissions, v.FailedChecks, v.Ready)
		}
	}
}

func TestDoctorNotInstalled(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	if err := dev.Phone.UninstallApp(protocol.DefaultPackage); err != nil {
		t.Fatal(err)
	}
	r := runDoctor(t, dev)
	if r.Installed || r.Ready || r.ErrorCode != fault.CodeSolopiNotInstalled || r.UserActionRequired == "" {
		t.Fatalf("%+v", r)
	}
	b, _ := json.Marshal(r)
	o, _ := device.DecodeObject(b)
	if installed, ok := o.Flag("installed"); !ok || installed || !isArray(o["missingPermissions"]) {
		t.Fatalf("json %s", b)
	}
}

func TestDoctorControlServiceDown(t *testing.T) {
	t.Parallel()
	o := fastSession()
	o.StartupTimeout = 200 * time.Millisecond
	_, err := Doctor(context.Background(), notStarting(t), DoctorOptions{Session: o})
	e := wantCode(t, err, fault.CodeControlServiceNotReady, fault.Transport)
	checks, _ := e.Details["checks"].([]device.Check)
	var found bool
	for _, c := range checks {
		if c.Name == device.CheckControlService {
			found = !c.OK && c.UserActionRequired != ""
		}
	}
	if !found || e.Details["installed"] != true {
		t.Fatalf("details %v", e.Details)
	}
}

func TestDoctorProtocolMismatchCheck(t *testing.T) {
	t.Parallel()
	dev := newSimDevice(t)
	answerFault(t, dev, sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "capabilities"},
		Set: map[string]any{"agentProtocolVersion": "0.9"}})
	_, err := Doctor(context.Background(), dev, DoctorOptions{Session: fastSession()})
	e := wantCode(t, err, fault.CodeProtocolVersionMismatch, fault.Transport)
	checks, _ := e.Details["checks"].([]device.Check)
	ok := false
	for _, c := range checks {
		if c.Name == device.CheckProtocolVersions && !c.OK {
			ok = true
		}
	}
	if !ok {
		t.Fatalf("no failed protocolVersions check: %v", checks)
	}
}

// FuzzEvaluateHealth: only a health object whose every requirement is a
// literal true is ever judged ready.
func FuzzEvaluateHealth(f *testing.F) {
	f.Add(`{"success":true,"protocolVersion":"2.0","appInitialized":true,"permissions":{"adb":true,"float":true,"background":true,"powerSave":true,"accessibility":true},"autoStart":true,"ready":true}`)
	f.Add(`{"ready":true}`)
	f.Add(`{"appInitialized":true,"permissions":[],"autoStart":true,"ready":true}`)
	f.Fuzz(func(t *testing.T, body string) {
		h, err := device.DecodeObject([]byte(body))
		if err != nil {
			return
		}
		v := device.EvaluateHealth(h)
		if !v.Ready {
			return
		}
		perms, _ := h["permissions"].(map[string]any)
		for _, p := range []string{"appInitialized", "autoStart", "ready", "permissions.adb", "permissions.float",
			"permissions.background", "permissions.powerSave", "permissions.accessibility"} {
			o, k := h, p
			if name, ok := strings.CutPrefix(p, "permissions."); ok {
				o, k = device.WireObject(perms), name
			}
			if v, ok := o.Flag(k); !ok || !v {
				t.Fatalf("ready although %s is %v in %s", p, o[k], body)
			}
		}
	})
}

// healthPermissionKeys returns the five keys of health.permissions, sorted.
func healthPermissionKeys() []string {
	return []string{device.CheckAccessibility, device.CheckAdb, device.CheckBackground, device.CheckFloat, device.CheckPowerSave}
}

func isArray(v any) bool { _, ok := v.([]any); return ok }
