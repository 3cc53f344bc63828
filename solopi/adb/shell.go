package adb

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/solopi-dev/solopi/adbwire"
)

// exitUnknown is the exit code Shell reports for devices without shell
// protocol v2 (Android < 7), whose shell: service carries no exit status.
const exitUnknown = -1

// Shell runs cmd with the device's `sh -c` and returns its stdout, stderr
// and exit code. cmd is passed verbatim: quote arguments with ShellQuote or
// ShellJoin.
//
// On devices without the shell_v2 feature the legacy shell: service is used:
// stdout and stderr arrive mixed in stdout and exitCode is ExitUnknown (-1).
//
// A non-zero exit code is not an error; err is only for failures to run the
// command or to get its complete result.
func (d *Device) Shell(ctx context.Context, cmd string) (stdout, stderr []byte, exitCode int, err error) {
	op := opName("shell", cmd)
	if !d.HasFeature("shell_v2") {
		out, err := d.readAll(ctx, op, "shell:"+cmd)
		if err != nil {
			return nil, nil, exitUnknown, err
		}
		return out, nil, exitUnknown, nil
	}
	cn, err := d.open(ctx, op, "shell,v2,raw:"+cmd)
	if err != nil {
		return nil, nil, exitUnknown, err
	}
	defer cn.Close()
	// We send no stdin: say so at once, or a command reading stdin (cat)
	// would wait forever, as adb's own client does.
	if _, err := cn.Write(adbwire.AppendShellPacket(nil, adbwire.ShellCloseStdin, nil)); err != nil {
		return nil, nil, exitUnknown, d.ioError(cn, op, err)
	}
	var o, e bytes.Buffer
	code, err := adbwire.DemuxShell(bufio.NewReaderSize(cn, 64<<10), &o, &e)
	if err != nil {
		if errors.Is(err, errProtocol) {
			return o.Bytes(), e.Bytes(), exitUnknown, fmt.Errorf("adb: %s on %s: %w", op, d.serial, err)
		}
		return o.Bytes(), e.Bytes(), exitUnknown, d.ioError(cn, op, err)
	}
	return o.Bytes(), e.Bytes(), code, nil
}

// Exec runs cmd through the exec: service: no pty and no shell protocol, so
// the bytes are exactly what the command wrote (screencap -p). The device
// still runs it with `sh -c`. There is no exit code or stderr.
//
// A raw stream's end cannot be told apart from the device leaving, so after
// EOF Exec asks the server whether the device is still there and returns
// ErrDeviceGone if not, rather than silently truncated output.
func (d *Device) Exec(ctx context.Context, cmd string) ([]byte, error) {
	return d.readAll(ctx, opName("exec", cmd), "exec:"+cmd)
}

func (d *Device) readAll(ctx context.Context, op, service string) ([]byte, error) {
	cn, err := d.open(ctx, op, service)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(cn)
	cn.Close()
	if err != nil {
		return out, d.ioError(cn, op, err)
	}
	if err := d.checkGone(ctx, op, nil); err != nil {
		return out, err
	}
	return out, nil
}
