package agentcmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/sim"
)

// The app under test of the agent tests: a login form whose "Sign in"
// title and button make an ambiguous selector, and a second screen.
const (
	loginPkg     = "com.example.login"
	loginWelcome = ".WelcomeActivity"
	signIn       = "--resource-id=" + loginPkg + ":id/sign_in_button"
)

// withReplay are the agent commands plus the replay commands a test
// contends for the device with.
func withReplay(e cmdutil.Env) []*cli.Command { return append(Commands(e), replaycmd.Commands(e)...) }

// rig runs the agent commands against a simulated phone that shows the
// login app.
type rig struct {
	*cmdtest.CLI
	t   *testing.T
	dev *sim.Device
}

func newRig(t *testing.T, o sim.Options) *rig {
	if o.TimeScale == 0 {
		// An unobserved session expires after 30 s of device time: at
		// this speed-up 3 s, ample for a first observation on a busy
		// machine.
		o.TimeScale = 10
	}
	dev := cmdtest.Device(t, o)
	if err := dev.Phone.LaunchApp(loginPkg); err != nil {
		t.Fatal(err)
	}
	return &rig{CLI: cmdtest.New(t, withReplay, dev), t: t, dev: dev}
}

// expect runs a command and checks its exit code and schema (the
// command's name).
func (r *rig) expect(code int, args ...string) map[string]any {
	r.t.Helper()
	return r.Expect(code, args[0], args...)
}

// observe takes a new observation of the session id names and returns
// its observationId (agent-act names the observation it acts on).
func (r *rig) observe(id []string) string {
	r.t.Helper()
	return obj(r.expect(0, append([]string{"agent-observe"}, id...)...), "observation")["observationId"].(string)
}

// parseError runs a command line the parser refuses: its text on stderr,
// nothing on stdout, exit 3.
func (r *rig) parseError(args ...string) {
	r.t.Helper()
	if res := r.Run(args...); res.Code != 3 || len(res.Stdout) != 0 || len(res.Stderr) == 0 {
		r.t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, res.Code, res.Stdout, res.Stderr)
	}
}

// foreground is the package and activity in front.
func (r *rig) foreground() (string, string) { return r.dev.Phone.Foreground() }

// agentMutations counts the Agent mutations the device handled.
func (r *rig) agentMutations() int {
	n := 0
	for _, e := range r.dev.Phone.Logcat() {
		if strings.Contains(e.Tag+": "+e.Msg, "AdbSchemeActivity: scheme agent result") {
			n++
		}
	}
	return n
}

// noTokenIn fails when any output seen so far contains the token.
func (r *rig) noTokenIn(tok string) {
	r.t.Helper()
	for i, o := range r.Outputs() {
		if bytes.Contains(o, []byte(tok)) {
			r.t.Fatalf("output %d contains the owner token: %s", i, o)
		}
	}
}

func obj(m map[string]any, path ...string) map[string]any { return cmdtest.Obj(m, path...) }
