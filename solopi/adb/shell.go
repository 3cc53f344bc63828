package adb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Shell protocol v2 packet ids (shell_protocol.h).
const (
	shellStdin      = 0
	shellStdout     = 1
	shellStderr     = 2
	shellExit       = 3
	shellCloseStdin = 4
	shellWindowSize = 5
)

// ExitUnknown is the exit code Shell reports for devices without shell
// protocol v2 (Android < 7), whose shell: service carries no exit status.
const ExitUnknown = -1

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
			return nil, nil, ExitUnknown, err
		}
		return out, nil, ExitUnknown, nil
	}
	cn, err := d.open(ctx, op, "shell,v2,raw:"+cmd)
	if err != nil {
		return nil, nil, ExitUnknown, err
	}
	defer cn.Close()
	// We send no stdin: say so at once, or a command reading stdin (cat)
	// would wait forever, as adb's own client does.
	if _, err := cn.Write([]byte{shellCloseStdin, 0, 0, 0, 0}); err != nil {
		return nil, nil, ExitUnknown, d.ioError(cn, op, err)
	}
	var o, e bytes.Buffer
	code, err := demuxShellV2(bufio.NewReaderSize(cn, 64<<10), &o, &e)
	if err != nil {
		if errors.Is(err, ErrProtocol) {
			return o.Bytes(), e.Bytes(), ExitUnknown, fmt.Errorf("adb: %s on %s: %w", op, d.serial, err)
		}
		return o.Bytes(), e.Bytes(), ExitUnknown, d.ioError(cn, op, err)
	}
	return o.Bytes(), e.Bytes(), code, nil
}

// demuxShellV2 reads shell v2 packets (id u8, length u32le, data) from a
// byte stream until the exit packet, copying stdout and stderr. Packets may
// be split anywhere by the transport, so it only ever uses io.ReadFull.
// A stream that ends before the exit packet returns io.ErrUnexpectedEOF
// (the device or server went away).
func demuxShellV2(r io.Reader, stdout, stderr io.Writer) (int, error) {
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return ExitUnknown, err
		}
		n := int64(binary.LittleEndian.Uint32(hdr[1:]))
		var w io.Writer = io.Discard // stdin echo, window size, unknown: skip
		switch hdr[0] {
		case shellStdout:
			w = stdout
		case shellStderr:
			w = stderr
		case shellExit:
			if n != 1 {
				return ExitUnknown, fmt.Errorf("%w: shell exit packet of %d bytes, want 1", ErrProtocol, n)
			}
			var b [1]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return ExitUnknown, unexpected(err)
			}
			return int(b[0]), nil
		}
		// CopyN, not a make([]byte, n): a corrupt length must not allocate
		// 4 GiB before the stream proves it has the bytes.
		if m, err := io.CopyN(w, r, n); err != nil {
			if m < n && (err == io.EOF || err == io.ErrUnexpectedEOF) {
				return ExitUnknown, io.ErrUnexpectedEOF
			}
			return ExitUnknown, err
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
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
