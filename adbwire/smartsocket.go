// Package adbwire is the byte format of adb's host side, in one place for
// both ends of it: our client of the adb server (solopi/adb) and the
// simulator's fake adb server and adbd (sim/adbd). It holds the smart-socket
// framing of port 5037 (hex4-length requests and data replies, the OKAY and
// FAIL status, the transport id of host:tport), the sync service's messages
// (push, pull, stat, list) and the packets of shell protocol v2.
//
// Every decoder reads from a byte stream that the transport may split
// anywhere, so it only ever uses io.ReadFull, and it refuses a length over
// its limit before allocating for it. The package depends on the standard
// library only.
package adbwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrProtocol marks bytes that break the protocol: a bad length prefix, an
// unexpected id, a length over a limit.
var ErrProtocol = errors.New("adb protocol error")

// ErrTooLong marks a request the hex4 framing cannot carry; nothing was
// written.
var ErrTooLong = errors.New("request too long")

// Fail is the message of a FAIL reply, of the server (smart socket) or of
// the sync service: the peer refused, and the text says why.
type Fail string

func (f Fail) Error() string { return string(f) }

// Status words of the smart-socket protocol.
const (
	StatusOkay = "OKAY"
	statusFail = "FAIL"
)

// maxHex4 is the longest payload a hex4 length prefix can express. (adb's
// client also caps requests at MAX_PAYLOAD, 1 MiB, which is larger, so
// 0xffff is the real limit for a shell command.)
const maxHex4 = 0xffff

// AppendHex4 appends s behind its length in 4 lowercase hex digits, the
// framing of smart-socket requests and data replies. A longer s is cut to
// MaxHex4 rather than framed with a length the reader cannot parse; where
// cutting is wrong (a request) WriteRequest refuses instead.
func AppendHex4(b []byte, s string) []byte {
	if len(s) > maxHex4 {
		s = s[:maxHex4]
	}
	const digits = "0123456789abcdef"
	n := len(s)
	b = append(b, digits[n>>12], digits[n>>8&15], digits[n>>4&15], digits[n&15])
	return append(b, s...)
}

// WriteRequest writes one smart-socket request in a single Write, as adb's
// 29.0.6 client does. A request longer than MaxHex4 is ErrTooLong.
func WriteRequest(w io.Writer, req string) error {
	if len(req) > maxHex4 {
		return fmt.Errorf("%w: request of %d bytes exceeds the protocol's %d; push long data as a file instead", ErrTooLong, len(req), maxHex4)
	}
	_, err := w.Write(AppendHex4(make([]byte, 0, 4+len(req)), req))
	return err
}

// ReadHex4 reads a hex4 length and that many bytes: a request on the
// server's side, a data reply or a FAIL message on the client's. I/O errors
// are returned as they are (io.EOF before the first byte).
func ReadHex4(r io.Reader) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad length prefix %q", ErrProtocol, h[:])
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadStatus reads OKAY (nil) or FAIL with its hex4 message (a Fail).
func ReadStatus(r io.Reader) error {
	var st [4]byte
	if _, err := io.ReadFull(r, st[:]); err != nil {
		return err
	}
	switch string(st[:]) {
	case StatusOkay:
		return nil
	case statusFail:
		msg, err := ReadHex4(r)
		if err != nil {
			return err
		}
		return Fail(msg)
	}
	return fmt.Errorf("%w: expected OKAY or FAIL, got %q", ErrProtocol, st[:])
}

// WriteOkay answers a request that carries no data.
func WriteOkay(w io.Writer) error {
	_, err := io.WriteString(w, StatusOkay)
	return err
}

// WriteOkayData answers a host query that returns data: OKAY and s in hex4
// framing, in one Write.
func WriteOkayData(w io.Writer, s string) error {
	_, err := w.Write(AppendHex4([]byte(StatusOkay), s))
	return err
}

// WriteFail refuses a request with msg.
func WriteFail(w io.Writer, msg string) error {
	_, err := w.Write(AppendHex4([]byte(statusFail), msg))
	return err
}

// AppendTransportID appends the 8-byte little-endian transport id that
// follows the OKAY of host:tport:*.
func AppendTransportID(b []byte, id uint64) []byte { return binary.LittleEndian.AppendUint64(b, id) }

// ReadTransportID reads the id AppendTransportID writes.
func ReadTransportID(r io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
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
