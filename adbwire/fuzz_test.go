package adbwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// Fuzz targets for every decoder of this package, the bytes a peer sends:
// smart-socket framing, sync requests and replies, shell packets. Each also
// checks that what the encoders write decodes back, whatever the transport
// split. Seeds live in testdata/fuzz/<FuzzName>/; run e.g.
// `go test -fuzz FuzzDemuxShell ./adbwire/`.

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

func FuzzReadHex4(f *testing.F) {
	f.Add([]byte("000chost:version"), "")
	f.Add([]byte("OKAY0004002"), "devices")
	f.Add([]byte("FAIL0014unknown host service"), "unknown host service")
	f.Add([]byte("ffffhost"), "\x00")
	f.Add([]byte("00x1a"), "")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		// Any bytes: a request or a status, never more than was sent.
		if req, err := ReadHex4(bytes.NewReader(b)); err == nil && !bytes.HasPrefix(b[4:], req) {
			t.Fatalf("request %q from %q", req, b)
		}
		err := ReadStatus(bytes.NewReader(b))
		var fail Fail
		if errors.As(err, &fail) && !bytes.Contains(b, []byte(fail)) {
			t.Fatalf("FAIL %q not in %q", fail, b)
		}
		// What the writers send reads back, cut to what hex4 can carry.
		want := s[:min(len(s), maxHex4)]
		var w bytes.Buffer
		if err := WriteRequest(&w, s); (err != nil) != (len(s) > maxHex4) || (err != nil && w.Len() > 0) {
			t.Fatalf("WriteRequest of %d bytes: %v, wrote %d", len(s), err, w.Len())
		}
		_ = WriteOkayData(&w, s)
		_ = WriteFail(&w, s)
		r := &chunkReader{r: &w, seed: byte(len(s))}
		if len(s) <= maxHex4 {
			if got, err := ReadHex4(r); err != nil || string(got) != s {
				t.Fatalf("request: %q %v", got, err)
			}
		}
		if err := ReadStatus(r); err != nil {
			t.Fatalf("OKAY: %v", err)
		}
		if got, err := ReadHex4(r); err != nil || string(got) != want {
			t.Fatalf("data: %v", err)
		}
		if err := ReadStatus(r); !errors.As(err, &fail) || string(fail) != want {
			t.Fatalf("FAIL: %v", err)
		}
	})
}

func FuzzDemuxShell(f *testing.F) {
	f.Add([]byte("\x01\x04\x00\x00\x00out\n\x02\x04\x00\x00\x00err\n\x03\x01\x00\x00\x00\x03"), []byte("out"), []byte("err"), byte(3), byte(1))
	f.Fuzz(func(t *testing.T, stream, out, errOut []byte, code, seed byte) {
		// 1. Arbitrary input: no panic, and the result does not depend on
		// how the stream is split.
		var o1, e1, o2, e2 bytes.Buffer
		c1, err1 := DemuxShell(bytes.NewReader(stream), &o1, &e1)
		c2, err2 := DemuxShell(&chunkReader{r: bytes.NewReader(stream), seed: seed}, &o2, &e2)
		if c1 != c2 || (err1 == nil) != (err2 == nil) || !bytes.Equal(o1.Bytes(), o2.Bytes()) || !bytes.Equal(e1.Bytes(), e2.Bytes()) {
			t.Fatalf("split changed the result: %d/%v vs %d/%v", c1, err1, c2, err2)
		}
		if o1.Len()+e1.Len() > len(stream) {
			t.Fatal("more output than input")
		}
		// 2. A well-formed stream (data cut into seed-sized packets, stdin
		// echo and window-size packets mixed in) round-trips exactly.
		var enc []byte
		step := int(seed%7) + 1
		for i := 0; i < max(len(out), len(errOut)); i += step {
			if i < len(out) {
				enc = AppendShellPacket(enc, ShellStdout, out[i:min(i+step, len(out))])
			}
			if i < len(errOut) {
				enc = AppendShellPacket(enc, ShellStderr, errOut[i:min(i+step, len(errOut))])
			}
			enc = AppendShellPacket(enc, ShellWindowSize, []byte("24x80,0x0"))
		}
		enc = AppendShellPacket(enc, ShellExit, []byte{code})
		enc = append(enc, "trailing garbage after exit"...)
		var o, e bytes.Buffer
		c, err := DemuxShell(&chunkReader{r: bytes.NewReader(enc), seed: seed}, &o, &e)
		if err != nil || c != int(code) || !bytes.Equal(o.Bytes(), out) || !bytes.Equal(e.Bytes(), errOut) {
			t.Fatalf("round trip: %d %v", c, err)
		}
		// 3. Any truncation of it is an unexpected EOF, never a success.
		cut := int(seed) % len(enc)
		if cut < len(enc)-len("trailing garbage after exit") {
			if _, err := DemuxShell(bytes.NewReader(enc[:cut]), io.Discard, io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("truncated at %d: %v", cut, err)
			}
		}
	})
}

func FuzzReadShellPacket(f *testing.F) {
	f.Add(AppendShellPacket(AppendShellPacket(nil, ShellStdin, []byte("hello\n")), ShellCloseStdin, nil))
	f.Add(AppendShellPacket(nil, ShellWindowSize, []byte("24x80,0x0\x00")))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Accepted packets re-encode to exactly the bytes read.
		r := bytes.NewReader(b)
		for {
			before := len(b) - r.Len()
			p, err := ReadShellPacket(r)
			if err != nil {
				if before == len(b) && err != io.EOF {
					t.Fatalf("end of stream between packets: %v", err)
				}
				return
			}
			if len(p.Data) > shellPacketMax {
				t.Fatalf("packet of %d bytes", len(p.Data))
			}
			if got := b[before : len(b)-r.Len()]; !bytes.Equal(AppendShellPacket(nil, p.ID, p.Data), got) {
				t.Fatalf("round trip mismatch")
			}
		}
	})
}

func FuzzReadSyncRequest(f *testing.F) {
	f.Add(AppendSyncRequest(nil, SyncSTA2, "/sdcard/a.txt"))
	f.Add(AppendSyncRequest(AppendSyncRequest(nil, SyncLIST, "/"), SyncLIS2, "/sdcard"))
	f.Add(AppendSyncRequest(nil, SyncSEND, SendSpec("/sdcard/x", 0o100644)))
	f.Add(AppendSyncHeader(nil, SyncSTAT, SyncPathMax+1))
	f.Add([]byte("RECV\x05\x00\x00\x00/a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			before := len(b) - r.Len()
			req, err := ReadSyncRequest(r)
			if err != nil {
				if errors.Is(err, ErrProtocol) {
					// The text after the prefix is adbd's FAIL message.
					if msg := strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": "); msg != "path too long" && !strings.HasPrefix(msg, "filename read failure: ") {
						t.Fatalf("FAIL text %q", msg)
					}
				}
				return
			}
			if len(req.ID) != 4 || len(req.Path) > SyncPathMax {
				t.Fatalf("bad request %q", req.ID)
			}
			if got := b[before : len(b)-r.Len()]; !bytes.Equal(AppendSyncRequest(nil, req.ID, req.Path), got) {
				t.Fatalf("round trip mismatch")
			}
			if path, mode, ok := CutSendSpec(req.Path); ok {
				if path+","+mode != req.Path {
					t.Fatalf("CutSendSpec(%q) lost bytes", req.Path)
				}
				ParseSendMode(mode)
			}
		}
	})
}

// FuzzSyncReplies feeds arbitrary bytes to every reply decoder of the host
// side (no panic, the split of the stream does not matter, nothing longer
// than the input comes out), then checks that the device side's encoders,
// given the same bytes as contents, decode back exactly.
func FuzzSyncReplies(f *testing.F) {
	f.Add([]byte("DATA\x05\x00\x00\x00helloDONE\x00\x00\x00\x00"), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, seed byte) {
		var w1, w2 bytes.Buffer
		err1 := copyData(bytes.NewReader(data), &w1)
		err2 := copyData(&chunkReader{r: bytes.NewReader(data), seed: seed}, &w2)
		if (err1 == nil) != (err2 == nil) || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("split changed RECV result: %v vs %v", err1, err2)
		}
		if w1.Len() > len(data) {
			t.Fatal("more output than input")
		}
		var fail Fail
		if errors.As(err1, &fail) && len(fail) > len(data) {
			t.Fatal("FAIL message longer than input")
		}
		r := bytes.NewReader(data)
		for {
			name, st, done, err := ReadDent(r)
			if err != nil || done {
				break
			}
			if len(name) > len(data) {
				t.Fatal("name longer than input")
			}
			_ = FileMode(st.Mode).String()
		}
		_, _ = ReadStatV1(bytes.NewReader(data))
		_, _, _ = ReadStatV2(bytes.NewReader(data))
		_ = ReadSendResult(bytes.NewReader(data))

		// The device side's encoders, with data as the file's contents,
		// its name and its stat fields.
		le := binary.LittleEndian
		word := func(i int) uint64 {
			var b [8]byte
			copy(b[:], data[min(i, len(data)):])
			return le.Uint64(b[:])
		}
		st := SyncStat{Mode: uint32(word(0)), Size: word(4), Mtime: int64(word(8)), Atime: int64(word(12)), Ctime: int64(word(16)),
			Dev: word(20), Ino: word(24), Nlink: uint32(word(28)), UID: uint32(word(32)), GID: uint32(word(36))}
		name := string(data[:min(len(data), syncNameMax)])
		var enc []byte
		for off := 0; off < len(data); off += SyncDataMax {
			chunk := data[off:min(off+SyncDataMax, len(data))]
			enc = append(AppendSyncHeader(enc, SyncDATA, uint32(len(chunk))), chunk...)
		}
		enc = AppendSyncHeader(enc, SyncDONE, 0)
		enc = AppendStatV1(enc, st)
		enc = AppendStatV2(enc, SyncSTA2, uint32(seed), st)
		enc = AppendDent(enc, st, name)
		enc = AppendListDone(enc, false)
		enc = AppendSyncHeader(enc, SyncOKAY, 0)
		enc = AppendSyncFail(enc, name)
		r2 := &chunkReader{r: bytes.NewReader(enc), seed: seed}
		var got bytes.Buffer
		if err := copyData(r2, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("DATA round trip: %v", err)
		}
		v1 := SyncStat{Mode: st.Mode, Size: uint64(uint32(st.Size)), Mtime: int64(uint32(st.Mtime))}
		if s1, err := ReadStatV1(r2); err != nil || s1 != v1 {
			t.Fatalf("STAT round trip: %+v %v, want %+v", s1, err, v1)
		}
		if s2, errno, err := ReadStatV2(r2); err != nil || s2 != st || errno != uint32(seed) {
			t.Fatalf("STA2 round trip: %+v %d %v", s2, errno, err)
		}
		if n, s, done, err := ReadDent(r2); err != nil || done || n != name || s != v1 {
			t.Fatalf("DENT round trip: %q %+v %v %v", n, s, done, err)
		}
		if _, _, done, err := ReadDent(r2); err != nil || !done {
			t.Fatalf("DONE: %v %v", done, err)
		}
		if err := ReadSendResult(r2); err != nil {
			t.Fatalf("OKAY: %v", err)
		}
		if _, _, err := ReadSyncReply(r2); !errors.As(err, &fail) || string(fail) != name {
			t.Fatalf("FAIL round trip: %v", err)
		}
	})
}

// copyData is the host's pull loop: DATA chunks to w until DONE.
func copyData(r io.Reader, w io.Writer) error {
	buf := make([]byte, SyncDataMax)
	for {
		chunk, err := ReadData(r, buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		w.Write(chunk)
	}
}
