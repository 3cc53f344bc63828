package adbwire

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
)

// The bytes of Debian's adb 29.0.6 (client requests, server replies),
// written out by hand.
func TestSmartSocketBytes(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	if err := WriteRequest(&w, "host:version"); err != nil || w.String() != "000chost:version" {
		t.Fatalf("request %q %v", w.String(), err)
	}
	w.Reset()
	_ = WriteOkayData(&w, "0029")
	_ = WriteFail(&w, "unknown host service")
	_ = WriteOkay(&w)
	w.Write(AppendTransportID([]byte(StatusOkay), 0x0102))
	if want := "OKAY00040029FAIL0014unknown host serviceOKAYOKAY\x02\x01\x00\x00\x00\x00\x00\x00"; w.String() != want {
		t.Fatalf("replies %q\nwant %q", w.String(), want)
	}
	if err := WriteRequest(&w, strings.Repeat("x", maxHex4+1)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("long request: %v", err)
	}
	if got := AppendHex4(nil, strings.Repeat("y", maxHex4+5)); string(got[:4]) != "ffff" || len(got) != 4+maxHex4 {
		t.Fatalf("a long reply is cut to what hex4 carries: %q", got[:4])
	}
	if _, err := ReadHex4(strings.NewReader("00zzab")); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad prefix: %v", err)
	}
	if err := ReadStatus(strings.NewReader("OKEY")); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad status: %v", err)
	}
	if _, err := ReadHex4(strings.NewReader("000ahost")); err != io.ErrUnexpectedEOF {
		t.Fatalf("torn request: %v", err)
	}
}

func TestSyncBytes(t *testing.T) {
	t.Parallel()
	st := SyncStat{Mode: 0o100644, Size: 10, Mtime: 1700000000}
	got := AppendStatV1(nil, st)
	got = AppendDent(got, st, "a.txt")
	got = AppendListDone(got, false)
	want := "STAT\xa4\x81\x00\x00\x0a\x00\x00\x00\x00\xf1\x53\x65" +
		"DENT\xa4\x81\x00\x00\x0a\x00\x00\x00\x00\xf1\x53\x65\x05\x00\x00\x00a.txt" +
		"DONE" + strings.Repeat("\x00", 16)
	if string(got) != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if v2 := AppendListDone(nil, true); len(v2) != 76 || string(v2[:4]) != SyncDONE {
		t.Fatalf("LIS2 DONE: %q", v2)
	}
	if d := AppendDentV2(nil, st, "a"); len(d) != 72+4+1 || string(d[:4]) != SyncDNT2 {
		t.Fatalf("DNT2: %q", d)
	}
	if _, err := ReadSyncRequest(strings.NewReader("")); err != io.EOF {
		t.Fatalf("empty input: %v", err)
	}
	_, err := ReadSyncRequest(bytes.NewReader(AppendSyncHeader(nil, SyncSTAT, SyncPathMax+1)))
	if !errors.Is(err, ErrProtocol) || err.Error() != "adb protocol error: path too long" {
		t.Fatalf("long path: %v", err)
	}
	var fail Fail
	if _, err := ReadStatV1(bytes.NewReader(AppendSyncFail(nil, "open failed"))); !errors.As(err, &fail) || fail != "open failed" {
		t.Fatalf("FAIL: %v", err)
	}
}

func TestSendSpec(t *testing.T) {
	t.Parallel()
	if s := SendSpec("/sdcard/a,b", 0o100644); s != "/sdcard/a,b,33188" {
		t.Fatalf("SendSpec = %q", s)
	}
	if p, m, ok := CutSendSpec("/sdcard/a,b,33188"); !ok || p != "/sdcard/a,b" || m != "33188" {
		t.Fatalf("CutSendSpec = %q %q %v", p, m, ok)
	}
	if _, _, ok := CutSendSpec("/a"); ok {
		t.Fatal("no comma accepted")
	}
	for _, tc := range []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"33188", 33188, true}, {"0755", 0o755, true}, {"0x1ff", 0x1ff, true},
		{"", 0, true}, {"12abc", 12, true}, {"99999999999", 0, false},
	} {
		got, ok := ParseSendMode(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseSendMode(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFileModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		unix uint32
		want fs.FileMode
	}{
		{0o100644, 0o644},
		{0o40755, fs.ModeDir | 0o755},
		{0o120777, fs.ModeSymlink | 0o777},
		{0o20660, fs.ModeDevice | fs.ModeCharDevice | 0o660},
		{0o60660, fs.ModeDevice | 0o660},
		{0o10600, fs.ModeNamedPipe | 0o600},
		{0o140777, fs.ModeSocket | 0o777},
		{0o104755, fs.ModeSetuid | 0o755},
		{0o42775, fs.ModeDir | fs.ModeSetgid | 0o775},
		{0o41777, fs.ModeDir | fs.ModeSticky | 0o777},
	} {
		if got := FileMode(tc.unix); got != tc.want {
			t.Errorf("FileMode(%o) = %v, want %v", tc.unix, got, tc.want)
		}
		if got := UnixMode(tc.want); got != tc.unix {
			t.Errorf("UnixMode(%v) = %o, want %o", tc.want, got, tc.unix)
		}
	}
}
