package adbd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/solopi-dev/solopi/adbwire"
)

// maxShellChunk is the largest output packet: a size every client buffers.
const maxShellChunk = 64 << 10

// packetWriter frames output as shell packets. Each packet goes out in one
// Write under a lock, because stdout and stderr are written from different
// goroutines and a packet must never be split by another one.
type packetWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (pw *packetWriter) writePacket(id byte, data []byte) error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	_, err := pw.w.Write(adbwire.AppendShellPacket(make([]byte, 0, 5+len(data)), id, data))
	return err
}

// channel is an io.Writer for one output id.
type channel struct {
	pw *packetWriter
	id byte
}

func (c channel) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), maxShellChunk)
		if err := c.pw.writePacket(c.id, p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// serveShellV2 runs a command under the shell protocol: stdin arrives as
// packets, output leaves as stdout/stderr packets, and the exit code is the
// last packet before the stream closes.
func serveShellV2(ctx context.Context, dev Device, o shellOptions, rw io.ReadWriter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	pw := &packetWriter{w: rw}
	var stdout, stderr io.Writer = channel{pw, adbwire.ShellStdout}, channel{pw, adbwire.ShellStderr}
	if o.pty {
		// A pty has one output; adbd sends everything as stdout.
		stdout = &crlfWriter{w: stdout}
		stderr = stdout
	}

	stdinR, stdinW := io.Pipe()
	go pumpStdin(bufio.NewReader(rw), stdinW, cancel)

	code := dev.RunShell(ctx, o.cmd, stdinR, stdout, stderr)
	// Unblock the pump if it is stuck handing stdin to a command that never
	// read it; it keeps draining the stream until the caller closes it.
	stdinR.CloseWithError(io.ErrClosedPipe)
	if ctx.Err() != nil {
		// The stream is gone (CLSE or a dropped connection); an exit code
		// for a command killed that way has no one to go to.
		return nil
	}
	if err := pw.writePacket(adbwire.ShellExit, []byte{byte(code)}); err != nil {
		return fmt.Errorf("adbd: shell exit packet: %w", err)
	}
	return nil
}

// pumpStdin demultiplexes the client's packets. Only stdin data and
// close-stdin matter to the command; window-size changes have no terminal
// to resize. When the stream ends the client is gone, so the command is
// cancelled (adbd kills the subprocess on CLSE).
func pumpStdin(r io.Reader, stdin *io.PipeWriter, cancel context.CancelFunc) {
	defer cancel()
	for {
		p, err := adbwire.ReadShellPacket(r)
		if err != nil {
			stdin.CloseWithError(io.EOF)
			return
		}
		switch p.ID {
		case adbwire.ShellStdin:
			// A failed write means the command finished or stopped reading;
			// keep draining so the host's writes are acknowledged.
			_, _ = stdin.Write(p.Data)
		case adbwire.ShellCloseStdin:
			stdin.Close()
		case adbwire.ShellWindowSize:
			// Nothing to resize: the simulated shell has no terminal.
		}
	}
}
