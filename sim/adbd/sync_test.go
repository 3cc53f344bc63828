package adbd

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

func syncReq(id, path string) []byte {
	b := []byte(id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(path)))
	return append(b, path...)
}

func syncWord(id string, v uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte(id), v)
}

// pushBytes is what `adb push` sends after sync:, with DATA chunks of
// 0xfff8 bytes like the 29.0.6 client.
func pushBytes(path string, mode uint32, content []byte, mtime uint32) []byte {
	b := syncReq(adbwire.SyncSEND, path+","+strconv.FormatUint(uint64(mode), 10))
	for off := 0; off < len(content); off += 0xfff8 {
		chunk := content[off:min(off+0xfff8, len(content))]
		b = append(b, syncWord(adbwire.SyncDATA, uint32(len(chunk)))...)
		b = append(b, chunk...)
	}
	return append(b, syncWord(adbwire.SyncDONE, mtime)...)
}

// parseRecv reassembles RECV output: DATA chunks then DONE.
func parseRecv(t *testing.T, b []byte) (content []byte, fail string, maxChunk int) {
	t.Helper()
	for len(b) >= 8 {
		id, n := string(b[:4]), int(binary.LittleEndian.Uint32(b[4:8]))
		b = b[8:]
		switch id {
		case adbwire.SyncDATA:
			content = append(content, b[:n]...)
			maxChunk = max(maxChunk, n)
			b = b[n:]
		case adbwire.SyncDONE:
			return content, "", maxChunk
		case adbwire.SyncFAIL:
			return nil, string(b[:n]), 0
		default:
			t.Fatalf("unexpected sync reply %q", id)
		}
	}
	t.Fatalf("RECV reply truncated")
	return nil, "", 0
}

func TestSyncPushPull3MiB(t *testing.T) {
	t.Parallel()
	h, dev, _ := connectedHost(t)
	content := pattern(3 << 20)
	const remote = "/sdcard/Android/data/com.example.app/files/big.bin"
	mtime := uint32(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Unix())

	s, err := h.open("sync:")
	if err != nil {
		t.Fatal(err)
	}
	// STA2 of the missing destination: error 2 (ENOENT) and zeros.
	s.write(syncReq(adbwire.SyncSTA2, remote))
	reply := s.readN(72, 5*time.Second)
	if want := append(syncWord(adbwire.SyncSTA2, 2), make([]byte, 64)...); !bytes.Equal(reply, want) {
		t.Fatalf("STA2 missing: % x", reply)
	}
	// SEND with every boundary misaligned: 1-byte, odd and over-64K WRTEs.
	s.writeSplit(pushBytes(remote, 0o100644, content, mtime), 1, 5, 11, 4099, 65537, 300001)
	if reply := s.readN(8, 10*time.Second); !bytes.Equal(reply, syncWord(adbwire.SyncOKAY, 0)) {
		t.Fatalf("SEND reply %q", reply)
	}
	onDisk, err := os.ReadFile(dev.hostPath(remote))
	if err != nil || !bytes.Equal(onDisk, content) {
		t.Fatalf("pushed file differs (err %v, %d bytes)", err, len(onDisk))
	}
	fi, _ := os.Stat(dev.hostPath(remote))
	if fi.ModTime().Unix() != int64(mtime) || fi.Mode().Perm() != 0o666 {
		t.Errorf("mtime %v mode %v", fi.ModTime(), fi.Mode())
	}

	// STAT v1 and STA2 of the pushed file.
	s.write(syncReq(adbwire.SyncSTAT, remote))
	st := s.readN(16, 5*time.Second)
	if string(st[:4]) != adbwire.SyncSTAT || binary.LittleEndian.Uint32(st[4:]) != 0o100000|uint32(fi.Mode().Perm()) ||
		binary.LittleEndian.Uint32(st[8:]) != 3<<20 || binary.LittleEndian.Uint32(st[12:]) != mtime {
		t.Errorf("STAT % x", st)
	}
	s.write(syncReq(adbwire.SyncLST2, remote))
	st2 := s.readN(72, 5*time.Second)
	if string(st2[:4]) != adbwire.SyncLST2 || binary.LittleEndian.Uint32(st2[4:]) != 0 ||
		binary.LittleEndian.Uint64(st2[40:]) != 3<<20 || binary.LittleEndian.Uint64(st2[56:]) != uint64(mtime) {
		t.Errorf("LST2 % x", st2)
	}

	// RECV in 64 KiB chunks.
	s.write(syncReq(adbwire.SyncRECV, remote))
	want := 0
	for off := 0; off < len(content); off += adbwire.SyncDataMax {
		want += 8 + min(adbwire.SyncDataMax, len(content)-off)
	}
	got, fail, maxChunk := parseRecv(t, s.readN(want+8, 20*time.Second))
	if fail != "" || !bytes.Equal(got, content) || maxChunk != adbwire.SyncDataMax {
		t.Fatalf("RECV: fail %q, equal %v, max chunk %d", fail, bytes.Equal(got, content), maxChunk)
	}

	s.write(syncWord(adbwire.SyncQUIT, 0))
	if rest := s.readAll(5 * time.Second); len(rest) != 0 {
		t.Errorf("bytes after QUIT: %q", rest)
	}
}

func TestSyncMissingAndErrors(t *testing.T) {
	t.Parallel()
	h, dev, _ := connectedHost(t)
	if err := os.MkdirAll(dev.hostPath("/data/local/tmp/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dev.hostPath("/data/local/tmp/a.txt"), []byte("abc"), 0o644)

	s, err := h.open("sync:")
	if err != nil {
		t.Fatal(err)
	}
	s.write(syncReq(adbwire.SyncSTAT, "/nope"))
	if got := s.readN(16, 5*time.Second); !bytes.Equal(got, append([]byte("STAT"), make([]byte, 12)...)) {
		t.Errorf("STAT missing: % x", got)
	}
	s.write(syncReq(adbwire.SyncSTA2, "/data/local/tmp/dir"))
	st := s.readN(72, 5*time.Second)
	if binary.LittleEndian.Uint32(st[4:]) != 0 || binary.LittleEndian.Uint32(st[24:])&0o170000 != 0o040000 {
		t.Errorf("STA2 dir: % x", st)
	}

	// LIST: ".", "..", then the entries, then DONE with 16 zero bytes.
	s.write(syncReq(adbwire.SyncLIST, "/data/local/tmp"))
	names := readDents(t, s, false)
	if strings.Join(names, ",") != ".,..,a.txt,dir" {
		t.Errorf("LIST names %q", names)
	}
	s.write(syncReq(adbwire.SyncLIS2, "/data/local/tmp"))
	if names := readDents(t, s, true); strings.Join(names, ",") != ".,..,a.txt,dir" {
		t.Errorf("LIS2 names %q", names)
	}
	s.write(syncReq(adbwire.SyncLIST, "/missing"))
	if names := readDents(t, s, false); len(names) != 0 {
		t.Errorf("LIST of missing dir: %q", names)
	}

	// RECV of a missing file: FAIL with strerror, then the stream closes.
	s.write(syncReq(adbwire.SyncRECV, "/data/local/tmp/nope"))
	out := s.readAll(5 * time.Second)
	if _, fail, _ := parseRecv(t, out); fail != "open failed: No such file or directory" {
		t.Errorf("RECV missing: %q", out)
	}
}

func readDents(t *testing.T, s *testStream, v2 bool) []string {
	t.Helper()
	size := 20
	if v2 {
		size = 76
	}
	var names []string
	for {
		ent := s.readN(size, 5*time.Second)
		id := string(ent[:4])
		if id == adbwire.SyncDONE {
			if !bytes.Equal(ent[4:], make([]byte, size-4)) {
				t.Errorf("DONE not zero: % x", ent)
			}
			return names
		}
		if (v2 && id != adbwire.SyncDNT2) || (!v2 && id != adbwire.SyncDENT) {
			t.Fatalf("unexpected entry id %q", id)
		}
		n := int(binary.LittleEndian.Uint32(ent[size-4:]))
		names = append(names, string(s.readN(n, 5*time.Second)))
	}
}

func TestSyncProtocolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input []byte
		fail  string
	}{
		{"unknown command", syncReq("XXXX", "/a"), "unknown command 58585858"},
		{"path too long", syncReq(adbwire.SyncSTAT, strings.Repeat("a", 1025)), "path too long"},
		{"no comma", append(syncReq(adbwire.SyncSEND, "/a"), syncWord(adbwire.SyncDONE, 0)...), "missing , in ID_SEND_V1"},
		{"bad chunk", append(syncReq(adbwire.SyncSEND, "/a,420"), syncWord("JUNK", 0)...), "invalid data message"},
		{"oversize chunk", append(syncReq(adbwire.SyncSEND, "/a,420"), syncWord(adbwire.SyncDATA, adbwire.SyncDataMax+1)...), "oversize data message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _, _ := connectedHost(t)
			s, err := h.open("sync:")
			if err != nil {
				t.Fatal(err)
			}
			s.write(tc.input)
			out := s.readAll(5 * time.Second)
			want := append(syncWord(adbwire.SyncFAIL, uint32(len(tc.fail))), tc.fail...)
			if !bytes.Equal(out, want) {
				t.Errorf("got %q, want %q", out, want)
			}
		})
	}
}
