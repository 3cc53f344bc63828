package adb

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"time"

	"github.com/solopi-dev/solopi/clock"
)

// Sync protocol limits (file_sync_protocol.h).
const (
	syncDataMax = 64 << 10 // largest DATA chunk either side may send
	syncPathMax = 1024     // longest request payload (path, or "path,mode")
	syncMsgMax  = 64 << 10 // longest FAIL message we accept
	syncNameMax = 4096     // longest DENT name we accept (Linux NAME_MAX is 255)
)

// FileStat is the raw answer of STAT (v1: Mode, Size, Mtime only) or STA2.
type FileStat struct {
	Mode            uint32 // unix st_mode, type bits included
	Size            uint64
	Mtime           int64 // seconds since the epoch
	Atime, Ctime    int64 // STA2 only
	Dev, Ino        uint64
	Nlink, UID, GID uint32
}

// FileInfo describes a remote file; it implements fs.FileInfo and its Sys()
// is the *FileStat the device sent.
type FileInfo struct {
	name string
	st   FileStat
}

func (fi *FileInfo) Name() string       { return fi.name }
func (fi *FileInfo) Size() int64        { return int64(fi.st.Size) }
func (fi *FileInfo) Mode() fs.FileMode  { return fileMode(fi.st.Mode) }
func (fi *FileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtime, 0) }
func (fi *FileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *FileInfo) Sys() any           { return &fi.st }

// Unix st_mode type bits.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
)

// fileMode converts a device st_mode to fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & sIFMT {
	case sIFDIR:
		mode |= fs.ModeDir
	case sIFLNK:
		mode |= fs.ModeSymlink
	case sIFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case sIFBLK:
		mode |= fs.ModeDevice
	case sIFIFO:
		mode |= fs.ModeNamedPipe
	case sIFSOCK:
		mode |= fs.ModeSocket
	}
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// unixMode converts an fs.FileMode to the st_mode sent with SEND. A zero
// permission means "unspecified" and becomes 0644, like a fresh file.
func unixMode(mode fs.FileMode) uint32 {
	m := uint32(mode.Perm())
	if m == 0 {
		m = 0o644
	}
	if mode&fs.ModeSymlink != 0 {
		m |= sIFLNK
	} else {
		m |= sIFREG
	}
	if mode&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
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
	return &syncSession{d: d, cn: cn, br: bufio.NewReaderSize(cn, syncDataMax+8), op: op}, nil
}

// close says QUIT so the device ends the service cleanly, then closes.
func (s *syncSession) close() {
	_, _ = s.cn.Write(syncHeader(nil, "QUIT", 0))
	s.cn.Close()
}

// fail turns an error of the session into the error to return: FAIL replies
// become *SyncError, protocol errors are wrapped, I/O errors mean the device
// left (or the context ended).
func (s *syncSession) fail(remote string, err error) error {
	var f syncFail
	if errors.As(err, &f) {
		return &SyncError{Op: s.op, Path: remote, Msg: string(f)}
	}
	if errors.Is(err, ErrProtocol) {
		return fmt.Errorf("adb: %s %s: %w", s.op, remote, err)
	}
	return s.d.ioError(s.cn, s.op+" "+remote, err)
}

func (s *syncSession) request(id, remote string) error {
	if len(remote) > syncPathMax {
		return fmt.Errorf("adb: %s %s: remote path is %d bytes, the sync protocol allows %d", s.op, remote, len(remote), syncPathMax)
	}
	b := syncHeader(make([]byte, 0, 8+len(remote)), id, uint32(len(remote)))
	_, err := s.cn.Write(append(b, remote...))
	return err
}

func syncHeader(b []byte, id string, n uint32) []byte {
	b = append(b, id...)
	return binary.LittleEndian.AppendUint32(b, n)
}

// syncFail is a FAIL reply's message, turned into *SyncError by the caller
// who knows the operation and path.
type syncFail string

func (f syncFail) Error() string { return string(f) }

// readSyncHeader reads an 8-byte reply header. A FAIL is read in full and
// returned as syncFail.
func readSyncHeader(r io.Reader) (id string, n uint32, err error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", 0, unexpected(err)
	}
	id, n = string(h[:4]), binary.LittleEndian.Uint32(h[4:])
	if id == "FAIL" {
		if n > syncMsgMax {
			return "", 0, fmt.Errorf("%w: sync FAIL message of %d bytes", ErrProtocol, n)
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return "", 0, unexpected(err)
		}
		return id, n, syncFail(msg)
	}
	return id, n, nil
}

// readStatV1 parses a STAT reply: id, mode, size, mtime (u32 each).
func readStatV1(r io.Reader) (FileStat, error) {
	id, mode, err := readSyncHeader(r)
	if err != nil {
		return FileStat{}, err
	}
	if id != "STAT" {
		return FileStat{}, fmt.Errorf("%w: expected STAT, got %q", ErrProtocol, id)
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return FileStat{}, unexpected(err)
	}
	return FileStat{
		Mode:  mode,
		Size:  uint64(binary.LittleEndian.Uint32(b[:4])),
		Mtime: int64(binary.LittleEndian.Uint32(b[4:])),
	}, nil
}

// readStatV2 parses a STA2/LST2 reply (72 bytes); the u32 after the id is an
// errno, 0 on success.
func readStatV2(r io.Reader) (FileStat, uint32, error) {
	id, errno, err := readSyncHeader(r)
	if err != nil {
		return FileStat{}, 0, err
	}
	if id != "STA2" && id != "LST2" {
		return FileStat{}, 0, fmt.Errorf("%w: expected STA2, got %q", ErrProtocol, id)
	}
	var b [64]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return FileStat{}, 0, unexpected(err)
	}
	le := binary.LittleEndian
	return FileStat{
		Dev:   le.Uint64(b[0:]),
		Ino:   le.Uint64(b[8:]),
		Mode:  le.Uint32(b[16:]),
		Nlink: le.Uint32(b[20:]),
		UID:   le.Uint32(b[24:]),
		GID:   le.Uint32(b[28:]),
		Size:  le.Uint64(b[32:]),
		Atime: int64(le.Uint64(b[40:])),
		Mtime: int64(le.Uint64(b[48:])),
		Ctime: int64(le.Uint64(b[56:])),
	}, errno, nil
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
	var st FileStat
	if d.HasFeature("stat_v2") {
		if err := s.request("STA2", remotePath); err != nil {
			return nil, s.fail(remotePath, err)
		}
		var errno uint32
		st, errno, err = readStatV2(s.br)
		if err != nil {
			return nil, s.fail(remotePath, err)
		}
		if errno != 0 {
			return nil, &fs.PathError{Op: "adb: stat", Path: remotePath, Err: remoteErrno(errno)}
		}
	} else {
		if err := s.request("STAT", remotePath); err != nil {
			return nil, s.fail(remotePath, err)
		}
		if st, err = readStatV1(s.br); err != nil {
			return nil, s.fail(remotePath, err)
		}
	}
	if st.Mode == 0 {
		// v1's only way to say "no such file" (and a v2 device that
		// answers errno 0 with an empty stat, which means the same).
		return nil, &fs.PathError{Op: "adb: stat", Path: remotePath, Err: fs.ErrNotExist}
	}
	return &FileInfo{name: path.Base(remotePath), st: st}, nil
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
	if err := s.request("LIST", remotePath); err != nil {
		return nil, s.fail(remotePath, err)
	}
	out, err := readList(s.br)
	if err != nil {
		return nil, s.fail(remotePath, err)
	}
	return out, nil
}

// readList parses DENT entries up to the closing DONE (a whole 20-byte
// dent whose id is DONE).
func readList(r io.Reader) ([]fs.FileInfo, error) {
	var out []fs.FileInfo
	for {
		id, mode, err := readSyncHeader(r)
		if err != nil {
			return nil, err
		}
		var b [12]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, unexpected(err)
		}
		switch id {
		case "DONE":
			return out, nil
		case "DENT":
		default:
			return nil, fmt.Errorf("%w: expected DENT or DONE, got %q", ErrProtocol, id)
		}
		le := binary.LittleEndian
		n := le.Uint32(b[8:])
		if n > syncNameMax {
			return nil, fmt.Errorf("%w: directory entry name of %d bytes", ErrProtocol, n)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, unexpected(err)
		}
		if s := string(name); s != "." && s != ".." {
			out = append(out, &FileInfo{name: s, st: FileStat{
				Mode:  mode,
				Size:  uint64(le.Uint32(b[0:])),
				Mtime: int64(le.Uint32(b[4:])),
			}})
		}
	}
}

// Push writes the contents of r to remotePath on the device (sync SEND v1):
// DATA chunks of at most 64 KiB, then DONE carrying mtime, then the device's
// single OKAY or FAIL. A zero mode.Perm() means 0644; a zero mtime means now.
// The device creates missing parent directories. On failure the device
// removes the partial file.
func (d *Device) Push(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode, mtime time.Time) error {
	spec := remotePath + "," + strconv.FormatUint(uint64(unixMode(mode)), 10)
	if len(spec) > syncPathMax {
		return fmt.Errorf("adb: push %s: remote path too long for the sync protocol (max %d bytes with the mode)", remotePath, syncPathMax)
	}
	if mtime.IsZero() {
		mtime = clock.System.Now()
	}
	s, err := d.openSync(ctx, "push")
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.request("SEND", spec); err != nil {
		return s.pushWriteFailed(remotePath, err)
	}
	buf := make([]byte, 8+syncDataMax)
	for {
		n, rerr := io.ReadFull(r, buf[8:])
		if n > 0 {
			syncHeader(buf[:0], "DATA", uint32(n))
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
	if _, err := s.cn.Write(syncHeader(nil, "DONE", uint32(mtime.Unix()))); err != nil {
		return s.pushWriteFailed(remotePath, err)
	}
	if err := readSendResult(s.br); err != nil {
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
	if _, _, err := readSyncHeader(s.br); err != nil {
		var f syncFail
		if errors.As(err, &f) {
			return s.fail(remote, err)
		}
	}
	return s.fail(remote, werr)
}

// readSendResult parses the reply to SEND...DONE: OKAY u32(0) or FAIL.
func readSendResult(r io.Reader) error {
	id, _, err := readSyncHeader(r)
	if err != nil {
		return err
	}
	if id != "OKAY" {
		return fmt.Errorf("%w: expected OKAY after DONE, got %q", ErrProtocol, id)
	}
	return nil
}

// Pull copies remotePath to w (sync RECV v1). A missing file gives a
// *SyncError matching fs.ErrNotExist.
func (d *Device) Pull(ctx context.Context, remotePath string, w io.Writer) error {
	s, err := d.openSync(ctx, "pull")
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.request("RECV", remotePath); err != nil {
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
	buf := make([]byte, syncDataMax)
	for {
		id, n, err := readSyncHeader(r)
		if err != nil {
			return err
		}
		switch id {
		case "DONE":
			return nil
		case "DATA":
		default:
			return fmt.Errorf("%w: expected DATA or DONE, got %q", ErrProtocol, id)
		}
		if n > syncDataMax {
			return fmt.Errorf("%w: DATA chunk of %d bytes (max %d)", ErrProtocol, n, syncDataMax)
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return unexpected(err)
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return &writeError{err}
		}
	}
}
