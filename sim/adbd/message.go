package adbd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Transport protocol commands: the four ASCII letters read as a little-endian
// uint32, so the bytes on the wire spell the name.
const (
	cmdCNXN uint32 = 0x4e584e43
	cmdAUTH uint32 = 0x48545541
	cmdOPEN uint32 = 0x4e45504f
	cmdOKAY uint32 = 0x59414b4f
	cmdWRTE uint32 = 0x45545257
	cmdCLSE uint32 = 0x45534c43
	cmdSTLS uint32 = 0x534c5453
	cmdSYNC uint32 = 0x434e5953
)

// Protocol versions and payload limits (adb.h).
const (
	versionMin          uint32 = 0x01000000 // checksums on every message
	versionSkipChecksum uint32 = 0x01000001 // data_check may be 0
	maxPayloadV1        uint32 = 4096       // what CNXN/AUTH must fit before the handshake
	maxPayload          uint32 = 1 << 20    // what we accept and advertise
	headerSize                 = 24
	authToken           uint32 = 1
	authSignature       uint32 = 2
	authRSAPublicKey    uint32 = 3
	authTokenSize              = 20
)

// message is one transport protocol message: the 24-byte header fields plus
// the payload. Magic is not stored; it is derived from Command on write and
// checked on read.
type message struct {
	Command   uint32
	Arg0      uint32
	Arg1      uint32
	DataCheck uint32 // as received; recomputed on write
	Data      []byte
}

// errBadMagic and errTooLarge mark headers the real adb would reject
// (check_header in transport.cpp); the connection cannot be resynchronised
// after either, so the caller drops it.
var (
	errBadMagic = errors.New("adbd: bad message magic")
	errTooLarge = errors.New("adbd: message payload too large")
)

func commandName(c uint32) string {
	switch c {
	case cmdCNXN, cmdAUTH, cmdOPEN, cmdOKAY, cmdWRTE, cmdCLSE, cmdSTLS, cmdSYNC:
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], c)
		return string(b[:])
	}
	return fmt.Sprintf("0x%08x", c)
}

func (m message) String() string {
	return fmt.Sprintf("%s(0x%x, 0x%x) len=%d", commandName(m.Command), m.Arg0, m.Arg1, len(m.Data))
}

// checksum is adb's data_check: a plain byte sum, not a CRC.
func checksum(data []byte) uint32 {
	var sum uint32
	for _, b := range data {
		sum += uint32(b)
	}
	return sum
}

// readMessage reads one message. Payloads larger than limit are refused
// before anything is allocated, so a hostile length cannot exhaust memory.
// The data_check field is kept but not verified: the real server does not
// verify it either, and some peers send garbage there.
func readMessage(r io.Reader, limit uint32) (message, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return message{}, err
	}
	m, length, err := parseHeader(hdr[:], limit)
	if err != nil {
		return message{}, err
	}
	if length > 0 {
		m.Data = make([]byte, length)
		if _, err := io.ReadFull(r, m.Data); err != nil {
			return message{}, fmt.Errorf("adbd: reading %s payload: %w", commandName(m.Command), noEOF(err))
		}
	}
	return m, nil
}

// parseHeader decodes a 24-byte header and returns the payload length.
func parseHeader(hdr []byte, limit uint32) (message, uint32, error) {
	m := message{
		Command:   binary.LittleEndian.Uint32(hdr[0:]),
		Arg0:      binary.LittleEndian.Uint32(hdr[4:]),
		Arg1:      binary.LittleEndian.Uint32(hdr[8:]),
		DataCheck: binary.LittleEndian.Uint32(hdr[16:]),
	}
	length := binary.LittleEndian.Uint32(hdr[12:])
	magic := binary.LittleEndian.Uint32(hdr[20:])
	if magic != m.Command^0xffffffff {
		return message{}, 0, fmt.Errorf("%w: command 0x%08x magic 0x%08x", errBadMagic, m.Command, magic)
	}
	if length > limit {
		return message{}, 0, fmt.Errorf("%w: %s with %d bytes, limit %d", errTooLarge, commandName(m.Command), length, limit)
	}
	return m, length, nil
}

// appendHeader encodes only the 24-byte header of m, so a large payload can
// be written after it without being copied.
func appendHeader(buf []byte, m message, withChecksum bool) []byte {
	var check uint32
	if withChecksum {
		check = checksum(m.Data)
	}
	buf = binary.LittleEndian.AppendUint32(buf, m.Command)
	buf = binary.LittleEndian.AppendUint32(buf, m.Arg0)
	buf = binary.LittleEndian.AppendUint32(buf, m.Arg1)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(m.Data)))
	buf = binary.LittleEndian.AppendUint32(buf, check)
	return binary.LittleEndian.AppendUint32(buf, m.Command^0xffffffff)
}

// noEOF turns a clean EOF in the middle of a structure into
// io.ErrUnexpectedEOF, so callers can tell a torn message from a peer that
// closed between messages.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
