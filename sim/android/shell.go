package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/solopi-dev/solopi/sim/android/vfs"
	shexpand "mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// shellCtx is what a shell command implementation sees.
type shellCtx struct {
	p      *Phone
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	dir    string
}

// abs resolves a command argument against the shell's working directory.
func (sc *shellCtx) abs(name string) string {
	if !strings.HasPrefix(name, "/") {
		name = path.Join(sc.dir, name)
	}
	return name
}

// locked runs f with the phone locked and sc's stdout buffered, so that a
// slow reader of the command's output never holds up the phone.
func (sc *shellCtx) locked(f func()) {
	var buf bytes.Buffer
	out := sc.stdout
	sc.stdout = &buf
	sc.p.view(f)
	sc.stdout = out
	_, _ = out.Write(buf.Bytes())
}

func (sc *shellCtx) errf(format string, a ...any) { fmt.Fprintf(sc.stderr, format, a...) }
func (sc *shellCtx) outf(format string, a ...any) { fmt.Fprintf(sc.stdout, format, a...) }

type shellCmd func(sc *shellCtx, args []string) int

// commandTable maps command names (basenames) to implementations. It is
// built per phone, so nothing here is global mutable state.
func (p *Phone) commandTable() map[string]shellCmd {
	m := map[string]shellCmd{}
	for _, group := range []map[string]shellCmd{amCommands(), pmCommands(), inputCommands(), fsCommands(), sysCommands()} {
		for k, v := range group {
			m[k] = v
		}
	}
	return m
}

// shellEnv is the environment of adbd's shell on a stock device.
func (p *Phone) shellEnv() []string {
	return []string{
		"PATH=/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
		"HOME=/", "SHELL=/bin/sh", "USER=shell", "LOGNAME=shell", "HOSTNAME=" + p.cfg.Device,
		"TMPDIR=/data/local/tmp", "EXTERNAL_STORAGE=/sdcard", "ANDROID_DATA=/data",
		"ANDROID_ROOT=/system", "ANDROID_STORAGE=/storage", "TERM=dumb",
	}
}

// RunShell runs a command line the way adbd's `sh -c` does and returns its
// exit status. Parsing and the shell language (quoting, ;, &&, ||, $?,
// redirections, pipes, functions) come from mvdan.cc/sh with the MirBSD ksh
// dialect, since Android's shell is mksh; every command is dispatched to the
// simulated device's implementations and every file access goes to the
// phone's FS, never to the host. An empty cmd is an interactive shell: the
// commands are read from stdin and run as they arrive, until EOF or exit.
func (p *Phone) RunShell(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangMirBSDKorn))
	if strings.TrimSpace(cmd) == "" && stdin != nil {
		return p.runInteractive(ctx, parser, stdin, stdout, stderr)
	}
	file, err := parser.Parse(strings.NewReader(cmd), "")
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	// The runner needs an *os.File for stdin. We own the pipe so that its
	// read end is closed when the command is done: a copier blocked on a
	// full pipe then fails instead of leaking.
	var in *os.File
	if stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
			return 1
		}
		go func() {
			_, _ = io.Copy(pw, stdin)
			pw.Close()
		}()
		defer pr.Close()
		in = pr
	}
	r, err := p.newRunner(in, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	return exitCode(r.Run(ctx, file), stderr)
}

// runInteractive executes statements read from stdin one by one.
func (p *Phone) runInteractive(ctx context.Context, parser *syntax.Parser, stdin io.Reader, stdout, stderr io.Writer) int {
	r, err := p.newRunner(nil, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	status := 0
	perr := parser.Interactive(stdin, func(stmts []*syntax.Stmt) bool {
		if parser.Incomplete() {
			return true
		}
		for _, st := range stmts {
			status = exitCode(r.Run(ctx, st), stderr)
			if r.Exited() || ctx.Err() != nil {
				return false
			}
		}
		return true
	})
	if perr != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", perr)
		return 1
	}
	return status
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if st, ok := interp.IsExitStatus(err); ok {
		return int(st)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 130
	}
	fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
	return 1
}

// newRunner configures an interpreter confined to the simulated device.
func (p *Phone) newRunner(stdin *os.File, stdout, stderr io.Writer) (*interp.Runner, error) {
	cmds := p.commandTable()
	var in io.Reader // a typed nil *os.File would look like a real stdin
	if stdin != nil {
		in = stdin
	}
	return interp.New(
		interp.Env(shexpand.ListEnviron(p.shellEnv()...)),
		interp.Dir("/"),
		interp.StdIO(in, stdout, stderr),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error { return p.exec(ctx, cmds, args) }
		}),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			// `command -v` would search the host's PATH; answer it from the
			// simulated command table instead.
			if len(args) >= 3 && args[0] == "command" && args[1] == "-v" {
				return append([]string{"which"}, args[2:]...), nil
			}
			return args, nil
		}),
		interp.OpenHandler(func(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return p.fs.OpenFile(absIn(ctx, name), flag, perm)
		}),
		interp.StatHandler(func(ctx context.Context, name string, _ bool) (fs.FileInfo, error) {
			return p.fs.Stat(absIn(ctx, name))
		}),
		interp.ReadDirHandler2(func(ctx context.Context, name string) ([]fs.DirEntry, error) {
			infos, err := p.fs.ReadDir(absIn(ctx, name))
			if err != nil {
				return nil, err
			}
			out := make([]fs.DirEntry, len(infos))
			for i, fi := range infos {
				out[i] = fs.FileInfoToDirEntry(fi)
			}
			return out, nil
		}),
		interp.AccessHandler(func(ctx context.Context, name string, mode interp.AccessMode) error {
			fi, err := p.fs.Stat(name)
			if err != nil {
				return err
			}
			if mode&interp.AccessWrite != 0 && !vfs.Writable(vfs.Canonical(name)) {
				return &fs.PathError{Op: "access", Path: name, Err: fs.ErrPermission}
			}
			if mode&interp.AccessExec != 0 && !fi.IsDir() {
				return &fs.PathError{Op: "access", Path: name, Err: fs.ErrPermission}
			}
			return nil
		}),
	)
}

func absIn(ctx context.Context, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return path.Join(interp.HandlerCtx(ctx).Dir, name)
}

func (p *Phone) exec(ctx context.Context, cmds map[string]shellCmd, args []string) error {
	hc := interp.HandlerCtx(ctx)
	name := args[0]
	impl := cmds[path.Base(name)]
	if impl == nil || strings.Contains(name, "/") && !strings.HasPrefix(name, "/system/bin/") {
		fmt.Fprintf(hc.Stderr, "/system/bin/sh: %s: inaccessible or not found\n", name)
		return interp.NewExitStatus(127)
	}
	if !p.waitStall(ctx, path.Base(name)) {
		return interp.NewExitStatus(130)
	}
	sc := &shellCtx{p: p, ctx: ctx, stdin: hc.Stdin, stdout: hc.Stdout, stderr: hc.Stderr, dir: hc.Dir}
	// The runner hands over a typed nil *os.File when it has no stdin.
	if f, ok := sc.stdin.(*os.File); sc.stdin == nil || ok && f == nil {
		sc.stdin = strings.NewReader("")
	}
	if code := impl(sc, args[1:]); code != 0 {
		return interp.NewExitStatus(uint8(code))
	}
	return nil
}
