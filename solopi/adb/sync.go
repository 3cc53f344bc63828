package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
	"github.com/solopi-dev/solopi/clock"
)

// fileStat is the raw answer of STAT (v1: Mode, Size, Mtime only) or STA2.
type fileStat = adbwire.SyncStat

// fileInfo describes a remote file; it implements fs.FileInfo and its Sys()
// is the *FileStat the device sent.
type fileInfo struct {
	name string
	st   fileStat
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return int64(fi.st.Size) }
func (fi *fileInfo) Mode() fs.FileMode  { return adbwire.FileMode(fi.st.Mode) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtime, 0) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

// sendMode converts an fs.FileMode to the st_mode sent with SEND: a
// regular file or a symlink with its permission and special bits. A zero
// permission means "unspecified" and becomes 0644, like a fresh file.
func sendMode(mode fs.FileMode) uint32 {
	if mode.Perm() == 0 {
		mode |= 0o644
	}
	return adbwire.UnixMode(mode & (fs.ModePerm | fs.ModeSymlink | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky))
}

// syncSession is one sync: service connection. Requests are an 8-byte
// header (4-byte id, u32le length) and the payload; so are most replies.
type syncSession struct {
	d  *Device
	cn *conn
	br *bufio.Reader
	op string
}

func (d *Device) openSync(ctx context.Context, op string) (*syncSession, error) {
	cn, err := d.open(ctx, op, "sync:")
	if err != nil {
		return nil, err
	}
	return &syncSession{d: d, cn: cn, br: bufio.NewReaderSize(cn, adbwire.SyncDataMax+8), op: op}, nil
}

// close says QUIT so the device ends the service cleanly, then closes.
func (s *syncSession) close() {
	_, _ = s.cn.Write(adbwire.AppendSyncHeader(nil, adbwire.SyncQUIT, 0))
	s.cn.Close()
}

// fail turns an error of the session into the error to return: FAIL replies
// become *SyncError, protocol errors are wrapped, I/O errors mean the device
// left (or the context ended).
func (s *syncSession) fail(remote string, err error) error {
	if msg, ok := failMsg(err); ok {
		return &syncError{Op: s.op, Path: remote, Msg: msg}
	}
	if errors.Is(err, errProtocol) {
		return fmt.Errorf("adb: %s %s: %w", s.op, remote, err)
	}
	return s.d.ioError(s.cn, s.op+" "+remote, err)
}

func (s *syncSession) request(id, remote string) error {
	if len(remote) > adbwire.SyncPathMax {
		return fmt.Errorf("adb: %s %s: remote path is %d bytes, the sync protocol allows %d", s.op, remote, len(remote), adbwire.SyncPathMax)
	}
	_, err := s.cn.Write(adbwire.AppendSyncRequest(make([]byte, 0, 8+len(remote)), id, remote))
	return err
}

// Stat describes remotePath. With the device feature stat_v2 it uses STA2
// (follows symlinks, 64-bit sizes, errno); otherwise STAT (v1: lstat, 32-bit
// size, and a missing file is all zeros). A missing path gives an error
// matching fs.ErrNotExist.
func (d *Device) Stat(ctx context.Context, remotePath string) (fs.FileInfo, error) {
	s, err := d.openSync(ctx, "stat")
	if err != nil {
		return nil, err
	}
	defer s.close()
	var st fileStat
	if d.HasFeature("stat_v2") {
		if err := s.request(adbwire.SyncSTA2, remotePath); err != nil {
			return nil, s.fail(remotePath, err)
		}
		var errno uint32
		st, errno, err = adbwire.ReadStatV2(s.br)
		if err != nil {
			return nil, s.fail(remotePath, err)
		}
		if errno != 0 {
			return nil, &fs.PathError{Op: "adb: stat", Path: remotePath, Err: remoteErrno(errno)}
		}
	} else {
		if err := s.request(adbwire.SyncSTAT, remotePath); err != nil {
			return nil, s.fail(remotePath, err)
		}
		if st, err = adbwire.ReadStatV1(s.br); err != nil {
			return nil, s.fail(remotePath, err)
		}
	}
	if st.Mode == 0 {
		// v1's only way to say "no such file" (and a v2 device that
		// answers errno 0 with an empty stat, which means the same).
		return nil, &fs.PathError{Op: "adb: stat", Path: remotePath, Err: fs.ErrNotExist}
	}
	return &fileInfo{name: path.Base(remotePath), st: st}, nil
}

// List returns the entries of the remote directory remotePath (sync LIST,
// v1: 32-bit sizes). "." and ".." are left out, as in fs.ReadDir. A missing
// directory gives an empty list: the v1 protocol cannot tell them apart.
func (d *Device) List(ctx context.Context, remotePath string) ([]fs.FileInfo, error) {
	s, err := d.openSync(ctx, "list")
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.request(adbwire.SyncLIST, remotePath); err != nil {
		return nil, s.fail(remotePath, err)
	}
	out, err := readList(s.br)
	if err != nil {
		return nil, s.fail(remotePath, err)
	}
	return out, nil
}

// readList reads DENT entries up to the closing DONE, leaving out "." and
// "..".
func readList(r io.Reader) ([]fs.FileInfo, error) {
	var out []fs.FileInfo
	for {
		name, st, done, err := adbwire.ReadDent(r)
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
		if name != "." && name != ".." {
			out = append(out, &fileInfo{name: name, st: st})
		}
	}
}

// Push writes the contents of r to remotePath on the device (sync SEND v1):
// DATA chunks of at most 64 KiB, then DONE carrying mtime, then the device's
// single OKAY or FAIL. A zero mode.Perm() means 0644; a zero mtime means now.
// The device creates missing parent directories. On failure the device
// removes the partial file.
func (d *Device) Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error {
	spec := adbwire.SendSpec(remotePath, sendMode(mode))
	if len(spec) > adbwire.SyncPathMax {
		return fmt.Errorf("adb: push %s: remote path too long for the sync protocol (max %d bytes with the mode)", remotePath, adbwire.SyncPathMax)
	}
	if mtime.IsZero() {
		mtime = clock.System.Now()
	}
	s, err := d.openSync(ctx, "push")
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.request(adbwire.SyncSEND, spec); err != nil {
		return s.pushWriteFailed(remotePath, err)
	}
	buf := make([]byte, 8+adbwire.SyncDataMax)
	for {
		n, rerr := io.ReadFull(r, buf[8:])
		if n > 0 {
			adbwire.AppendSyncHeader(buf[:0], adbwire.SyncDATA, uint32(n))
			if _, err := s.cn.Write(buf[:8+n]); err != nil {
				return s.pushWriteFailed(remotePath, err)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			// Closing without DONE makes the device drop the partial file.
			return fmt.Errorf("adb: push %s: reading local data: %w", remotePath, rerr)
		}
	}
	if _, err := s.cn.Write(adbwire.AppendSyncHeader(nil, adbwire.SyncDONE, uint32(mtime.Unix()))); err != nil {
		return s.pushWriteFailed(remotePath, err)
	}
	if err := adbwire.ReadSendResult(s.br); err != nil {
		return s.fail(remotePath, err)
	}
	return nil
}

// pushWriteFailed: when the device cannot create the file it sends FAIL and
// closes, so our next write fails; the FAIL already received says why.
func (s *syncSession) pushWriteFailed(remote string, werr error) error {
	if s.cn.ctx.Err() != nil {
		return s.fail(remote, werr)
	}
	// A socket deadline is on the real clock by nature, whatever clock the
	// caller runs on.
	_ = s.cn.Conn.SetReadDeadline(clock.System.Now().Add(time.Second))
	if _, _, err := adbwire.ReadSyncReply(s.br); err != nil {
		if _, ok := failMsg(err); ok {
			return s.fail(remote, err)
		}
	}
	return s.fail(remote, werr)
}

// Pull copies remotePath to w (sync RECV v1). A missing file gives a
// *SyncError matching fs.ErrNotExist.
func (d *Device) Pull(ctx context.Context, remotePath string, w io.Writer) error {
	s, err := d.openSync(ctx, "pull")
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.request(adbwire.SyncRECV, remotePath); err != nil {
		return s.fail(remotePath, err)
	}
	if err := readRecv(s.br, w); err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return fmt.Errorf("adb: pull %s: writing local copy: %w", remotePath, we.err)
		}
		return s.fail(remotePath, err)
	}
	return nil
}

// writeError marks a failure of the caller's writer, which is not the
// device's fault.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// readRecv copies DATA chunks to w until DONE.
func readRecv(r io.Reader, w io.Writer) error {
	buf := make([]byte, adbwire.SyncDataMax)
	for {
		chunk, err := adbwire.ReadData(r, buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(chunk); err != nil {
			return &writeError{err}
		}
	}
}
