package adbwire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Shell protocol v2 (shell_protocol.h): both directions carry packets of an
// id byte, a u32le length and the data, independent of transport message
// boundaries.

// Shell packet ids.
const (
	ShellStdin      byte = 0
	ShellStdout     byte = 1
	ShellStderr     byte = 2
	ShellExit       byte = 3
	ShellCloseStdin byte = 4
	ShellWindowSize byte = 5
)

// shellPacketMax is the longest packet ReadShellPacket accepts. A client
// sends only stdin and small control packets, so a larger length is a
// broken or hostile peer, refused before anything is allocated.
const shellPacketMax = 1 << 20

// shellPacket is one packet.
type shellPacket struct {
	ID   byte
	Data []byte
}

// AppendShellPacket appends one packet.
func AppendShellPacket(b []byte, id byte, data []byte) []byte {
	b = append(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// ReadShellPacket reads one packet; a clean io.EOF means the stream ended
// between packets.
func ReadShellPacket(r io.Reader) (shellPacket, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return shellPacket{}, err
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > shellPacketMax {
		return shellPacket{}, fmt.Errorf("%w: shell packet id %d: length %d over %d", ErrProtocol, hdr[0], n, shellPacketMax)
	}
	p := shellPacket{ID: hdr[0], Data: make([]byte, n)}
	if _, err := io.ReadFull(r, p.Data); err != nil {
		return shellPacket{}, fmt.Errorf("shell packet id %d: %w", hdr[0], noEOF(err))
	}
	return p, nil
}

// DemuxShell reads a command's packets up to its exit packet, copying
// stdout and stderr (stdin echo, window size and unknown ids are skipped),
// and returns the exit code. A stream that ends before the exit packet is
// io.ErrUnexpectedEOF (the device or server went away); the code is then
// -1. Output packets may be of any length: they are copied through, never
// buffered whole.
func DemuxShell(r io.Reader, stdout, stderr io.Writer) (int, error) {
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return -1, noEOF(err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[1:]))
		var w io.Writer = io.Discard
		switch hdr[0] {
		case ShellStdout:
			w = stdout
		case ShellStderr:
			w = stderr
		case ShellExit:
			if n != 1 {
				return -1, fmt.Errorf("%w: shell exit packet of %d bytes, want 1", ErrProtocol, n)
			}
			var b [1]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return -1, noEOF(err)
			}
			return int(b[0]), nil
		}
		// CopyN, not a make([]byte, n): a corrupt length must not allocate
		// 4 GiB before the stream proves it has the bytes.
		if m, err := io.CopyN(w, r, n); err != nil {
			if m < n && (err == io.EOF || err == io.ErrUnexpectedEOF) {
				return -1, io.ErrUnexpectedEOF
			}
			return -1, err
		}
	}
}
