package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/inspector"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// inspectorStarted, when set (by this package's tests, which cannot read
// stderr while the command runs), learns the inspector's URL.
var inspectorStarted func(url string)

// inspectOptions are inspect's flags.
type inspectOptions struct {
	serve    bool
	recordTo string
}

// newCmdInspect is inspect: the tree once, or with --serve the live
// inspector page until Ctrl-C. It listens on the loopback interface only;
// there is no address to choose.
func newCmdInspect(e cmdutil.Env) *cli.Command {
	o := &inspectOptions{}
	return &cli.Command{
		Name: "inspect", Usage: "print the current page's accessibility tree; --serve shows it live over the screen in a browser page (loopback only)",
		UsageText: "solopi inspect [--serve [--record-to FILE]]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "serve", Destination: &o.serve, Usage: "serve the live inspector on 127.0.0.1 (its URL is announced as one JSON line on stderr) until Ctrl-C"},
			&cli.StringFlag{Name: "record-to", Destination: &o.recordTo, Usage: "with --serve: the page's click, input and assert buttons act on the phone and append each step to this case file (implies --serve)"},
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runInspect(ctx, d, o)
		}),
	}
}

// inspectOnce is inspect without --serve: the page answer with success.
func inspectOnce(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
	return cmdutil.WithSession(ctx, d, func(s *device.Session) (cmdutil.Result, error) {
		r, err := readiness.Inspect(ctx, s)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return cmdutil.OK(canonjson.Overlay{Base: r, Fields: answerResult{Success: true}}), nil
	})
}

func runInspect(ctx context.Context, d cmdutil.DeviceDeps, o *inspectOptions) (cmdutil.Result, error) {
	if !o.serve && o.recordTo == "" {
		return inspectOnce(ctx, d)
	}
	if o.recordTo != "" {
		// An unusable file is refused before any device contact.
		if err := inspector.CheckRecordTo(o.recordTo); err != nil {
			return cmdutil.Result{}, err
		}
	}
	// The app under inspection stays in front.
	s, err := d.Session(ctx, true)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer s.Close()
	res, err := inspector.Serve(ctx, inspector.Options{Session: s, RecordTo: o.recordTo}, func(url string) {
		// A stderr nobody reads loses only the announcement: the final
		// JSON names the URL too.
		_ = inspector.Announce(d.G.PromptWriter(), url)
		if inspectorStarted != nil {
			inspectorStarted(url)
		}
	})
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(res), nil
}
