package adbwire

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// The sync: service (file_sync_protocol.h). Every request and most replies
// are an 8-byte header, a 4-byte id and a u32le length or value, then a
// payload. Requests do not line up with transport messages (one WRTE may
// hold SEND, DATA and DONE), so both sides only ever see bytes.

// Sync request and reply ids, as they read on the wire.
const (
	SyncSTAT = "STAT"
	SyncSTA2 = "STA2"
	SyncLST2 = "LST2"
	SyncLIST = "LIST"
	SyncLIS2 = "LIS2"
	SyncDENT = "DENT"
	SyncDNT2 = "DNT2"
	SyncSEND = "SEND"
	SyncRECV = "RECV"
	SyncDATA = "DATA"
	SyncDONE = "DONE"
	SyncOKAY = "OKAY"
	SyncFAIL = "FAIL"
	SyncQUIT = "QUIT"
)

// Sync limits.
const (
	SyncDataMax = 64 << 10 // SYNC_DATA_MAX: the largest DATA chunk either side may send
	SyncPathMax = 1024     // the longest request payload (a path, or SEND's "path,mode"); adbd refuses more
	syncFailMax = 64 << 10 // the longest FAIL message a reader accepts
	syncNameMax = 4096     // the longest DENT name a reader accepts (Linux NAME_MAX is 255)
)

// SyncStat is a file's stat as the sync service carries it. STAT and DENT
// (v1) carry Mode, Size and Mtime as u32; STA2, LST2 and DNT2 carry every
// field.
type SyncStat struct {
	Mode            uint32 // unix st_mode, type bits included
	Size            uint64
	Mtime           int64 // seconds since the epoch
	Atime, Ctime    int64 // v2 only
	Dev, Ino        uint64
	Nlink, UID, GID uint32
}

// AppendSyncHeader appends an id and its u32le length or value.
func AppendSyncHeader(b []byte, id string, n uint32) []byte {
	b = append(b, id...)
	return binary.LittleEndian.AppendUint32(b, n)
}

// AppendSyncRequest appends a request: the header and its payload (a path,
// or SEND's spec). The caller keeps payload within SyncPathMax.
func AppendSyncRequest(b []byte, id, payload string) []byte {
	return append(AppendSyncHeader(b, id, uint32(len(payload))), payload...)
}

// AppendSyncFail appends a FAIL reply with its message.
func AppendSyncFail(b []byte, msg string) []byte { return AppendSyncRequest(b, SyncFAIL, msg) }

// SyncRequest is one request as the device reads it.
type SyncRequest struct {
	ID   string
	Path string // the payload: a path, or SEND's "path,mode"
}

// ReadSyncRequest reads a request on the device's side. A clean io.EOF
// means the host closed the stream between requests. A payload over
// SyncPathMax, or one cut short, is an ErrProtocol whose text after
// "adb protocol error: " is adbd's FAIL message.
func ReadSyncRequest(r io.Reader) (SyncRequest, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return SyncRequest{}, err
	}
	n := binary.LittleEndian.Uint32(hdr[4:])
	if n > SyncPathMax {
		return SyncRequest{}, fmt.Errorf("%w: path too long", ErrProtocol)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return SyncRequest{}, fmt.Errorf("%w: filename read failure: %w", ErrProtocol, noEOF(err))
	}
	return SyncRequest{ID: string(hdr[:4]), Path: string(p)}, nil
}

// ReadSyncHeader reads the 8-byte header of a message the reader expects
// (a reply, or DATA/DONE of a push), so EOF is io.ErrUnexpectedEOF.
func ReadSyncHeader(r io.Reader) (id string, n uint32, err error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", 0, noEOF(err)
	}
	return string(h[:4]), binary.LittleEndian.Uint32(h[4:]), nil
}

// ReadSyncReply reads a reply header on the host's side. A FAIL is read
// whole and returned as a Fail.
func ReadSyncReply(r io.Reader) (id string, n uint32, err error) {
	id, n, err = ReadSyncHeader(r)
	if err != nil || id != SyncFAIL {
		return id, n, err
	}
	if n > syncFailMax {
		return "", 0, fmt.Errorf("%w: sync FAIL message of %d bytes", ErrProtocol, n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return "", 0, noEOF(err)
	}
	return id, n, Fail(msg)
}

// AppendStatV1 appends a STAT reply: mode, size and mtime as u32. A
// missing file is all zeros: mode 0 is how v1 says "does not exist".
func AppendStatV1(b []byte, st SyncStat) []byte {
	b = AppendSyncHeader(b, SyncSTAT, st.Mode)
	b = binary.LittleEndian.AppendUint32(b, uint32(st.Size))
	return binary.LittleEndian.AppendUint32(b, uint32(st.Mtime))
}

// ReadStatV1 reads a STAT reply.
func ReadStatV1(r io.Reader) (SyncStat, error) {
	id, mode, err := ReadSyncReply(r)
	if err != nil {
		return SyncStat{}, err
	}
	if id != SyncSTAT {
		return SyncStat{}, fmt.Errorf("%w: expected STAT, got %q", ErrProtocol, id)
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return SyncStat{}, noEOF(err)
	}
	return SyncStat{
		Mode:  mode,
		Size:  uint64(binary.LittleEndian.Uint32(b[:4])),
		Mtime: int64(binary.LittleEndian.Uint32(b[4:])),
	}, nil
}

// AppendStatV2 appends a STA2 or LST2 reply (id) or the stat part of a DNT2
// entry: errno (0 on success; the stat is then zero) and the 64-byte
// stat_v2 layout.
func AppendStatV2(b []byte, id string, errno uint32, st SyncStat) []byte {
	le := binary.LittleEndian
	b = AppendSyncHeader(b, id, errno)
	b = le.AppendUint64(b, st.Dev)
	b = le.AppendUint64(b, st.Ino)
	b = le.AppendUint32(b, st.Mode)
	b = le.AppendUint32(b, st.Nlink)
	b = le.AppendUint32(b, st.UID)
	b = le.AppendUint32(b, st.GID)
	b = le.AppendUint64(b, st.Size)
	b = le.AppendUint64(b, uint64(st.Atime))
	b = le.AppendUint64(b, uint64(st.Mtime))
	return le.AppendUint64(b, uint64(st.Ctime))
}

// ReadStatV2 reads a STA2 or LST2 reply (72 bytes): the stat and the
// device's errno, 0 on success.
func ReadStatV2(r io.Reader) (SyncStat, uint32, error) {
	id, errno, err := ReadSyncReply(r)
	if err != nil {
		return SyncStat{}, 0, err
	}
	if id != SyncSTA2 && id != SyncLST2 {
		return SyncStat{}, 0, fmt.Errorf("%w: expected STA2, got %q", ErrProtocol, id)
	}
	var b [64]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return SyncStat{}, 0, noEOF(err)
	}
	le := binary.LittleEndian
	return SyncStat{
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

// AppendDent appends one LIST entry (v1): mode, size, mtime, the name's
// length (u32 each), the name.
func AppendDent(b []byte, st SyncStat, name string) []byte {
	b = AppendSyncHeader(b, SyncDENT, st.Mode)
	b = binary.LittleEndian.AppendUint32(b, uint32(st.Size))
	b = binary.LittleEndian.AppendUint32(b, uint32(st.Mtime))
	return appendName(b, name)
}

// AppendDentV2 appends one LIS2 entry: the stat_v2 layout, the name's
// length, the name.
func AppendDentV2(b []byte, st SyncStat, name string) []byte {
	return appendName(AppendStatV2(b, SyncDNT2, 0, st), name)
}

func appendName(b []byte, name string) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(name))), name...)
}

// AppendListDone appends the DONE that ends a listing: an entry of zeros
// (20 bytes after LIST, 76 after LIS2).
func AppendListDone(b []byte, v2 bool) []byte {
	if v2 {
		return append(AppendStatV2(b, SyncDONE, 0, SyncStat{}), 0, 0, 0, 0)
	}
	return append(b, SyncDONE+"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"...)
}

// ReadDent reads one LIST (v1) entry, or the DONE that ends the listing
// (done, the entry's fields ignored).
func ReadDent(r io.Reader) (name string, st SyncStat, done bool, err error) {
	id, mode, err := ReadSyncReply(r)
	if err != nil {
		return "", SyncStat{}, false, err
	}
	var b [12]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", SyncStat{}, false, noEOF(err)
	}
	switch id {
	case SyncDONE:
		return "", SyncStat{}, true, nil
	case SyncDENT:
	default:
		return "", SyncStat{}, false, fmt.Errorf("%w: expected DENT or DONE, got %q", ErrProtocol, id)
	}
	le := binary.LittleEndian
	n := le.Uint32(b[8:])
	if n > syncNameMax {
		return "", SyncStat{}, false, fmt.Errorf("%w: directory entry name of %d bytes", ErrProtocol, n)
	}
	nb := make([]byte, n)
	if _, err := io.ReadFull(r, nb); err != nil {
		return "", SyncStat{}, false, noEOF(err)
	}
	return string(nb), SyncStat{Mode: mode, Size: uint64(le.Uint32(b[0:])), Mtime: int64(le.Uint32(b[4:]))}, false, nil
}

// ReadData reads the next DATA chunk of a pull into buf, which holds
// SyncDataMax bytes, and returns it; io.EOF after the closing DONE.
func ReadData(r io.Reader, buf []byte) ([]byte, error) {
	id, n, err := ReadSyncReply(r)
	if err != nil {
		return nil, err
	}
	switch id {
	case SyncDONE:
		return nil, io.EOF
	case SyncDATA:
	default:
		return nil, fmt.Errorf("%w: expected DATA or DONE, got %q", ErrProtocol, id)
	}
	if n > SyncDataMax {
		return nil, fmt.Errorf("%w: DATA chunk of %d bytes (max %d)", ErrProtocol, n, SyncDataMax)
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		return nil, noEOF(err)
	}
	return buf[:n], nil
}

// ReadSendResult reads the device's answer to SEND...DONE: OKAY, or FAIL.
func ReadSendResult(r io.Reader) error {
	id, _, err := ReadSyncReply(r)
	if err != nil {
		return err
	}
	if id != SyncOKAY {
		return fmt.Errorf("%w: expected OKAY after DONE, got %q", ErrProtocol, id)
	}
	return nil
}

// SendSpec is SEND's payload as adb's client writes it: the remote path, a
// comma, the st_mode in decimal.
func SendSpec(path string, mode uint32) string {
	return path + "," + strconv.FormatUint(uint64(mode), 10)
}

// CutSendSpec splits SEND's payload at its last comma, as adbd does.
func CutSendSpec(spec string) (path, mode string, ok bool) {
	i := strings.LastIndexByte(spec, ',')
	if i < 0 {
		return "", "", false
	}
	return spec[:i], spec[i+1:], true
}

// ParseSendMode reads SEND's mode like adbd's strtoul(…, 0): decimal,
// 0-octal or 0x-hex, ignoring trailing junk; only overflow is an error.
func ParseSendMode(s string) (uint32, bool) {
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

// Unix st_mode bits (Android uses Linux's whatever the host OS is).
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
	sISUID  = 0o4000
	sISGID  = 0o2000
	sISVTX  = 0o1000
)

// FileMode converts a device st_mode to an fs.FileMode.
func FileMode(m uint32) fs.FileMode {
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
	if m&sISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&sISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&sISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// UnixMode converts an fs.FileMode to st_mode bits as the sync service
// carries them; a mode of no other type is a regular file.
func UnixMode(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	switch {
	case m&fs.ModeDir != 0:
		v |= sIFDIR
	case m&fs.ModeSymlink != 0:
		v |= sIFLNK
	case m&fs.ModeNamedPipe != 0:
		v |= sIFIFO
	case m&fs.ModeSocket != 0:
		v |= sIFSOCK
	case m&fs.ModeCharDevice != 0:
		v |= sIFCHR
	case m&fs.ModeDevice != 0:
		v |= sIFBLK
	default:
		v |= sIFREG
	}
	if m&fs.ModeSetuid != 0 {
		v |= sISUID
	}
	if m&fs.ModeSetgid != 0 {
		v |= sISGID
	}
	if m&fs.ModeSticky != 0 {
		v |= sISVTX
	}
	return v
}
