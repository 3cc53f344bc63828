// Package shell is the simulated phone's sh: the shell language comes from
// mvdan.cc/sh (MirBSD ksh dialect, as Android's mksh), every command is
// dispatched to a table of Go implementations, and every file access goes to
// the phone's virtual file system, never to the host. It also provides the
// device-independent toybox commands (files, text, sleep, date ...).
//
// It is separate from the phone because none of this needs apps, windows or
// input: the phone adds its own commands (am, pm, input, dumpsys, logcat
// ...) to the table and runs command lines through a Shell.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/vfs"
	shexpand "mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Proc is what a command implementation sees: one run of a command.
type Proc struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dir    string // the shell's working directory
	sh     *Shell
}

// Abs resolves a command argument against the shell's working directory.
func (sc *Proc) Abs(name string) string {
	if !strings.HasPrefix(name, "/") {
		name = path.Join(sc.Dir, name)
	}
	return name
}

// Errf prints to the command's stderr.
func (sc *Proc) Errf(format string, a ...any) { fmt.Fprintf(sc.Stderr, format, a...) }

// Outf prints to the command's stdout.
func (sc *Proc) Outf(format string, a ...any) { fmt.Fprintf(sc.Stdout, format, a...) }

// Command is one command's implementation; it returns the exit status.
type Command func(sc *Proc, args []string) int

// Shell runs command lines on one device. Commands maps command names
// (basenames) to implementations; Env is the environment of adbd's shell.
// Before, when set, runs before every command with its basename; false
// means the caller went away first and the command exits 130 unrun.
type Shell struct {
	FS       *vfs.FS
	Clock    clock.Clock
	Env      []string
	Commands map[string]Command
	Before   func(ctx context.Context, name string) bool
}

// Run runs a command line the way adbd's `sh -c` does and returns its
// exit status. Parsing and the shell language (quoting, ;, &&, ||, $?,
// redirections, pipes, functions) come from mvdan.cc/sh with the MirBSD ksh
// dialect, since Android's shell is mksh; every command is dispatched to the
// simulated device's implementations and every file access goes to the
// phone's FS, never to the host. An empty cmd is an interactive shell: the
// commands are read from stdin and run as they arrive, until EOF or exit.
func (s *Shell) Run(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangMirBSDKorn))
	if strings.TrimSpace(cmd) == "" && stdin != nil {
		return s.runInteractive(ctx, parser, stdin, stdout, stderr)
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
	r, err := s.newRunner(in, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 1
	}
	return exitCode(r.Run(ctx, file), stderr)
}

// runInteractive executes statements read from stdin one by one.
func (s *Shell) runInteractive(ctx context.Context, parser *syntax.Parser, stdin io.Reader, stdout, stderr io.Writer) int {
	r, err := s.newRunner(nil, stdout, stderr)
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
func (s *Shell) newRunner(stdin *os.File, stdout, stderr io.Writer) (*interp.Runner, error) {
	var in io.Reader // a typed nil *os.File would look like a real stdin
	if stdin != nil {
		in = stdin
	}
	return interp.New(
		interp.Env(shexpand.ListEnviron(s.Env...)),
		interp.Dir("/"),
		interp.StdIO(in, stdout, stderr),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error { return s.exec(ctx, args) }
		}),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			// `command -v` would search the host's PATH; answer it from the
			// simulated command table instead.
			if len(args) >= 3 && args[0] == "command" && args[1] == "-v" {
				return append([]string{"which"}, args[2:]...), nil
			}
			// mksh's kill is a builtin that signals the device's processes;
			// the interpreter's would signal the host's, so it goes to the
			// simulated command table (by path, which no builtin matches).
			if len(args) > 0 && args[0] == "kill" && s.Commands["kill"] != nil {
				return append([]string{"/system/bin/kill"}, args[1:]...), nil
			}
			return args, nil
		}),
		interp.OpenHandler(func(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return s.FS.OpenFile(absIn(ctx, name), flag, perm)
		}),
		interp.StatHandler(func(ctx context.Context, name string, _ bool) (fs.FileInfo, error) {
			return s.FS.Stat(absIn(ctx, name))
		}),
		interp.ReadDirHandler2(func(ctx context.Context, name string) ([]fs.DirEntry, error) {
			infos, err := s.FS.ReadDir(absIn(ctx, name))
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
			fi, err := s.FS.Stat(name)
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

func (s *Shell) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	name := args[0]
	impl := s.Commands[path.Base(name)]
	if impl == nil || strings.Contains(name, "/") && !strings.HasPrefix(name, "/system/bin/") {
		fmt.Fprintf(hc.Stderr, "/system/bin/sh: %s: inaccessible or not found\n", name)
		return interp.NewExitStatus(127)
	}
	if s.Before != nil && !s.Before(ctx, path.Base(name)) {
		return interp.NewExitStatus(130)
	}
	sc := &Proc{Ctx: ctx, Stdin: hc.Stdin, Stdout: hc.Stdout, Stderr: hc.Stderr, Dir: hc.Dir, sh: s}
	// The runner hands over a typed nil *os.File when it has no stdin.
	if f, ok := sc.Stdin.(*os.File); sc.Stdin == nil || ok && f == nil {
		sc.Stdin = strings.NewReader("")
	}
	if code := impl(sc, args[1:]); code != 0 {
		return interp.NewExitStatus(uint8(code))
	}
	return nil
}
