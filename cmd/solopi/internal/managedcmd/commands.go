package managedcmd

import (
	"context"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/managed"
)

// The managed-* commands drive a device farm's store: SQLite on one host
// (the default), PostgreSQL across hosts. The store commands and the
// server touch no device; the workers and the probe reach this host's
// devices through managed/devicehost.

// DBEnv names the store when --database is not given.
const DBEnv = "SOLOPI_MANAGED_DB"

// Commands are the managed-* commands: the store, the control-plane server,
// the workers and the device probe.
func Commands(e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		newCmdHealth(e, "managed-init", "create or migrate the managed store and summarise it"),
		newCmdHealth(e, "managed-health", "summarise the managed store: devices by health, tasks by status, active assignments"),
		newCmdDeviceRegister(e), newCmdDeviceList(e), newCmdSubmit(e), newCmdStatus(e), newCmdEvents(e), newCmdReport(e),
		newCmdCancel(e), newCmdRecover(e), newCmdPurge(e),
		newCmdWorkerOnce(e), newCmdWorkerLoop(e), newCmdDeviceProbe(e),
		newCmdServe(e),
	}
}

func defaultManagedDB() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".solopi", "managed.sqlite")
	}
	return filepath.Join(home, ".solopi", "managed.sqlite")
}

// storeFlag binds --database.
func storeFlag(into *string) cli.Flag {
	return &cli.StringFlag{Name: "database", Destination: into, EnvVars: []string{DBEnv}, Value: defaultManagedDB(),
		Usage: "the managed store: a SQLite file path, or a postgres:// URL for a farm shared by several hosts"}
}

// withStore opens the store database names for fn and closes it after,
// creating and migrating it when needed.
func withStore(ctx context.Context, database string, fn func(s managed.Store) (cmdutil.Result, error)) (cmdutil.Result, error) {
	return openStore(ctx, database, managed.Options{}, fn)
}

func openStore(ctx context.Context, database string, opts managed.Options, fn func(s managed.Store) (cmdutil.Result, error)) (cmdutil.Result, error) {
	s, err := managed.Open(ctx, database, opts)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer s.Close()
	return fn(s)
}

// hostName names this machine in attempts and purges.
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

func hostFlag(into *string) cli.Flag {
	return &cli.StringFlag{Name: "host", Destination: into, Value: hostName(), Usage: "this machine's name, as its workers record it"}
}

func taskIDFlag(into *string) cli.Flag {
	return &cli.StringFlag{Name: "task-id", Destination: into, Required: true, Usage: "the exact taskId"}
}

func ownerTokenFlag(into *string, required bool, usage string) cli.Flag {
	return &cli.StringFlag{Name: "owner-token", Destination: into, Required: required, EnvVars: []string{"SOLOPI_MANAGED_OWNER_TOKEN"}, Usage: usage}
}

// onStore is the run function of a command that runs on an existing store
// alone: it never creates a database (a mistyped --database is
// database_not_found, not a new empty farm) and never migrates one.
func onStore(database *string, run func(ctx context.Context, s managed.Store) (cmdutil.Result, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(ctx context.Context, _ *cmdutil.Globals) (cmdutil.Result, error) {
		return openStore(ctx, *database, managed.Options{Existing: true}, func(s managed.Store) (cmdutil.Result, error) { return run(ctx, s) })
	}
}

// onNewStore is the run function of a command that may start a farm:
// managed-init, -device-register, -submit and -serve create and migrate the
// store when needed.
func onNewStore(database *string, run func(ctx context.Context, s managed.Store) (cmdutil.Result, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(ctx context.Context, _ *cmdutil.Globals) (cmdutil.Result, error) {
		return withStore(ctx, *database, func(s managed.Store) (cmdutil.Result, error) { return run(ctx, s) })
	}
}
