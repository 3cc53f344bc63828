package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// The in-process front: *Device implements solopi.Transport directly on the
// virtual phone, with no protocol framing, for fast tests and the demo. The
// same device is reachable through the adbd and adb-server fronts.

// Shell runs cmd through the device shell and returns its streams.
func (d *Device) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, 0, err
	}
	d.commandLog.add(cmd)
	var out, errb bytes.Buffer
	code := d.Phone.RunShell(ctx, cmd, bytes.NewReader(nil), &out, &errb)
	if err := ctx.Err(); err != nil {
		return out.Bytes(), errb.Bytes(), code, err
	}
	return out.Bytes(), errb.Bytes(), code, nil
}

// Exec runs cmd like adb's exec: service: raw stdout, binary-safe.
func (d *Device) Exec(ctx context.Context, cmd string) ([]byte, error) {
	out, _, _, err := d.Shell(ctx, cmd)
	return out, err
}

// Push writes r to a device path, creating parent directories like adbd.
func (d *Device) Push(ctx context.Context, r io.Reader, remote string, mode fs.FileMode, mtime time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	if mtime.IsZero() {
		mtime = d.clk.Now()
	}
	if err := d.Phone.WriteFile(remote, mode, mtime, ctxReader{ctx, r}); err != nil {
		return fmt.Errorf("push %s: %w", remote, err)
	}
	return nil
}

// Pull copies a device file into w.
func (d *Device) Pull(ctx context.Context, remote string, w io.Writer) error {
	f, err := d.Phone.Open(remote)
	if err != nil {
		return fmt.Errorf("pull %s: %w", remote, err)
	}
	defer f.Close()
	if _, err := io.Copy(w, ctxReader{ctx, f}); err != nil {
		return fmt.Errorf("pull %s: %w", remote, err)
	}
	return nil
}

// Stat describes a device path.
func (d *Device) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := d.Phone.Stat(remote)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", remote, err)
	}
	return st, nil
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
