package adbd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Smart-socket framing of the adb server protocol (port 5037): a request is
// 4 hex digits of length plus the text; replies are OKAY or FAIL, and data
// replies carry the same hex4 length prefix.

// maxRequest is the adb client's own cap on a request (MAX_PAYLOAD).
const maxRequest = 1 << 20

var errBadRequest = errors.New("bad smart-socket request")

// readRequest reads one length-prefixed request.
func readRequest(r io.Reader) (string, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(string(hdr[:]), 16, 32)
	if err != nil {
		return "", fmt.Errorf("%w: length %q", errBadRequest, hdr[:])
	}
	if n > maxRequest {
		return "", fmt.Errorf("%w: length %d over %d", errBadRequest, n, maxRequest)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", fmt.Errorf("%w: %w", errBadRequest, noEOF(err))
	}
	return string(buf), nil
}

// hex4 frames s with its length. Replies here stay far below 64 KiB; a
// longer one is cut rather than sending a length the client cannot parse.
func hex4(s string) string {
	if len(s) > 0xffff {
		s = s[:0xffff]
	}
	return fmt.Sprintf("%04x%s", len(s), s)
}

func writeOkay(w io.Writer) error {
	_, err := io.WriteString(w, "OKAY")
	return err
}

// writeOkayData answers a host query that returns data.
func writeOkayData(w io.Writer, s string) error {
	_, err := io.WriteString(w, "OKAY"+hex4(s))
	return err
}

func writeFail(w io.Writer, msg string) error {
	_, err := io.WriteString(w, "FAIL"+hex4(msg))
	return err
}
