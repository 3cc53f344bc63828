package managedcmd

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/controlplane"
	"github.com/solopi-dev/solopi/managed/devicehost"
)

type managedServeOptions struct {
	bearerToken string
	bind        string
	port        int
	host        string
	roots       []string
	limits      serveLimits
}

// serveLimits bound what one connection may hold: a client that sends its
// headers slowly, or headers and then no body, is cut off, and stopping the
// server waits a bounded grace for requests in flight.
type serveLimits struct {
	readHeader, read, write, idle, grace time.Duration
}

func defaultServeLimits() serveLimits {
	return serveLimits{readHeader: 5 * time.Second, read: 30 * time.Second, write: time.Minute,
		idle: time.Minute, grace: 3 * time.Second}
}

// managedListening is the line managed-serve prints once it listens.
type managedListening struct {
	Listening struct {
		Address string `json:"address"`
		URL     string `json:"url"`
	} `json:"listening"`
}

type managedServeResult struct {
	Success bool   `json:"success"`
	Stopped bool   `json:"stopped"`
	Bind    string `json:"bind"`
	Port    int    `json:"port"`
	URL     string `json:"url"`
}

// runManagedServe serves the control plane until ctx ends (SIGINT or
// SIGTERM). It writes one JSON line to out as soon as it listens, so that a
// script using --port 0 learns the port; the command's final JSON object
// follows when it stops.
func runManagedServe(ctx context.Context, s managed.Store, o managedServeOptions, out io.Writer) (cmdutil.Result, error) {
	if !managed.ValidOwnerToken(o.bearerToken) {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidBearerToken, "--bearer-token must be 16 to 256 URL-safe characters")
	}
	if err := controlplane.ValidateBind(o.bind); err != nil {
		return cmdutil.Result{}, err
	}
	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	h, err := controlplane.New(srvCtx, controlplane.Config{Store: s, BearerToken: o.bearerToken, ValidatePlan: devicehost.ValidatePlan,
		Host: o.host, ArtifactsRoots: o.roots})
	if err != nil {
		return cmdutil.Result{}, err
	}
	ln, err := controlplane.Listen(o.bind, o.port)
	if err != nil {
		return cmdutil.Result{}, err
	}
	var line managedListening
	line.Listening.Address, line.Listening.URL = ln.Addr().String(), controlplane.URL(ln)
	b, _ := cmdutil.Encode(line, false)
	if _, err := out.Write(b); err != nil {
		ln.Close()
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeOutputFailed, "cannot write to stdout", err)
	}
	lim := o.limits
	srv := &http.Server{Handler: h, ReadHeaderTimeout: lim.readHeader, ReadTimeout: lim.read, WriteTimeout: lim.write,
		IdleTimeout: lim.idle, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		// Requests in flight get a bounded grace; whatever still holds a
		// connection after it (a client that never sends its body) is cut.
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.grace)
		if srv.Shutdown(grace) != nil {
			srv.Close()
		}
		cancel()
		err = nil
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeServeFailed, "the managed API stopped", err)
	}
	_, port, _ := net.SplitHostPort(line.Listening.Address)
	p, _ := strconv.Atoi(port)
	res := managedServeResult{Success: true, Stopped: true, Bind: o.bind, Port: p, URL: line.Listening.URL}
	// Stopping the server is the end of its work, by a signal.
	return cmdutil.WithKind(res, fault.Interrupted), nil
}

func newCmdServe(e cmdutil.Env) *cli.Command {
	var db string
	o := &managedServeOptions{limits: defaultServeLimits()}
	roots := &cli.StringSlice{}
	return &cli.Command{
		Name:  "managed-serve",
		Usage: "serve the managed store's HTTP API (loopback only, Bearer token) and River's dashboard",
		UsageText: "solopi managed-serve --bearer-token TOKEN [--bind 127.0.0.1|::1|localhost] [--port 8765]\n" +
			"  [--artifacts-root DIR]...",
		Description: "Output: two JSON lines. The first, as soon as the API listens:\n" +
			"  {\"listening\":{\"address\":\"127.0.0.1:8765\",\"url\":\"http://127.0.0.1:8765\"}}\n" +
			"(with --port 0 it names the port taken). The second when SIGINT/SIGTERM stops the server:\n" +
			"  {\"success\":true,\"stopped\":true,\"bind\":…,\"port\":…,\"url\":…}, exit 130.\n\n" +
			"Routes: GET /health (no token); with Authorization: Bearer TOKEN: GET|POST /v1/devices,\n" +
			"POST /v1/tasks (a generated ownerToken is returned once, in that response), GET /v1/tasks/{id},\n" +
			"GET /v1/tasks/{id}/events?after=N, GET /v1/tasks/{id}/report, POST /v1/tasks/{id}/cancel,\n" +
			"POST /v1/recover, POST /v1/retention/purge; River's dashboard under /riverui/ (a browser logs\n" +
			"in with any user name and the token as password). Bodies are JSON objects of at most 1 MiB.\n" +
			"Only a loopback Host is served (foreign_host); state-changing requests from another origin or site\n" +
			"are refused (cross_site_request), dashboard ones need the dashboard's own Origin. A request has 5 s\n" +
			"for its headers and 30 s in all; SIGINT/SIGTERM gives requests in flight 3 s.\n" +
			"The API manages data only: it never reaches a device.",
		Flags: []cli.Flag{storeFlag(&db), hostFlag(&o.host),
			&cli.StringFlag{Name: "bearer-token", Destination: &o.bearerToken, Required: true, EnvVars: []string{"SOLOPI_MANAGED_BEARER_TOKEN"},
				Usage: "the API token, 16-256 URL-safe characters"},
			&cli.StringFlag{Name: "bind", Destination: &o.bind, Value: "127.0.0.1", Usage: "127.0.0.1, ::1 or localhost"},
			&cli.IntFlag{Name: "port", Destination: &o.port, Value: 8765, Usage: "TCP port (0 picks a free one and prints it)"},
			&cli.StringSliceFlag{Name: "artifacts-root", Destination: roots, Usage: "evidence roots POST /v1/retention/purge may clean on this host"},
		},
		Action: cmdutil.Local(e, onNewStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			o.roots = roots.Value()
			return runManagedServe(ctx, s, *o, e.Stdout)
		})),
	}
}
