package adbd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/adbwire"
)

// Fuzz targets for every parser that reads bytes from outside the process:
// transport messages, the stdin pump behind shell v2 packets, the whole
// sync session, smart-socket request routing. The framing decoders
// themselves (packets, sync requests, hex4) are adbwire's, fuzzed there.
// Seeds live in testdata/fuzz/<FuzzName>/; run e.g.
// `go test -fuzz FuzzReadMessage`.

func FuzzReadMessage(f *testing.F) {
	f.Add(appendMessage(nil, message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: maxPayload, Data: []byte(testHostBanner)}, true))
	f.Add(appendMessage(nil, message{Command: cmdOPEN, Arg0: 10, Data: []byte("shell,v2,raw:echo hi\x00")}, false))
	f.Add(appendMessage(appendMessage(nil, message{Command: cmdOKAY, Arg0: 1, Arg1: 2}, false),
		message{Command: cmdWRTE, Arg0: 1, Arg1: 2, Data: []byte{4, 0, 0, 0, 0}}, false))
	f.Add([]byte("CNXN\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 1 << 16
		r := bytes.NewReader(b)
		for {
			before := len(b) - r.Len()
			m, err := readMessage(r, limit)
			if err != nil {
				return
			}
			if len(m.Data) > limit {
				t.Fatalf("payload %d over limit", len(m.Data))
			}
			// What was accepted re-encodes to exactly the bytes read.
			enc := appendMessage(nil, m, false)
			binary.LittleEndian.PutUint32(enc[16:], m.DataCheck)
			if got := b[before : len(b)-r.Len()]; !bytes.Equal(enc, got) {
				t.Fatalf("round trip:\n in % x\nout % x", got, enc)
			}
		}
	})
}

func FuzzShellPacket(f *testing.F) {
	f.Add(adbwire.AppendShellPacket(adbwire.AppendShellPacket(nil, adbwire.ShellStdin, []byte("hello\n")), adbwire.ShellCloseStdin, nil))
	f.Add(adbwire.AppendShellPacket(nil, adbwire.ShellWindowSize, []byte("24x80,0x0\x00")))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		// What the packet parser (adbwire, fuzzed there) reads as stdin.
		r := bytes.NewReader(b)
		var stdin []byte
		closed := false
		for {
			p, err := adbwire.ReadShellPacket(r)
			if err != nil {
				break
			}
			if p.ID == adbwire.ShellStdin && !closed {
				stdin = append(stdin, p.Data...)
			}
			if p.ID == adbwire.ShellCloseStdin {
				closed = true
			}
		}
		// The stdin pump over the same bytes delivers exactly that stdin
		// and always terminates.
		pr, pw := io.Pipe()
		go pumpStdin(bytes.NewReader(b), pw, func() {})
		got, _ := io.ReadAll(pr)
		if !bytes.Equal(got, stdin) {
			t.Fatalf("pump delivered %q, parser saw %q", got, stdin)
		}
	})
}

func FuzzSyncRequest(f *testing.F) {
	f.Add(syncReq(adbwire.SyncSTA2, "/sdcard/a.txt"))
	f.Add(append(syncReq(adbwire.SyncLIST, "/"), syncReq(adbwire.SyncLIS2, "/sdcard")...))
	f.Add(append(pushBytes("/sdcard/x", 33188, []byte("hello push\n"), 1700000000), syncReq(adbwire.SyncRECV, "/sdcard/x")...))
	f.Add(append(syncReq(adbwire.SyncSTAT, "/sdcard/x"), syncWord(adbwire.SyncQUIT, 0)...))
	f.Add(append(syncReq(adbwire.SyncSEND, "/a,0755"), syncWord(adbwire.SyncDATA, 0xffffffff)...))
	f.Add([]byte("SEND\x05\x00\x00\x00/a,1\x00DATA\x01\x00\x00\x00xDONE\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// A whole session against an in-memory device must end without
		// panicking, whatever the bytes.
		dev := newMemDevice()
		dev.files["/sdcard/x"] = memFile{data: []byte("content"), mode: 0o644}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := serveSync(ctx, dev, struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(b), &out}); err != nil {
			t.Fatalf("serveSync: %v", err)
		}
	})
}

func FuzzSmartSocketRequest(f *testing.F) {
	f.Add([]byte("000chost:version"))
	f.Add([]byte("0020host:tport:serial:127.0.0.1:5601"))
	f.Add([]byte("ffffhost"))
	f.Add([]byte("00x1a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := adbwire.ReadHex4(bytes.NewReader(b))
		if err != nil {
			return
		}
		req := string(raw)
		// Request routing never panics.
		parseTransportSwitch(req)
		parseHostRequest(req)
		if rest, ok := strings.CutPrefix(req, "host-serial:"); ok {
			if serial, cmd, ok := splitSerial(rest); ok && serial+":"+cmd != rest {
				t.Fatalf("splitSerial(%q) lost bytes: %q %q", rest, serial, cmd)
			}
		}
	})
}

// memDevice is a Device with an in-memory file system, for fuzzing the
// sync service without touching the disk.
type memDevice struct {
	mu    sync.Mutex
	files map[string]memFile
}

type memFile struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

type memInfo struct {
	name string
	f    memFile
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return int64(len(i.f.data)) }
func (i memInfo) Mode() fs.FileMode  { return i.f.mode }
func (i memInfo) ModTime() time.Time { return i.f.mtime }
func (i memInfo) IsDir() bool        { return i.f.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func newMemDevice() *memDevice {
	return &memDevice{files: map[string]memFile{
		"/":       {mode: fs.ModeDir | 0o755},
		"/sdcard": {mode: fs.ModeDir | 0o771},
	}}
}

func (d *memDevice) Serial() string                  { return "MEM" }
func (d *memDevice) Props() (string, string, string) { return "p", "m", "d" }
func (d *memDevice) RunShell(context.Context, string, io.Reader, io.Writer, io.Writer) int {
	return 0
}

func (d *memDevice) Stat(p string) (fs.FileInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.files[path.Clean(p)]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return memInfo{path.Base(p), f}, nil
}

func (d *memDevice) ReadDir(p string) ([]fs.FileInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dir := path.Clean(p)
	var out []fs.FileInfo
	for name, f := range d.files {
		if name != dir && path.Dir(name) == dir {
			out = append(out, memInfo{path.Base(name), f})
		}
	}
	return out, nil
}

func (d *memDevice) Open(p string) (io.ReadCloser, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.files[path.Clean(p)]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

func (d *memDevice) WriteFile(p string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.files) > 100 {
		return errors.New("device full")
	}
	d.files[path.Clean(p)] = memFile{data: b, mode: mode, mtime: mtime}
	return nil
}

func (d *memDevice) DialTCP(context.Context, int) (net.Conn, error) {
	return nil, errors.New("connection refused")
}

// TestMemDeviceSync keeps the fuzz helper honest: a push then pull through
// serveSync round-trips.
func TestMemDeviceSync(t *testing.T) {
	t.Parallel()
	dev := newMemDevice()
	in := append(pushBytes("/sdcard/f", 0o100644, []byte("abc"), 5), syncReq(adbwire.SyncRECV, "/sdcard/f")...)
	var out bytes.Buffer
	if err := serveSync(context.Background(), dev, struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(in), &out}); err != nil {
		t.Fatal(err)
	}
	want := "OKAY\x00\x00\x00\x00DATA\x03\x00\x00\x00abcDONE\x00\x00\x00\x00"
	if out.String() != want {
		t.Errorf("got %q", out.String())
	}
	br := bufio.NewReader(strings.NewReader(""))
	if _, err := adbwire.ReadSyncRequest(br); err != io.EOF {
		t.Errorf("empty input: %v", err)
	}
}

// FuzzTransport feeds arbitrary message sequences to one transport
// connection: whatever the host sends, the connection must neither panic
// nor leave goroutines behind once the host hangs up.
func FuzzTransport(f *testing.F) {
	cnxn := appendMessage(nil, message{Command: cmdCNXN, Arg0: versionSkipChecksum, Arg1: 4096, Data: []byte("host::")}, true)
	open := func(id uint32, svc string) []byte {
		return appendMessage(nil, message{Command: cmdOPEN, Arg0: id, Data: []byte(svc + "\x00")}, false)
	}
	wrte := func(local, remote uint32, data []byte) []byte {
		return appendMessage(nil, message{Command: cmdWRTE, Arg0: local, Arg1: remote, Data: data}, false)
	}
	okay := appendMessage(nil, message{Command: cmdOKAY, Arg0: 1, Arg1: 1}, false)
	clse := appendMessage(nil, message{Command: cmdCLSE, Arg0: 1, Arg1: 1}, false)
	seq := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Add(seq(cnxn, open(1, "shell,v2,raw:x"), wrte(1, 1, []byte{4, 0, 0, 0, 0}), okay, clse))
	f.Add(seq(cnxn, open(1, "sync:"), wrte(1, 1, syncReq(adbwire.SyncSTA2, "/sdcard/x")), okay, wrte(1, 1, syncWord(adbwire.SyncQUIT, 0))))
	f.Add(seq(open(1, "sync:"), cnxn, cnxn, open(2, "tcp:23342"), clse, clse))
	f.Add(seq(cnxn, open(1, "exec:x"), open(1, "exec:y"), wrte(9, 9, []byte("x"))))
	f.Fuzz(func(t *testing.T, b []byte) {
		a := &Adbd{dev: newMemDevice(), cfg: adbdConfig{version: versionSkipChecksum, maxData: 4096}, conns: map[*transportConn]struct{}{}}
		a.cfg.logger = discardLogger()
		a.ctx, a.cancel = context.WithCancel(context.Background())
		defer a.cancel()
		host, dev := net.Pipe()
		c := newTransportConn(a, dev)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.run()
			c.teardown()
		}()
		go io.Copy(io.Discard, host) // the host always reads, like adb's
		host.SetWriteDeadline(time.Now().Add(2 * time.Second))
		host.Write(b)
		host.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("transport did not shut down after the host hung up")
		}
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
