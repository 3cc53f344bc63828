package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sort"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/sim/adbd"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// ControlHandler is the loopback HTTP control endpoint of `solopi sim
// serve`, separate from any device port: tests and users inject faults into
// a running simulator with it. Every route answers one JSON object.
//
//	GET  /v1/devices                          the devices and their fronts
//	POST /v1/devices/{serial}/{fault}         inject a fault (JSON body)
func (f *Farm) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/devices", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "devices": f.Describe()})
	})
	mux.HandleFunc("POST /v1/devices/{serial}/{fault}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := f.Device(r.PathValue("serial"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"success": false, "error": "no such device"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "error": err.Error()})
			return
		}
		out, err := f.inject(d, r.PathValue("fault"), body)
		if err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, errUnknownFault) {
				code = http.StatusNotFound
			}
			writeJSON(w, code, map[string]any{"success": false, "error": err.Error(), "faults": faultNames()})
			return
		}
		if out == nil {
			out = map[string]any{}
		}
		out["success"] = true
		writeJSON(w, http.StatusOK, out)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// DeviceInfo describes one device of the farm for `sim serve`.
type DeviceInfo struct {
	Serial string `json:"serial"`
	// AdbdAddress is what `adb connect` takes (real adb server path).
	AdbdAddress string `json:"adbdAddress,omitempty"`
	Model       string `json:"model"`
	Foreground  string `json:"foreground"`
}

// Describe lists the devices with their fronts.
func (f *Farm) Describe() []DeviceInfo {
	var out []DeviceInfo
	for _, d := range f.Devices() {
		_, model, _ := d.Props()
		pkg, act := d.Phone.Foreground()
		info := DeviceInfo{Serial: d.Serial(), Model: model, Foreground: pkg + "/" + act}
		if a := f.Adbd(d.Serial()); a != nil {
			info.AdbdAddress = a.Addr()
		}
		out = append(out, info)
	}
	return out
}

var errUnknownFault = errors.New("unknown fault")

type faultFunc func(f *Farm, d *Device, body []byte) (map[string]any, error)

// faults maps a control route to its injection.
func faults() map[string]faultFunc {
	m := map[string]faultFunc{
		"permission": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Name    string `json:"name"`
				Granted bool   `json:"granted"`
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.SetPermission(in.Name, in.Granted)
		},
		"app-initialized": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Initialized bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetAppInitialized(in.Initialized)
			return nil, nil
		},
		"restart-app": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			d.App.Restart()
			return nil, nil
		},
		"touch-case": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ CaseName string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.TouchCase(in.CaseName)
		},
		"competing-replay": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ CaseName string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			req, run, err := d.App.StartCompetingReplay(in.CaseName)
			return map[string]any{"requestId": req, "runId": run}, err
		},
		"screenshot-fault": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Error   string
				DelayMs int64
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			var fe error
			if in.Error != "" {
				fe = fmt.Errorf("%w: %s", android.ErrScreenshotFault, in.Error)
			}
			d.Phone.SetScreenshotFault(fe, time.Duration(in.DelayMs)*time.Millisecond)
			return nil, nil
		},
		"command-stall": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Command string
				DelayMs int64
				Hang    bool
				Release bool
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			switch {
			case in.Release && !in.Hang && in.DelayMs == 0:
				d.Phone.ReleaseCommand(in.Command)
				return nil, nil
			case in.Hang && !in.Release && in.DelayMs == 0:
				return nil, d.Phone.StallCommand(in.Command, 0)
			case in.DelayMs > 0 && !in.Hang && !in.Release:
				return nil, d.Phone.StallCommand(in.Command, time.Duration(in.DelayMs)*time.Millisecond)
			}
			return nil, fmt.Errorf("give exactly one of delayMs > 0, hang: true or release: true")
		},
		"settle-delay": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ DelayMs int64 }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetSettleDelay(time.Duration(in.DelayMs) * time.Millisecond)
			return nil, nil
		},
		"fail-settle": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Fail bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.FailSettle(in.Fail)
			return nil, nil
		},
		"adb-connect-outcome": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Outcome string
				DelayMs int64
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			o, ok := map[string]core.AdbConnectOutcome{"succeed": core.AdbConnectSucceed, "fail": core.AdbConnectFail,
				"hang": core.AdbConnectHang, "schedule_fail": core.AdbConnectScheduleFail}[in.Outcome]
			if !ok {
				return nil, fmt.Errorf("outcome must be succeed, fail, hang or schedule_fail")
			}
			d.App.SetAdbConnectOutcome(o, time.Duration(in.DelayMs)*time.Millisecond)
			return nil, nil
		},
		"touch-service": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Available bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetTouchServiceAvailable(in.Available)
			return nil, nil
		},
		"operation-service": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Available bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetOperationServiceAvailable(in.Available)
			return nil, nil
		},
		"config-write-ignored": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Key    string
				Ignore bool
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetConfigWriteIgnored(in.Key, in.Ignore)
			return nil, nil
		},
		"permission-dialog-delay": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ DelayMs int64 }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetPermissionDialogDelay(time.Duration(in.DelayMs) * time.Millisecond)
			return nil, nil
		},
		"transient-window": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Package    string
				Bounds     ui.Rect
				DurationMs int64
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if in.Package == "" {
				in.Package = "com.android.systemui"
			}
			if in.Bounds.Empty() {
				w, _ := d.Phone.ScreenSize()
				in.Bounds = ui.Rect{Left: 0, Top: 0, Right: w, Bottom: 120}
			}
			d.Phone.ShowTransientWindow(in.Package, in.Bounds, time.Duration(in.DurationMs)*time.Millisecond)
			return nil, nil
		},
		"screen-record-confirm": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Grant bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.ConfirmScreenRecord(in.Grant)
		},
		"screen-record-auto-confirm": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ On bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetScreenRecordAutoConfirm(in.On)
			return nil, nil
		},
		"scan-result": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Content, Format string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.DeliverScanResult(in.Content, in.Format)
		},
		"camera-permission": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Granted bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetCameraPermission(in.Granted)
			return nil, nil
		},
		"camera-permission-answer": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Grant bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.RespondCameraPermission(in.Grant)
		},
		"close-scan-page": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			return nil, d.App.CloseScanPage()
		},
		"perf-cleanup-incomplete": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Times int }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetPerfCleanupIncomplete(in.Times)
			return nil, nil
		},
		"plugin-activity-bug": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ On bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetPluginActivityBug(in.On)
			return nil, nil
		},
		"uninstall-plugin": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Name string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.App.UninstallPlugin(in.Name)
		},
		"external-stress": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Active bool }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.App.SetExternalStress(in.Active)
			return nil, nil
		},
		"fail-replays": failReplays,
		"drop-adb": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			if a := f.Adbd(d.Serial()); a != nil {
				a.Drop()
			}
			if f.server != nil {
				if err := f.server.Kick(d.Serial()); err != nil {
					return nil, err
				}
			}
			return nil, nil
		},
		"adb-state": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ State string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if f.server == nil {
				return nil, fmt.Errorf("no adb server front")
			}
			if a := f.Adbd(d.Serial()); a != nil {
				a.SetOnline(in.State == string(adbd.StateDevice))
			}
			return nil, f.server.SetState(d.Serial(), adbd.State(in.State))
		},
	}
	maps.Copy(m, hostFaults())
	return m
}

// faultNames lists the control routes.
func faultNames() []string {
	var out []string
	for k := range faults() {
		out = append(out, k)
	}
	for k := range agentFaults() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (f *Farm) inject(d *Device, name string, body []byte) (map[string]any, error) {
	fn, ok := faults()[name]
	if !ok {
		fn, ok = agentFaults()[name]
	}
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownFault, name)
	}
	return fn(f, d, body)
}

// decode reads a JSON body (empty means all defaults) strictly.
func decode(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	if err := canonjson.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("bad request body: %w", err)
	}
	return nil
}
