//go:build interop

package adb

// A minimal fake adbd (the device end of the adb transport protocol,
// research note §2) that Debian's real adb server can `adb connect` to. It
// stands in for the simulator's solopi/sim/adbd until that exists: CNXN
// without AUTH, OPEN/OKAY/WRTE/CLSE with one-outstanding-WRTE flow control,
// and the services shell (v1 and v2), exec, sync and tcp:. Its "shell" is a
// toy: `;`-separated commands with '...' quoting and `>&2`, running echo,
// exit, true, false, cat FILE and sleep SECONDS.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	aCNXN = 0x4e584e43
	aOPEN = 0x4e45504f
	aOKAY = 0x59414b4f
	aWRTE = 0x45545257
	aCLSE = 0x45534c43
	aAUTH = 0x48545541

	adbVersion = 0x01000001 // skip-checksum version
	adbMaxData = 256 << 10
)

type fakeAdbd struct {
	t    testing.TB
	ln   net.Listener
	root string         // stands in for the device filesystem
	tcp  map[int]string // device port -> host address

	mu    sync.Mutex
	conns map[net.Conn]bool
	opens []string
}

func startFakeAdbd(t testing.TB) *fakeAdbd {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // never 5555-5585
	if err != nil {
		t.Fatal(err)
	}
	a := &fakeAdbd{t: t, ln: ln, root: t.TempDir(), tcp: map[int]string{}, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			a.mu.Lock()
			a.conns[c] = true
			a.mu.Unlock()
			go a.serve(c)
		}
	}()
	t.Cleanup(a.vanish)
	return a
}

func (a *fakeAdbd) addr() string { return a.ln.Addr().String() }

// vanish simulates the device disappearing: no more listener, every
// transport connection dropped.
func (a *fakeAdbd) vanish() {
	a.ln.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.conns {
		c.Close()
	}
}

func (a *fakeAdbd) local(p string) string { return filepath.Join(a.root, filepath.FromSlash(p)) }

type amsg struct {
	cmd, arg0, arg1 uint32
	data            []byte
}

type transport struct {
	a   *fakeAdbd
	c   net.Conn
	wmu sync.Mutex
	max int

	mu      sync.Mutex
	streams map[uint32]*stream
	nextID  uint32
}

func (tr *transport) send(cmd, arg0, arg1 uint32, data []byte) error {
	var h [24]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], cmd)
	le.PutUint32(h[4:], arg0)
	le.PutUint32(h[8:], arg1)
	le.PutUint32(h[12:], uint32(len(data)))
	le.PutUint32(h[16:], 0) // version >= 0x01000001: no checksum
	le.PutUint32(h[20:], cmd^0xffffffff)
	tr.wmu.Lock()
	defer tr.wmu.Unlock()
	if _, err := tr.c.Write(h[:]); err != nil {
		return err
	}
	_, err := tr.c.Write(data)
	return err
}

func readMsg(r io.Reader) (amsg, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return amsg{}, err
	}
	le := binary.LittleEndian
	m := amsg{cmd: le.Uint32(h[0:]), arg0: le.Uint32(h[4:]), arg1: le.Uint32(h[8:])}
	if le.Uint32(h[20:]) != m.cmd^0xffffffff {
		return amsg{}, fmt.Errorf("bad magic")
	}
	n := le.Uint32(h[12:])
	if n > 1<<20 {
		return amsg{}, fmt.Errorf("payload %d too big", n)
	}
	m.data = make([]byte, n)
	_, err := io.ReadFull(r, m.data)
	return m, err
}

// stream is one device-side socket.
type stream struct {
	tr            *transport
	local, remote uint32
	in            chan []byte   // WRTE payloads from the host
	ready         chan struct{} // host OKAYed our last WRTE
	closed        chan struct{} // host sent CLSE, or we closed
	closeOnce     sync.Once
	pending       []byte
}

func (s *stream) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		select {
		case b := <-s.in:
			s.pending = b
			// Acknowledge once the data is ours: the host sends the next
			// WRTE only after this OKAY.
			s.tr.send(aOKAY, s.local, s.remote, nil)
		case <-s.closed:
			select {
			case b := <-s.in:
				s.pending = b
				continue
			default:
			}
			return 0, io.EOF
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

func (s *stream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		select {
		case <-s.ready:
		case <-s.closed:
			return written, io.ErrClosedPipe
		}
		n := min(len(p), s.tr.max)
		if err := s.tr.send(aWRTE, s.local, s.remote, p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.tr.send(aCLSE, s.local, s.remote, nil)
	})
	return nil
}

func (a *fakeAdbd) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	tr := &transport{a: a, c: c, max: adbMaxData, streams: map[uint32]*stream{}}
	defer func() {
		tr.mu.Lock()
		for _, s := range tr.streams {
			s.closeOnce.Do(func() { close(s.closed) })
		}
		tr.mu.Unlock()
	}()
	m, err := readMsg(br)
	if err != nil || m.cmd != aCNXN {
		return
	}
	tr.max = min(adbMaxData, int(m.arg1))
	banner := "device::ro.product.name=fakephone;ro.product.model=FakePhone;ro.product.device=fake;features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir"
	tr.send(aCNXN, adbVersion, adbMaxData, []byte(banner))
	for {
		m, err := readMsg(br)
		if err != nil {
			return
		}
		switch m.cmd {
		case aOPEN:
			svc := strings.TrimRight(string(m.data), "\x00")
			a.mu.Lock()
			a.opens = append(a.opens, svc)
			a.mu.Unlock()
			tr.mu.Lock()
			tr.nextID++
			s := &stream{tr: tr, local: tr.nextID, remote: m.arg0, in: make(chan []byte, 4),
				ready: make(chan struct{}, 1), closed: make(chan struct{})}
			s.ready <- struct{}{} // the OPEN counts as the first ready
			tr.streams[s.local] = s
			tr.mu.Unlock()
			go a.runService(s, svc)
		case aOKAY, aWRTE, aCLSE:
			tr.mu.Lock()
			s := tr.streams[m.arg1]
			if m.cmd == aCLSE {
				delete(tr.streams, m.arg1)
			}
			tr.mu.Unlock()
			if s == nil {
				continue // late message for a closed stream: ignore
			}
			switch m.cmd {
			case aOKAY:
				select {
				case s.ready <- struct{}{}:
				default:
				}
			case aWRTE:
				select {
				case s.in <- m.data:
				case <-s.closed:
				}
			case aCLSE:
				s.closeOnce.Do(func() { close(s.closed) })
			}
		case aAUTH:
			// Never asked for; ignore.
		}
	}
}

// runService answers the OPEN (OKAY, or CLSE(0, id) to refuse) and runs it.
func (a *fakeAdbd) runService(s *stream, svc string) {
	refuse := func() {
		s.closeOnce.Do(func() { close(s.closed) })
		s.tr.send(aCLSE, 0, s.remote, nil)
	}
	var up net.Conn
	if p, ok := strings.CutPrefix(svc, "tcp:"); ok {
		port, _ := strconv.Atoi(p)
		addr, ok := a.tcp[port]
		var err error
		if ok {
			up, err = net.Dial("tcp", addr)
		}
		if !ok || err != nil {
			refuse()
			return
		}
	} else if !strings.HasPrefix(svc, "shell") && !strings.HasPrefix(svc, "exec:") && svc != "sync:" {
		refuse()
		return
	}
	s.tr.send(aOKAY, s.local, s.remote, nil)
	defer s.Close()
	switch {
	case up != nil:
		defer up.Close()
		go func() { io.Copy(up, s); up.(*net.TCPConn).CloseWrite() }()
		io.Copy(s, up)
	case strings.HasPrefix(svc, "exec:"):
		a.sh(s.closed, strings.TrimPrefix(svc, "exec:"), s, s)
	case strings.HasPrefix(svc, "shell"):
		args, cmd, _ := strings.Cut(svc, ":")
		if !strings.Contains(args, "v2") {
			a.sh(s.closed, cmd, s, s)
			return
		}
		go func() { // stdin packets: drain until close-stdin or EOF
			var h [5]byte
			for {
				if _, err := io.ReadFull(s, h[:]); err != nil || h[0] == shellCloseStdin {
					return
				}
				io.CopyN(io.Discard, s, int64(binary.LittleEndian.Uint32(h[1:])))
			}
		}()
		code := a.sh(s.closed, cmd, &packetWriter{s, shellStdout}, &packetWriter{s, shellStderr})
		(&packetWriter{s, shellExit}).Write([]byte{byte(code)})
	case svc == "sync:":
		a.sync(s)
	}
}

type packetWriter struct {
	w  io.Writer
	id byte
}

func (p *packetWriter) Write(b []byte) (int, error) {
	pk := append([]byte{p.id}, binary.LittleEndian.AppendUint32(nil, uint32(len(b)))...)
	if _, err := p.w.Write(append(pk, b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// sh runs the toy shell language described at the top of the file.
func (a *fakeAdbd) sh(cancel <-chan struct{}, cmd string, stdout, stderr io.Writer) int {
	code := 0
	for _, part := range splitUnquoted(cmd, ';') {
		words := shellWords(part)
		out := stdout
		if len(words) > 0 && words[len(words)-1] == ">&2" {
			words, out = words[:len(words)-1], stderr
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "echo":
			fmt.Fprintln(out, strings.Join(words[1:], " "))
			code = 0
		case "true":
			code = 0
		case "false":
			code = 1
		case "exit":
			n, _ := strconv.Atoi(words[1])
			return n
		case "sleep":
			sec, _ := strconv.ParseFloat(words[1], 64)
			select {
			case <-time.After(time.Duration(sec * float64(time.Second))):
			case <-cancel:
				return 130
			}
			code = 0
		case "cat":
			f, err := os.Open(a.local(words[1]))
			if err != nil {
				fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", words[1])
				code = 1
				continue
			}
			io.Copy(out, f)
			f.Close()
			code = 0
		default:
			fmt.Fprintf(stderr, "/system/bin/sh: %s: inaccessible or not found\n", words[0])
			code = 127
		}
	}
	return code
}

func splitUnquoted(s string, sep byte) []string {
	var out []string
	inQ, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			inQ = !inQ
		case s[i] == '\\' && !inQ:
			i++
		case s[i] == sep && !inQ:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// shellWords splits on blanks, honouring '...' and backslash escapes.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	inWord, inQ := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQ && c == '\'':
			inQ = false
		case inQ:
			w.WriteByte(c)
		case c == '\'':
			inQ, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}

// sync serves STAT, STA2, LIST, SEND, RECV, QUIT over the stream, parsing
// a byte stream (the server relays our client's bytes in arbitrary WRTEs).
func (a *fakeAdbd) sync(s *stream) {
	le := binary.LittleEndian
	br := bufio.NewReaderSize(s, 64<<10)
	bw := bufio.NewWriterSize(s, 64<<10)
	defer bw.Flush()
	msg := func(id string, n uint32, data []byte) {
		bw.WriteString(id)
		binary.Write(bw, le, n)
		bw.Write(data)
	}
	failMsg := func(text string) { msg("FAIL", uint32(len(text)), []byte(text)); bw.Flush() }
	for {
		var h [8]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return
		}
		id, n := string(h[:4]), le.Uint32(h[4:])
		if id == "QUIT" {
			return
		}
		if n > 1024 {
			failMsg("path too long")
			return
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		path := string(p)
		switch id {
		case "STAT", "STA2":
			fi, err := os.Stat(a.local(path))
			var mode, size, mtime uint64
			if err == nil {
				mode = uint64(fi.Mode().Perm()) | sIFREG
				if fi.IsDir() {
					mode = uint64(fi.Mode().Perm()) | sIFDIR
				}
				size, mtime = uint64(fi.Size()), uint64(fi.ModTime().Unix())
			}
			if id == "STAT" {
				b := make([]byte, 8)
				le.PutUint32(b, uint32(size))
				le.PutUint32(b[4:], uint32(mtime))
				msg("STAT", uint32(mode), b)
			} else {
				b := make([]byte, 64)
				var errno uint32
				if err != nil {
					errno = 2
				} else {
					le.PutUint32(b[16:], uint32(mode))
					le.PutUint32(b[20:], 1)
					le.PutUint64(b[32:], size)
					le.PutUint64(b[48:], mtime)
				}
				msg("STA2", errno, b)
			}
			bw.Flush()
		case "LIST":
			ents, _ := os.ReadDir(a.local(path))
			for _, e := range ents {
				fi, _ := e.Info()
				b := make([]byte, 12)
				le.PutUint32(b, uint32(fi.Size()))
				le.PutUint32(b[4:], uint32(fi.ModTime().Unix()))
				le.PutUint32(b[8:], uint32(len(e.Name())))
				msg("DENT", uint32(fi.Mode().Perm())|sIFREG, append(b, e.Name()...))
			}
			msg("DONE", 0, make([]byte, 12))
			bw.Flush()
		case "SEND":
			i := strings.LastIndexByte(path, ',')
			lp := a.local(path[:i])
			os.MkdirAll(filepath.Dir(lp), 0o755)
			f, ferr := os.Create(lp)
			for {
				if _, err := io.ReadFull(br, h[:]); err != nil {
					return
				}
				id, n := string(h[:4]), le.Uint32(h[4:])
				if id == "DONE" {
					break
				}
				if id != "DATA" || n > syncDataMax {
					failMsg("bad packet " + id)
					return
				}
				if ferr != nil {
					io.CopyN(io.Discard, br, int64(n))
				} else if _, err := io.CopyN(f, br, int64(n)); err != nil {
					return
				}
			}
			if ferr != nil {
				failMsg("couldn't create file: Permission denied")
				continue
			}
			f.Close()
			msg("OKAY", 0, nil)
			bw.Flush()
		case "RECV":
			f, err := os.Open(a.local(path))
			if err != nil {
				failMsg("open failed: No such file or directory")
				continue
			}
			buf := make([]byte, syncDataMax)
			for {
				n, err := f.Read(buf)
				if n > 0 {
					msg("DATA", uint32(n), buf[:n])
				}
				if err != nil {
					break
				}
			}
			f.Close()
			msg("DONE", 0, nil)
			bw.Flush()
		default:
			failMsg("unknown sync request " + id)
			return
		}
	}
}
