// Package devicefake is the scripted fake device the host tests share: a
// simulated Android phone (sim/android: its shell, screencap and file
// system) with a scripted SoloPi in place of the simulator's. DialTCP
// serves an http.Handler (the fake SoloPi's query channel) over net.Pipe,
// Shell decodes `am start … -d <uri>` into mutations and runs everything
// else on the phone. Because everything but SoloPi is the simulator, the
// fake passes the transporttest conformance suite. Replay is the scripted
// replay SoloPi built on it.
package devicefake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/android"
)

// Reply is what a scripted shell command answers.
type Reply struct {
	Stdout, Stderr string
	Code           int
	Err            error
}

// AmStarted is the answer of a delivered `am start … -d <uri>`.
var AmStarted = Reply{Stdout: "Starting: Intent { act=android.intent.action.VIEW }\nStatus: ok\nComplete\n"}

// Cleaner is the part of testing.TB that New needs.
type Cleaner interface{ Cleanup(func()) }

// Transport is a scripted solopi.Transport. Set the hooks before use.
type Transport struct {
	// Name is the serial (default "fake-1").
	Name string
	// Port is the control port DialTCP serves (default protocol.DefaultDevicePort).
	Port int
	// Phone is the simulated phone behind the shell and the files.
	Phone *android.Phone
	// Files is the phone's file system with helpers for tests.
	Files *FS
	// OnShell answers a command before the shared ones; args are its words
	// (nil when it does not split). ok=false passes it on.
	OnShell func(ctx context.Context, cmd string, args []string) (r Reply, ok bool)
	// Mutate receives the data URI of every `am start … -d <uri>` and
	// returns the shell's answer (AmStarted, usually).
	Mutate func(uri string) Reply
	// OnExec answers Exec before the phone does; ok=false passes it on.
	OnExec func(ctx context.Context, cmd string) (out []byte, ok bool, err error)
	// BeforeDial, when it returns an error, refuses DialTCP with it (the
	// control service is unreachable).
	BeforeDial func() error

	pipe *Pipe
	mu   sync.Mutex
	log  []string
}

// New returns a Transport whose control port serves h until the test ends.
func New(t Cleaner, h http.Handler) *Transport {
	phone := android.New(android.Config{Serial: "fake-1"}, nil)
	tr := &Transport{Name: "fake-1", Port: protocol.DefaultDevicePort, pipe: NewPipe(h), Phone: phone, Files: &FS{phone: phone}}
	t.Cleanup(func() { tr.pipe.Close() })
	return tr
}

// Serial names the device.
func (t *Transport) Serial() string { return t.Name }

// Shell runs cmd: OnShell first, then `am start … -d <uri>` (Mutate), then
// the phone's shell.
func (t *Transport) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, -1, err
	}
	t.mu.Lock()
	t.log = append(t.log, cmd)
	t.mu.Unlock()
	args, err := Split(cmd)
	if err != nil {
		args = nil
	}
	if r, ok := t.shell(ctx, cmd, args); ok {
		return []byte(r.Stdout), []byte(r.Stderr), r.Code, r.Err
	}
	var out, errb bytes.Buffer
	code := t.Phone.RunShell(ctx, cmd, bytes.NewReader(nil), &out, &errb)
	return out.Bytes(), errb.Bytes(), code, ctx.Err()
}

func (t *Transport) shell(ctx context.Context, cmd string, args []string) (Reply, bool) {
	if t.OnShell != nil {
		if r, ok := t.OnShell(ctx, cmd, args); ok {
			return r, true
		}
	}
	if len(args) >= 2 && args[0] == "am" && args[1] == "start" && t.Mutate != nil {
		for i := 2; i+1 < len(args); i++ {
			if args[i] == "-d" {
				return t.Mutate(args[i+1]), true
			}
		}
		return Reply{Stderr: "Error: no data URI\n", Code: 1}, true
	}
	return Reply{}, false
}

// ShellLog lists every shell command received, in order, and every Exec
// command prefixed "exec:".
func (t *Transport) ShellLog() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.log...)
}

// Ran counts the shell commands that start with prefix.
func (t *Transport) Ran(prefix string) int {
	n := 0
	for _, c := range t.ShellLog() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// Exec runs OnExec, then the phone's shell (binary-safe, like exec:).
func (t *Transport) Exec(ctx context.Context, cmd string) ([]byte, error) {
	t.mu.Lock()
	t.log = append(t.log, "exec:"+cmd)
	t.mu.Unlock()
	if t.OnExec != nil {
		if out, ok, err := t.OnExec(ctx, cmd); ok {
			return out, err
		}
	}
	var out bytes.Buffer
	t.Phone.RunShell(ctx, cmd, bytes.NewReader(nil), &out, io.Discard)
	return out.Bytes(), ctx.Err()
}

// DialTCP opens a stream to the control port.
func (t *Transport) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port != t.Port {
		return nil, fmt.Errorf("fake: connection refused on tcp:%d", port)
	}
	if t.BeforeDial != nil {
		if err := t.BeforeDial(); err != nil {
			return nil, err
		}
	}
	return t.pipe.Dial(ctx)
}

// Push writes a file on the phone, creating its directories like adbd.
func (t *Transport) Push(ctx context.Context, r io.Reader, remote string, mode fs.FileMode, mtime time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	if err := t.Phone.FS().MkdirAll(path.Dir(Canon(remote)), 0o755); err != nil {
		return fmt.Errorf("push %s: %w", remote, err)
	}
	if err := t.Phone.WriteFile(remote, mode, mtime, r); err != nil {
		return fmt.Errorf("push %s: %w", remote, err)
	}
	return nil
}

// Pull copies a phone file into w.
func (t *Transport) Pull(ctx context.Context, remote string, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := t.Phone.Open(remote)
	if err != nil {
		return fmt.Errorf("pull %s: %w", remote, err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("pull %s: %w", remote, err)
	}
	return nil
}

// Stat describes a phone path.
func (t *Transport) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.Files.Stat(remote)
}

// ---- the control port over net.Pipe ----

// Pipe serves an http.Handler on the server ends of net.Pipe streams.
type Pipe struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	srv  *http.Server
}

// NewPipe starts serving h; Close stops it.
func NewPipe(h http.Handler) *Pipe {
	p := &Pipe{ch: make(chan net.Conn), done: make(chan struct{})}
	p.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(pipeListener{p}) }()
	return p
}

// Dial opens a stream to the handler.
func (p *Pipe) Dial(ctx context.Context) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case p.ch <- s:
		return c, nil
	case <-p.done:
		c.Close()
		s.Close()
		return nil, fmt.Errorf("fake: device closed: %w", net.ErrClosed)
	case <-ctx.Done():
		c.Close()
		s.Close()
		return nil, ctx.Err()
	}
}

// Close stops serving.
func (p *Pipe) Close() error {
	p.once.Do(func() { close(p.done) })
	return p.srv.Close()
}

type pipeListener struct{ p *Pipe }

func (l pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.p.ch:
		return c, nil
	case <-l.p.done:
		return nil, net.ErrClosed
	}
}

func (l pipeListener) Close() error {
	l.p.once.Do(func() { close(l.p.done) })
	return nil
}

func (l pipeListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: protocol.DefaultDevicePort}
}

// ---- decoding ----

// Split splits a POSIX command line of plain words, backslash escapes and
// single-quoted strings (what solopi.ShellJoin produces).
func Split(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, inQuote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote:
			if c == '\'' {
				inQuote = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			inQuote, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if inQuote {
		return nil, errors.New("unterminated quote")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// ParseScheme decodes a mutation URI solopi://startaction/<action>?<query>
// the way the app does (protocol.ParseMutationURI: first value wins).
func ParseScheme(uri string) (action string, q url.Values, err error) {
	u := protocol.ParseMutationURI(uri)
	action, ok := u.Action()
	if u.Scheme != "solopi" || u.Host != "startaction" || !ok {
		return "", nil, fmt.Errorf("not a SoloPi mutation URI: %s", uri)
	}
	q = url.Values{}
	for k, v := range u.Params {
		q.Set(k, v)
	}
	return action, q, nil
}

// Count counts the entries of log that contain every part.
func Count(log []string, parts ...string) int {
	n := 0
	for _, m := range log {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(m, p)
		}
		if ok {
			n++
		}
	}
	return n
}
