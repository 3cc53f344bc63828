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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sync request and reply ids (file_sync_protocol.h), as they read on the wire.
const (
	syncSTAT = "STAT"
	syncSTA2 = "STA2"
	syncLST2 = "LST2"
	syncLIST = "LIST"
	syncLIS2 = "LIS2"
	syncDENT = "DENT"
	syncDNT2 = "DNT2"
	syncSEND = "SEND"
	syncRECV = "RECV"
	syncDATA = "DATA"
	syncDONE = "DONE"
	syncOKAY = "OKAY"
	syncFAIL = "FAIL"
	syncQUIT = "QUIT"
)

const (
	syncMaxPath = 1024     // adbd refuses longer request paths
	syncMaxData = 64 << 10 // SYNC_DATA_MAX: largest DATA chunk either way
)

// syncRequest is one 8-byte request header plus its path (or, for SEND,
// "<path>,<mode>").
type syncRequest struct {
	ID   string
	Path string
}

// errSyncProtocol marks requests adbd answers with FAIL and then closes the
// stream on: the byte stream cannot be trusted after them.
var errSyncProtocol = errors.New("sync protocol error")

// readSyncRequest reads a request from the byte stream. Requests do not line
// up with transport messages (one WRTE may hold SEND, DATA and DONE), so the
// parser only ever sees bytes.
func readSyncRequest(r io.Reader) (syncRequest, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return syncRequest{}, err
	}
	n := binary.LittleEndian.Uint32(hdr[4:])
	if n > syncMaxPath {
		return syncRequest{}, fmt.Errorf("%w: path too long", errSyncProtocol)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return syncRequest{}, fmt.Errorf("%w: filename read failure: %w", errSyncProtocol, noEOF(err))
	}
	return syncRequest{ID: string(hdr[:4]), Path: string(p)}, nil
}

// syncSession is one sync: stream.
type syncSession struct {
	ctx context.Context
	dev Device
	r   *bufio.Reader
	w   *bufio.Writer
}

// serveSync answers sync requests until QUIT, an error, or the end of the
// stream. Replies are buffered and flushed before each next request is read,
// so a 72-byte STA2 reply leaves as one WRTE instead of many.
func serveSync(ctx context.Context, dev Device, rw io.ReadWriter) error {
	s := &syncSession{
		ctx: ctx,
		dev: dev,
		r:   bufio.NewReaderSize(rw, 2*syncMaxData),
		w:   bufio.NewWriterSize(rw, 2*syncMaxData),
	}
	for {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("adbd: sync reply: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		req, err := readSyncRequest(s.r)
		if err != nil {
			if errors.Is(err, errSyncProtocol) {
				s.fail(strings.TrimPrefix(err.Error(), errSyncProtocol.Error()+": "))
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
func (s *syncSession) handle(req syncRequest) (bool, error) {
	switch req.ID {
	case syncSTAT:
		return true, s.statV1(req.Path)
	case syncSTA2, syncLST2:
		return true, s.statV2(req.ID, req.Path)
	case syncLIST:
		return true, s.list(req.Path, false)
	case syncLIS2:
		return true, s.list(req.Path, true)
	case syncSEND:
		return s.send(req.Path)
	case syncRECV:
		return s.recv(req.Path)
	case syncQUIT:
		return false, nil
	}
	s.fail(fmt.Sprintf("unknown command %08x", binary.LittleEndian.Uint32([]byte(req.ID))))
	return false, nil
}

func (s *syncSession) put(id string, words ...uint32) {
	s.w.WriteString(id)
	for _, v := range words {
		s.w.Write(binary.LittleEndian.AppendUint32(nil, v))
	}
}

// fail queues a FAIL reply; the message is what `adb push/pull` prints.
func (s *syncSession) fail(msg string) {
	s.put(syncFAIL, uint32(len(msg)))
	s.w.WriteString(msg)
}

// statV1 answers STAT. A missing file is all zeros: mode 0 is how v1
// clients learn "does not exist".
func (s *syncSession) statV1(p string) error {
	var mode, size, mtime uint32
	if fi, err := s.dev.Stat(p); err == nil {
		mode, size, mtime = unixMode(fi.Mode()), uint32(fi.Size()), uint32(fi.ModTime().Unix())
	}
	s.put(syncSTAT, mode, size, mtime)
	return nil
}

// statV2 answers STA2 and LST2 with the 72-byte stat_v2 layout; errors are
// reported as an errno (2 for a missing file) and not as FAIL.
func (s *syncSession) statV2(id, p string) error {
	fi, err := s.dev.Stat(p)
	s.w.WriteString(id)
	s.w.Write(appendStatV2(nil, fi, err))
	return nil
}

// appendStatV2 encodes everything of sync_stat_v2 after the id.
func appendStatV2(b []byte, fi fs.FileInfo, err error) []byte {
	le := binary.LittleEndian
	if err != nil {
		b = le.AppendUint32(b, uint32(errnoOf(err)))
		return append(b, make([]byte, 64)...)
	}
	st := statOf(fi)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, st.dev)
	b = le.AppendUint64(b, st.ino)
	b = le.AppendUint32(b, unixMode(fi.Mode()))
	b = le.AppendUint32(b, st.nlink)
	b = le.AppendUint32(b, st.uid)
	b = le.AppendUint32(b, st.gid)
	b = le.AppendUint64(b, uint64(fi.Size()))
	b = le.AppendUint64(b, uint64(st.atime))
	b = le.AppendUint64(b, uint64(fi.ModTime().Unix()))
	b = le.AppendUint64(b, uint64(st.ctime))
	return b
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
		name := fi.Name()
		if v2 {
			s.w.WriteString(syncDNT2)
			s.w.Write(appendStatV2(nil, fi, nil))
			s.put("", uint32(len(name)))
		} else {
			s.put(syncDENT, unixMode(fi.Mode()), uint32(fi.Size()), uint32(fi.ModTime().Unix()), uint32(len(name)))
		}
		s.w.WriteString(name)
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	s.w.WriteString(syncDONE)
	if v2 {
		s.w.Write(make([]byte, 72))
	} else {
		s.w.Write(make([]byte, 16))
	}
	return nil
}

// send receives a file: DATA chunks then DONE, whose length field carries
// the mtime. Device.WriteFile wants the mtime up front, so the content is
// collected first; simulated pushes are small enough to hold in memory.
func (s *syncSession) send(spec string) (bool, error) {
	comma := strings.LastIndexByte(spec, ',')
	if comma < 0 {
		s.fail("missing , in ID_SEND_V1")
		return false, nil
	}
	p := spec[:comma]
	if strings.HasSuffix(p, "/") {
		// open(2) with O_CREAT fails so on a real device; a Device
		// implementation would otherwise likely write the directory's name.
		s.fail("couldn't create file: " + strerror(syscall.EISDIR))
		return false, nil
	}
	mode, ok := parseMode(spec[comma+1:])
	if !ok {
		s.fail("bad mode")
		return false, nil
	}
	var buf bytes.Buffer
	var mtime uint32
	for done := false; !done; {
		var hdr [8]byte
		if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
			return false, nil // the host went away mid-push
		}
		n := binary.LittleEndian.Uint32(hdr[4:])
		switch string(hdr[:4]) {
		case syncDATA:
			if n > syncMaxData {
				s.fail("oversize data message")
				return false, nil
			}
			if _, err := io.CopyN(&buf, s.r, int64(n)); err != nil {
				return false, nil
			}
		case syncDONE:
			mtime, done = n, true
		default:
			s.fail("invalid data message")
			return false, nil
		}
	}
	if mode&0o170000 == syscall.S_IFLNK {
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
	s.put(syncOKAY, 0)
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
	chunk := make([]byte, syncMaxData)
	for {
		if err := s.ctx.Err(); err != nil {
			return false, err
		}
		n, rerr := io.ReadFull(f, chunk)
		if n > 0 {
			s.put(syncDATA, uint32(n))
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
	s.put(syncDONE, 0)
	return true, nil
}

// parseMode reads the SEND mode like adbd's strtoul(…, 0): decimal, 0-octal
// or 0x-hex, ignoring trailing junk; only overflow is an error.
func parseMode(s string) (uint32, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, digits = 16, s[2:]
	case strings.HasPrefix(s, "0"):
		base = 8
	}
	end := 0
	for end < len(digits) && isDigit(digits[end], base) {
		end++
	}
	if end == 0 {
		return 0, true
	}
	v, err := strconv.ParseUint(digits[:end], base, 32)
	return uint32(v), err == nil
}

func isDigit(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base >= 10
	case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}

// renamed presents a FileInfo under another name, for "." and "..".
type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

// unixMode converts a Go file mode to st_mode bits as the sync protocol
// carries them.
func unixMode(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	switch {
	case m&fs.ModeDir != 0:
		v |= syscall.S_IFDIR
	case m&fs.ModeSymlink != 0:
		v |= syscall.S_IFLNK
	case m&fs.ModeNamedPipe != 0:
		v |= syscall.S_IFIFO
	case m&fs.ModeSocket != 0:
		v |= syscall.S_IFSOCK
	case m&fs.ModeCharDevice != 0:
		v |= syscall.S_IFCHR
	case m&fs.ModeDevice != 0:
		v |= syscall.S_IFBLK
	default:
		v |= syscall.S_IFREG
	}
	if m&fs.ModeSetuid != 0 {
		v |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		v |= syscall.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		v |= syscall.S_ISVTX
	}
	return v
}

// statExtra is the part of struct stat a FileInfo does not carry.
type statExtra struct {
	dev, ino     uint64
	nlink        uint32
	uid, gid     uint32
	atime, ctime int64
}

// statOf takes the extra stat fields from the host's stat when the device
// keeps files on a real file system, else plausible values for /sdcard:
// owner root, group sdcard_rw (1015), times equal to the mtime.
func statOf(fi fs.FileInfo) statExtra {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return statExtra{
			dev: uint64(st.Dev), ino: st.Ino, nlink: uint32(st.Nlink),
			uid: st.Uid, gid: st.Gid,
			atime: st.Atim.Sec, ctime: st.Ctim.Sec,
		}
	}
	t := fi.ModTime().Unix()
	return statExtra{nlink: 1, gid: 1015, atime: t, ctime: t}
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
