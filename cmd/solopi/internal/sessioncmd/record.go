package sessioncmd

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func parseRecordStart(c *cli.Context) (sessions.RecordStartOptions, error) {
	o := sessions.RecordStartOptions{CaseName: c.String("name"), TargetPackage: c.String("target-package"), Description: c.String("description")}
	if strings.TrimSpace(o.CaseName) == "" {
		return o, fault.Usage(sessions.CodeInvalidOption, "--name must not be blank")
	}
	if strings.TrimSpace(o.TargetPackage) == "" {
		return o, fault.Usage(sessions.CodeInvalidOption, "--target-package must not be blank")
	}
	var err error
	o.SessionTimings, err = timings(c, "ack-timeout")
	return o, err
}

func recordCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "record-start",
			Usage: "start an interactive recording of a new case on the device",
			Description: "Exit 0 only when the session reaches `recording` (the tester may now operate the phone);\n" +
				"`failed` is exit 2. On timeout or Ctrl-C the session this command started is stopped (exit 124/130,\n" +
				"with sessionId, phase and cleanup).",
			UsageText: "solopi record-start --name CASE --target-package PKG [--description TEXT] [--ack-timeout 30] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "case name", Required: true},
				&cli.StringFlag{Name: "target-package", Usage: "app under test (must be installed)", Required: true},
				&cli.StringFlag{Name: "description", Usage: "case description"},
			}, timingFlags("ack-timeout", 30, 0.5, "the recording to start")...),
			Action: sessionAction(exit, e, parseRecordStart, sessionCall(sessions.StartRecording)),
		},
		{
			Name:      "record-status",
			Usage:     "show the interactive recording snapshot",
			UsageText: "solopi record-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's recording is this session")},
			Action:    sessionAction(exit, e, sessionIDOption, sessionCall(sessions.RecordingStatus)),
		},
		{
			Name:  "record-stop",
			Usage: "stop our interactive recording and wait until it is saved",
			Description: "Exit 0 when the session is `stopped` (with caseId, or cancelledBeforeStart when it never began);\n" +
				"exit 2 when it failed or the device's session is not --session-id.",
			UsageText: "solopi record-stop --session-id ID [--stop-timeout 60] [--poll-interval 0.5]",
			Flags:     append([]cli.Flag{sessionIDFlag(true, "the sessionId record-start printed")}, timingFlags("stop-timeout", 60, 0.5, "the recording to be saved")...),
			Action:    sessionAction(exit, e, parseStop("stop-timeout"), stopCall(sessions.StopRecording)),
		},
	}
}
