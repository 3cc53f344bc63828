package adbd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

// syncProtocolPrefix starts the text of a request ReadSyncRequest refuses;
// what follows is adbd's FAIL message.
var syncProtocolPrefix = adbwire.ErrProtocol.Error() + ": "

// syncSession is one sync: stream.
type syncSession struct {
	ctx context.Context
	dev Device
	r   *bufio.Reader
	w   *bufio.Writer
	buf []byte // scratch the replies are built in
}

// serveSync answers sync requests until QUIT, an error, or the end of the
// stream. Replies are buffered and flushed before each next request is read,
// so a 72-byte STA2 reply leaves as one WRTE instead of many.
func serveSync(ctx context.Context, dev Device, rw io.ReadWriter) error {
	s := &syncSession{
		ctx: ctx,
		dev: dev,
		r:   bufio.NewReaderSize(rw, 2*adbwire.SyncDataMax),
		w:   bufio.NewWriterSize(rw, 2*adbwire.SyncDataMax),
	}
	for {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("adbd: sync reply: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		req, err := adbwire.ReadSyncRequest(s.r)
		if err != nil {
			if errors.Is(err, adbwire.ErrProtocol) {
				s.fail(strings.TrimPrefix(err.Error(), syncProtocolPrefix))
				return s.w.Flush()
			}
			return nil // the host closed the stream
		}
		more, err := s.handle(req)
		if err != nil {
			return err
		}
		if !more {
			return s.w.Flush()
		}
	}
}

// handle serves one request and reports whether the session continues.
// Like adbd, any failure ends the session after its FAIL reply.
func (s *syncSession) handle(req adbwire.SyncRequest) (bool, error) {
	switch req.ID {
	case adbwire.SyncSTAT:
		return true, s.statV1(req.Path)
	case adbwire.SyncSTA2, adbwire.SyncLST2:
		return true, s.statV2(req.ID, req.Path)
	case adbwire.SyncLIST:
		return true, s.list(req.Path, false)
	case adbwire.SyncLIS2:
		return true, s.list(req.Path, true)
	case adbwire.SyncSEND:
		return s.send(req.Path)
	case adbwire.SyncRECV:
		return s.recv(req.Path)
	case adbwire.SyncQUIT:
		return false, nil
	}
	s.fail(fmt.Sprintf("unknown command %08x", binary.LittleEndian.Uint32([]byte(req.ID))))
	return false, nil
}

// reply queues b, a reply appended to the scratch buffer s.buf[:0].
func (s *syncSession) reply(b []byte) {
	s.buf = b
	s.w.Write(b)
}

// fail queues a FAIL reply; the message is what `adb push/pull` prints.
func (s *syncSession) fail(msg string) {
	s.reply(adbwire.AppendSyncFail(s.buf[:0], msg))
}

// statV1 answers STAT. A missing file is all zeros: mode 0 is how v1
// clients learn "does not exist".
func (s *syncSession) statV1(p string) error {
	var st adbwire.SyncStat
	if fi, err := s.dev.Stat(p); err == nil {
		st = statOf(fi)
	}
	s.reply(adbwire.AppendStatV1(s.buf[:0], st))
	return nil
}

// statV2 answers STA2 and LST2 with the 72-byte stat_v2 layout; errors are
// reported as an errno (2 for a missing file) and not as FAIL.
func (s *syncSession) statV2(id, p string) error {
	var st adbwire.SyncStat
	var errno syscall.Errno
	fi, err := s.dev.Stat(p)
	if err != nil {
		errno = errnoOf(err)
	} else {
		st = statOf(fi)
	}
	s.reply(adbwire.AppendStatV2(s.buf[:0], id, uint32(errno), st))
	return nil
}

// list answers LIST (DENT entries) and LIS2 (DNT2 entries). Like readdir on
// the device it includes "." and "..", and a directory that cannot be read
// just yields the final DONE.
func (s *syncSession) list(dir string, v2 bool) error {
	var entries []fs.FileInfo
	if self, err := s.dev.Stat(dir); err == nil && self.IsDir() {
		if list, err := s.dev.ReadDir(dir); err == nil {
			parent, perr := s.dev.Stat(path.Dir(path.Clean(dir)))
			if perr != nil {
				parent = self
			}
			entries = append(entries, renamed{self, "."}, renamed{parent, ".."})
			entries = append(entries, list...)
		}
	}
	for _, fi := range entries {
		st := statOf(fi)
		if v2 {
			s.reply(adbwire.AppendDentV2(s.buf[:0], st, fi.Name()))
		} else {
			s.reply(adbwire.AppendDent(s.buf[:0], st, fi.Name()))
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	s.reply(adbwire.AppendListDone(s.buf[:0], v2))
	return nil
}

// send receives a file: DATA chunks then DONE, whose length field carries
// the mtime. Device.WriteFile wants the mtime up front, so the content is
// collected first; simulated pushes are small enough to hold in memory.
func (s *syncSession) send(spec string) (bool, error) {
	p, modeText, ok := adbwire.CutSendSpec(spec)
	if !ok {
		s.fail("missing , in ID_SEND_V1")
		return false, nil
	}
	if strings.HasSuffix(p, "/") {
		// open(2) with O_CREAT fails so on a real device; a Device
		// implementation would otherwise likely write the directory's name.
		s.fail("couldn't create file: " + strerror(syscall.EISDIR))
		return false, nil
	}
	mode, ok := adbwire.ParseSendMode(modeText)
	if !ok {
		s.fail("bad mode")
		return false, nil
	}
	var buf bytes.Buffer
	var mtime uint32
	for done := false; !done; {
		id, n, err := adbwire.ReadSyncHeader(s.r)
		if err != nil {
			return false, nil // the host went away mid-push
		}
		switch id {
		case adbwire.SyncDATA:
			if n > adbwire.SyncDataMax {
				s.fail("oversize data message")
				return false, nil
			}
			if _, err := io.CopyN(&buf, s.r, int64(n)); err != nil {
				return false, nil
			}
		case adbwire.SyncDONE:
			mtime, done = n, true
		default:
			s.fail("invalid data message")
			return false, nil
		}
	}
	if adbwire.FileMode(mode)&fs.ModeSymlink != 0 {
		s.fail("couldn't create file: symlinks are not supported by the simulator")
		return false, nil
	}
	// adbd copies the user permission bits to group and other.
	perm := mode & 0o777
	perm |= (perm >> 3) & 0o070
	perm |= (perm >> 3) & 0o007
	if err := s.dev.WriteFile(p, fs.FileMode(perm), time.Unix(int64(mtime), 0), &buf); err != nil {
		s.fail("couldn't create file: " + strerror(err))
		return false, nil
	}
	s.reply(adbwire.AppendSyncHeader(s.buf[:0], adbwire.SyncOKAY, 0))
	return true, nil
}

// recv sends a file as DATA chunks of at most 64 KiB, then DONE.
func (s *syncSession) recv(p string) (bool, error) {
	if fi, err := s.dev.Stat(p); err == nil && fi.IsDir() {
		s.fail("read failed: " + strerror(syscall.EISDIR))
		return false, nil
	}
	f, err := s.dev.Open(p)
	if err != nil {
		s.fail("open failed: " + strerror(err))
		return false, nil
	}
	// Closing the file is the only way to interrupt a Read that blocks
	// (a pipe, a device node) when the client goes away.
	var closeOnce sync.Once
	closeFile := func() { closeOnce.Do(func() { f.Close() }) }
	defer closeFile()
	stop := context.AfterFunc(s.ctx, closeFile)
	defer stop()
	chunk := make([]byte, adbwire.SyncDataMax)
	for {
		if err := s.ctx.Err(); err != nil {
			return false, err
		}
		n, rerr := io.ReadFull(f, chunk)
		if n > 0 {
			s.reply(adbwire.AppendSyncHeader(s.buf[:0], adbwire.SyncDATA, uint32(n)))
			if _, err := s.w.Write(chunk[:n]); err != nil {
				return false, fmt.Errorf("adbd: sync recv %s: %w", p, err)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			s.fail("read failed: " + strerror(rerr))
			return false, nil
		}
	}
	s.reply(adbwire.AppendSyncHeader(s.buf[:0], adbwire.SyncDONE, 0))
	return true, nil
}

// renamed presents a FileInfo under another name, for "." and "..".
type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

// statOf is what the sync service says about a file: mode, size and mtime
// from the FileInfo, the rest of struct stat from the host's stat when the
// device keeps files on a real file system, else plausible values for
// /sdcard: owner root, group sdcard_rw (1015), times equal to the mtime.
func statOf(fi fs.FileInfo) adbwire.SyncStat {
	st := adbwire.SyncStat{Mode: adbwire.UnixMode(fi.Mode()), Size: uint64(fi.Size()), Mtime: fi.ModTime().Unix()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino, st.Nlink = uint64(sys.Dev), sys.Ino, uint32(sys.Nlink)
		st.UID, st.GID = sys.Uid, sys.Gid
		st.Atime, st.Ctime = sys.Atim.Sec, sys.Ctim.Sec
		return st
	}
	st.Nlink, st.GID, st.Atime, st.Ctime = 1, 1015, st.Mtime, st.Mtime
	return st
}

// errnoOf maps a Device error to the errno adbd would report.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, fs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, fs.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, fs.ErrExist):
		return syscall.EEXIST
	}
	return syscall.EIO
}

// strerror renders an error the way adbd's strerror(errno) does, because
// adb clients show these texts to users ("No such file or directory").
func strerror(err error) string {
	e := errnoOf(err)
	if e == syscall.EIO && !errors.Is(err, syscall.EIO) {
		return err.Error()
	}
	msg := e.Error()
	if msg != "" {
		return strings.ToUpper(msg[:1]) + msg[1:]
	}
	return err.Error()
}
