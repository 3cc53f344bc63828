package sessioncmd

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func parseStressStart(c *cli.Context) (sessions.StressOptions, error) {
	o := sessions.StressOptions{CPUCount: c.Int("cpu-count"), CPUPercent: c.Int("cpu-percent"), MemoryMB: c.Int("memory"), DurationSec: c.Int("duration")}
	// Given flags must be positive: 0 would silently mean "not requested".
	for _, f := range []string{"cpu-count", "cpu-percent", "memory"} {
		if c.IsSet(f) && c.Int(f) < 1 {
			return o, fault.Usagef(sessions.CodeInvalidOption, "--%s must be at least 1", f)
		}
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	var err error
	o.SessionTimings, err = timings(c, "ack-timeout")
	return o, err
}

func stressCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "stress-start",
			Usage: "put the device under bounded CPU and/or memory load",
			Description: "Exit 0 once `running`; the device stops the load by itself after --duration. Stress is never\n" +
				"left running by this command: on failure, timeout (124) or Ctrl-C (130) it stops its own session.",
			UsageText: "solopi stress-start [--cpu-count N --cpu-percent P] [--memory MB] [--duration 60] [--ack-timeout 30] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{
				&cli.IntFlag{Name: "cpu-count", Usage: "busy CPUs, 1..online CPUs (with --cpu-percent)"},
				&cli.IntFlag{Name: "cpu-percent", Usage: "load per busy CPU, 1..100 (with --cpu-count)"},
				&cli.IntFlag{Name: "memory", Usage: "memory to hold, 1..2048 MB"},
				&cli.IntFlag{Name: "duration", Usage: "seconds before the device removes the load, 1..3600", Value: 60},
			}, timingFlags("ack-timeout", 30, 0.5, "the load to run")...),
			Action: sessionAction(exit, e, parseStressStart, sessionCall(sessions.StartStress)),
		},
		{
			Name:      "stress-status",
			Usage:     "show the stress snapshot",
			UsageText: "solopi stress-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's stress session is this one")},
			Action:    sessionAction(exit, e, sessionIDOption, sessionCall(sessions.StressStatus)),
		},
		{
			Name:      "stress-stop",
			Usage:     "stop our stress session (exit 0 when stopped, also after the device's own auto-stop)",
			UsageText: "solopi stress-stop --session-id ID [--stop-timeout 30] [--poll-interval 0.5]",
			Flags:     append([]cli.Flag{sessionIDFlag(true, "the sessionId stress-start printed")}, timingFlags("stop-timeout", 30, 0.5, "the load to be removed")...),
			Action:    sessionAction(exit, e, parseStop("stop-timeout"), stopCall(sessions.StopStress)),
		},
	}
}
