package adb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunkReader returns at most a varying, seed-driven number of bytes per
// Read, to mimic a byte stream split arbitrarily by the transport.
type chunkReader struct {
	r    io.Reader
	seed byte
	i    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	c.i++
	n := int((c.seed*byte(c.i)+byte(c.i))%13) + 1
	if len(p) > n {
		p = p[:n]
	}
	return c.r.Read(p)
}

func FuzzParseDevicesL(f *testing.F) {
	f.Add("127.0.0.1:5601         device product:simphone model:SimPhone device:sim transport_id:1\n")
	f.Add("127.0.0.1:5601\tdevice\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range parseDevicesL(s) {
			if d.Serial == "" || strings.ContainsAny(d.Serial, "\n") || strings.ContainsAny(d.State, "\n") {
				t.Fatalf("bad entry %+v from %q", d, s)
			}
			if !strings.Contains(s, d.Serial) {
				t.Fatalf("serial %q not in input", d.Serial)
			}
		}
	})
}

func FuzzShellV2Demux(f *testing.F) {
	f.Add([]byte("\x01\x04\x00\x00\x00out\n\x02\x04\x00\x00\x00err\n\x03\x01\x00\x00\x00\x03"), []byte("out"), []byte("err"), byte(3), byte(1))
	f.Fuzz(func(t *testing.T, stream, out, errOut []byte, code, seed byte) {
		// 1. Arbitrary input: no panic, and the result does not depend on
		// how the stream is split.
		var o1, e1, o2, e2 bytes.Buffer
		c1, err1 := demuxShellV2(bytes.NewReader(stream), &o1, &e1)
		c2, err2 := demuxShellV2(&chunkReader{r: bytes.NewReader(stream), seed: seed}, &o2, &e2)
		if c1 != c2 || (err1 == nil) != (err2 == nil) || !bytes.Equal(o1.Bytes(), o2.Bytes()) || !bytes.Equal(e1.Bytes(), e2.Bytes()) {
			t.Fatalf("split changed the result: %d/%v vs %d/%v", c1, err1, c2, err2)
		}
		if o1.Len()+e1.Len() > len(stream) {
			t.Fatal("more output than input")
		}
		// 2. A well-formed stream (data cut into seed-sized packets, stdin
		// echo and window-size packets mixed in) round-trips exactly.
		var enc []byte
		put := func(id byte, d []byte) {
			enc = append(enc, id)
			enc = binary.LittleEndian.AppendUint32(enc, uint32(len(d)))
			enc = append(enc, d...)
		}
		step := int(seed%7) + 1
		for i := 0; i < max(len(out), len(errOut)); i += step {
			if i < len(out) {
				put(shellStdout, out[i:min(i+step, len(out))])
			}
			if i < len(errOut) {
				put(shellStderr, errOut[i:min(i+step, len(errOut))])
			}
			put(shellWindowSize, []byte("24x80,0x0"))
		}
		put(shellExit, []byte{code})
		enc = append(enc, "trailing garbage after exit"...)
		var o, e bytes.Buffer
		c, err := demuxShellV2(&chunkReader{r: bytes.NewReader(enc), seed: seed}, &o, &e)
		if err != nil || c != int(code) || !bytes.Equal(o.Bytes(), out) || !bytes.Equal(e.Bytes(), errOut) {
			t.Fatalf("round trip: %d %v", c, err)
		}
		// 3. Any truncation of it is an unexpected EOF, never a success.
		cut := int(seed) % len(enc)
		if cut < len(enc)-len("trailing garbage after exit") {
			if _, err := demuxShellV2(bytes.NewReader(enc[:cut]), io.Discard, io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("truncated at %d: %v", cut, err)
			}
		}
	})
}

func FuzzSyncReplies(f *testing.F) {
	f.Add([]byte("DATA\x05\x00\x00\x00helloDONE\x00\x00\x00\x00"), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, seed byte) {
		var w1, w2 bytes.Buffer
		err1 := readRecv(bytes.NewReader(data), &w1)
		err2 := readRecv(&chunkReader{r: bytes.NewReader(data), seed: seed}, &w2)
		if (err1 == nil) != (err2 == nil) || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("split changed RECV result: %v vs %v", err1, err2)
		}
		if w1.Len() > len(data) {
			t.Fatal("more output than input")
		}
		var f syncFail
		if errors.As(err1, &f) && len(f) > len(data) {
			t.Fatal("FAIL message longer than input")
		}
		list, _ := readList(bytes.NewReader(data))
		for _, fi := range list {
			if fi.Name() == "." || fi.Name() == ".." {
				t.Fatal("dot entries listed")
			}
			_ = fi.Mode().String()
		}
		_, _ = readStatV1(bytes.NewReader(data))
		_, _, _ = readStatV2(bytes.NewReader(data))
		_ = readSendResult(bytes.NewReader(data))
	})
}
