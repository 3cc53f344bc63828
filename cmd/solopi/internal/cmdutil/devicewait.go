package cmdutil

import "github.com/urfave/cli/v2"

// DeviceWaitFlag is the global --device-wait option (seconds; 0, the
// default, fails at once with device_busy when another solopi process
// holds the phone).
func DeviceWaitFlag() cli.Flag {
	return &cli.Float64Flag{Name: deviceWaitFlag, Usage: "seconds a device command waits for a phone another solopi process holds (0: fail at once with device_busy)",
		EnvVars: []string{"SOLOPI_DEVICE_WAIT"}, Value: 0}
}
