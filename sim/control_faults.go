package sim

import (
	"errors"
	"time"

	"github.com/solopi-dev/solopi/sim/android"
)

// hostFaults are the control routes of the faults that test a host's
// defences against a misbehaving device or link: odd answers, lost or late
// mutations, a refused control port, another client taking the replay
// slot, shell commands that print what a vendor build prints.
func hostFaults() map[string]faultFunc {
	return map[string]faultFunc{
		"command-output": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				Command string
				Args    []string
				Outputs []android.CommandOutput
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			return nil, d.Phone.OverrideCommand(in.Command, in.Args, in.Outputs...)
		},
		"answer-fault": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				AnswerFault
				Clear bool `json:"clear"`
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if in.Clear {
				d.ClearAnswerFaults()
				return nil, nil
			}
			return nil, d.AddAnswerFault(in.AnswerFault)
		},
		"mutation-fault": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct {
				MutationFault
				Clear bool `json:"clear"`
			}
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if in.Clear {
				d.ClearMutationFaults()
				return nil, nil
			}
			return nil, d.AddMutationFault(in.MutationFault)
		},
		"refuse-dial": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ Times int }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			d.RefuseDials(in.Times)
			return nil, nil
		},
		"scan-attach-delay": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ DelayMs int64 }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			if in.DelayMs < 0 {
				return nil, errors.New("delayMs must not be negative")
			}
			d.App.SetScanAttachDelay(time.Duration(in.DelayMs) * time.Millisecond)
			return nil, nil
		},
		"replace-replay": func(f *Farm, d *Device, b []byte) (map[string]any, error) {
			var in struct{ CaseName string }
			if err := decode(b, &in); err != nil {
				return nil, err
			}
			req, run, err := d.App.ReplaceReplay(in.CaseName)
			return map[string]any{"requestId": req, "runId": run}, err
		},
	}
}
