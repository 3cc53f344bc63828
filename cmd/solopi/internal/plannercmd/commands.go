package plannercmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
)

// Commands are the pure-vision planner commands: agent-run (the whole loop
// on a device), planner-parse (check one raw model answer),
// planner-calibrate (negotiate the coordinate contract, no device) and
// planner-check (the endpoint preflight, no device).
func Commands(e cmdutil.Env) []*cli.Command { return commands(e, agentRunHooks{}) }

// commands are Commands with agent-run's hooks (the binary gives none).
func commands(e cmdutil.Env, h agentRunHooks) []*cli.Command {
	return []*cli.Command{newCmdAgentRun(e, h), newCmdPlannerParse(e), newCmdPlannerCalibrate(e), newCmdPlannerCheck(e)}
}

// plannerSize reads WxH.
func plannerSize(flag, v string) (int, int, error) {
	w, h, ok := strings.Cut(strings.ToLower(v), "x")
	if ok {
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if err1 == nil && err2 == nil && wi > 0 && hi > 0 && wi <= 20000 && hi <= 20000 {
			return wi, hi, nil
		}
	}
	return 0, 0, fault.Usagef(fault.CodeInvalidOption, "--%s must be WIDTHxHEIGHT in pixels, e.g. 1080x2340", flag)
}

// plannerQuote names a value for error messages without echoing long input.
func plannerQuote(v string) string {
	if len(v) > 60 {
		v = v[:60] + "…"
	}
	return fmt.Sprintf("%q", v)
}
