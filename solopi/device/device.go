package device

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
)

// DeviceOptions configure a Device.
type DeviceOptions struct {
	Package        string        // SoloPi package, default com.alipay.hulu
	Port           int           // device control port, default 23342
	RequestTimeout time.Duration // per HTTP query, default 5 s
	MaxResponse    int64         // response size cap, default 16 MiB
	Progress       Progress      // nil: no progress events
	Clock          clock.Clock   // every wait and timestamp (nil: the real clock)
}

// Device is the channel every feature uses to reach SoloPi on one device:
// mutations through the DUMP-protected activity, queries over HTTP through
// a `tcp:` stream of the transport. There is no code path that dials a
// device LAN or Wi-Fi address: every byte goes through the Transport.
type Device struct {
	t     Transport
	opts  DeviceOptions
	http  *http.Client
	retry clock.Retry
}

// NewDevice returns the channel over t.
func NewDevice(t Transport, opts DeviceOptions) *Device {
	if opts.Package == "" {
		opts.Package = protocol.DefaultPackage
	}
	if opts.Port == 0 {
		opts.Port = protocol.DefaultDevicePort
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = 5 * time.Second
	}
	if opts.MaxResponse == 0 {
		opts.MaxResponse = 16 << 20
	}
	d := &Device{t: t, opts: opts}
	tr := &http.Transport{
		// One fresh tcp: stream per connection; nothing is forwarded and
		// nothing is left behind when the process dies.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return t.DialTCP(ctx, opts.Port)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	d.http = &http.Client{Transport: tr}
	// A query is sent again only when the stream itself failed (adb
	// dropped it, the port was not up yet); a device answer, whatever it
	// says, is never retried. Mutations never use HTTP.
	d.retry = clock.Retry{Attempts: 3, Clock: d.Clock(), Backoff: clock.Backoff{Base: 50 * time.Millisecond, Max: 250 * time.Millisecond}}
	return d
}

// Transport returns the underlying transport.
func (d *Device) Transport() Transport { return d.t }

// Options returns the options the channel was made with.
func (d *Device) Options() DeviceOptions { return d.opts }

// Clock is the clock of every wait and timestamp on this channel.
func (d *Device) Clock() clock.Clock { return clock.Or(d.opts.Clock) }

// Serial is the device serial.
func (d *Device) Serial() string { return d.t.Serial() }

// Package is the SoloPi package this channel controls.
func (d *Device) Package() string { return d.opts.Package }

// Port is the device control port.
func (d *Device) Port() int { return d.opts.Port }

// Close releases idle HTTP streams.
func (d *Device) Close() { d.http.CloseIdleConnections() }

// amErrorMarkers are the lower-cased markers that make an `am start` fail
// even with exit code 0 (docs/device-protocol.md).
var amErrorMarkers = []string{"error:", "error type ", "exception occurred while executing",
	"securityexception", "security exception", "permission denial", "unable to resolve intent"}

// MutateCommand is the exact device shell command of a mutation.
func (d *Device) MutateCommand(action string, p Params) string {
	return ShellJoin("am", "start", "-W", "-n", d.opts.Package+"/"+protocol.AdbSchemeActivity,
		"-a", protocol.ViewAction, "-d", protocol.MutationURI(action, p))
}

// Mutate sends one mutation through the protected activity. The device
// never answers a mutation: the caller polls the matching query.
func (d *Device) Mutate(ctx context.Context, action string, p Params) error {
	cmd := d.MutateCommand(action, p)
	stdout, stderr, code, err := d.t.Shell(ctx, cmd)
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return ie
		}
		return fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while sending a SoloPi command", err).With("action", action)
	}
	out := strings.ToLower(string(stdout) + string(stderr))
	// solopi-ai's action, stdout and stderr of the failed am start, with
	// the echoed intent's parameters (owner tokens, input text) hidden.
	amOutput := func(e *fault.Error) *fault.Error {
		return e.With("action", action).With("stdout", Truncate(hideIntentParams(strings.TrimSpace(string(stdout))), 2000)).
			With("stderr", Truncate(hideIntentParams(strings.TrimSpace(string(stderr))), 2000))
	}
	for _, m := range amErrorMarkers {
		if strings.Contains(out, m) {
			return amOutput(fault.Newf(fault.Transport, fault.CodeSchemeCommandFailed, "the SoloPi command was refused by the device: %s", hideIntentParams(FirstLine(string(stdout)+string(stderr)))))
		}
	}
	if code != 0 {
		return amOutput(fault.Newf(fault.Transport, fault.CodeSchemeCommandFailed, "am start exited with code %d", code)).With("exitCode", code)
	}
	return nil
}

// intentParams is the query of a SoloPi intent URI as am echoes it.
var intentParams = lazyregexp.New(`(solopi://startaction/[A-Za-z0-9_-]*)\?[^\s}'"]*`)

// hideIntentParams replaces the parameters of every SoloPi intent URI in
// am's output with the redaction marker.
func hideIntentParams(s string) string {
	return intentParams.ReplaceAllString(s, "${1}?"+redact.Marker)
}

func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// QueryRaw runs one read-only query and returns the JSON object body.
func (d *Device) QueryRaw(ctx context.Context, action string, p Params) ([]byte, error) {
	body, err := d.queryBody(ctx, action, p)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) || body[0] != '{' {
		return nil, notAnObject(action, body)
	}
	return body, nil
}

func notAnObject(action string, body []byte) *fault.Error {
	return fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "the device answered something that is not a JSON object").
		With("action", action).With("response", Truncate(string(body), 500))
}

// queryBody runs one query and returns its trimmed, non-empty body,
// refusing transport failures, oversized and HTML answers.
func (d *Device) queryBody(ctx context.Context, action string, p Params) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.RequestTimeout)
	defer cancel()
	url := "http://127.0.0.1:" + fmt.Sprint(d.opts.Port) + protocol.QueryPath(action, p)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build query %s: %w", action, err)
	}
	var resp *http.Response
	err = d.retry.Do(ctx, func(context.Context) (err error) {
		resp, err = d.http.Do(req)
		return err
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fault.Wrap(fault.Transport, fault.CodeControlServiceUnreachable, "the SoloPi control service did not answer in time", err).With("action", action)
		}
		if pe := CtxErr(ctx, err); pe != nil {
			return nil, pe
		}
		return nil, fault.Wrap(fault.Transport, fault.CodeControlServiceUnreachable, "cannot reach the SoloPi control service on the device", err).With("action", action)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.opts.MaxResponse+1))
	if err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeControlServiceUnreachable, "the SoloPi control service connection broke", err).With("action", action)
	}
	if int64(len(body)) > d.opts.MaxResponse {
		return nil, fault.Newf(fault.Transport, fault.CodeInvalidDeviceResponse, "device response larger than %d bytes", d.opts.MaxResponse).With("action", action)
	}
	trimmed := bytes.TrimSpace(body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		// NanoHTTPD's fallback: unknown action, resolvers not yet built.
		return nil, fault.New(fault.Transport, fault.CodeControlServiceNotReady, "the SoloPi control service has no handler for this request yet").With("action", action)
	}
	if len(trimmed) == 0 {
		return nil, notAnObject(action, body)
	}
	return trimmed, nil
}

// Query runs one read-only query and returns the decoded object.
func (d *Device) Query(ctx context.Context, action string, p Params) (WireObject, error) {
	b, err := d.queryBody(ctx, action, p)
	if err != nil {
		return nil, err
	}
	m, err := DecodeObject(b)
	if err != nil {
		return nil, notAnObject(action, b)
	}
	return m, nil
}

// ctxErr turns a cancelled parent context into the interrupt error.
func CtxErr(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the command was interrupted", context.Canceled)
	}
	return nil
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Digest is the SHA-256 of a transferred file and its size.
type Digest struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"sizeBytes"`
}

type hashingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

// remoteSHA256 asks the device for the digest of path (toybox sha256sum).
func (d *Device) remoteSHA256(ctx context.Context, path string) (string, error) {
	stdout, stderr, code, err := d.t.Shell(ctx, ShellJoin("sha256sum", path))
	if err != nil {
		// An interrupt while the digest is read is the interrupt, as in
		// every other device call, not an adb failure.
		if ie := CtxErr(ctx, err); ie != nil {
			return "", ie
		}
		return "", fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while checking a transfer", err)
	}
	if code != 0 {
		return "", fault.Newf(fault.Transport, fault.CodeAdbError, "sha256sum %s failed: %s", path, FirstLine(string(stderr)))
	}
	f := strings.Fields(string(stdout))
	if len(f) == 0 || len(f[0]) != 64 {
		return "", fault.Newf(fault.Transport, fault.CodeInvalidDeviceResponse, "unexpected sha256sum output for %s", path)
	}
	return strings.ToLower(f[0]), nil
}

// Push sends r to remote and verifies the SHA-256 of what landed.
func (d *Device) Push(ctx context.Context, r io.Reader, remote string, mode fs.FileMode) (Digest, error) {
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(r, h)}
	if err := d.t.Push(ctx, cr, remote, mode, d.Clock().Now()); err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return Digest{}, ie
		}
		return Digest{}, fault.Wrap(fault.Transport, fault.CodeAdbError, "push to the device failed", err).With("remotePath", remote)
	}
	dg := Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: cr.n}
	got, err := d.remoteSHA256(ctx, remote)
	if err != nil {
		return dg, err
	}
	if got != dg.SHA256 {
		return dg, fault.New(fault.Transport, fault.CodeTransferDigestMismatch, "the pushed file's SHA-256 on the device differs from the local file").With("remotePath", remote)
	}
	return dg, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Pull copies remote into w and verifies the SHA-256 against the device's.
func (d *Device) Pull(ctx context.Context, remote string, w io.Writer) (Digest, error) {
	hw := &hashingWriter{w: w, h: sha256.New()}
	if err := d.t.Pull(ctx, remote, hw); err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return Digest{}, ie
		}
		if errors.Is(err, fs.ErrNotExist) {
			return Digest{}, fault.Wrap(fault.Transport, fault.CodeRemoteFileNotFound, "the device file does not exist", err).With("remotePath", remote)
		}
		return Digest{}, fault.Wrap(fault.Transport, fault.CodeAdbError, "pull from the device failed", err).With("remotePath", remote)
	}
	dg := Digest{SHA256: hex.EncodeToString(hw.h.Sum(nil)), Size: hw.n}
	got, err := d.remoteSHA256(ctx, remote)
	if err != nil {
		return dg, err
	}
	if got != dg.SHA256 {
		return dg, fault.New(fault.Transport, fault.CodeTransferDigestMismatch, "the pulled file's SHA-256 differs from the device's").With("remotePath", remote)
	}
	return dg, nil
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// Screencap returns a PNG of the current screen (exec: is binary-safe).
func (d *Device) Screencap(ctx context.Context) ([]byte, error) {
	b, err := d.t.Exec(ctx, "screencap -p")
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return nil, ie
		}
		return nil, fault.Wrap(fault.Transport, fault.CodeScreencapFailed, "screencap failed", err)
	}
	if !bytes.HasPrefix(b, pngMagic) {
		// exec-out joins screencap's stderr to its stdout: what came
		// instead of the image is its message (solopi-ai's stderr).
		return nil, fault.New(fault.Transport, fault.CodeScreencapFailed, "screencap did not return a PNG image").
			With("stderr", Truncate(strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD")), 2000))
	}
	return b, nil
}

// Logcat returns the last `lines` lines of the log buffer in threadtime
// format, capped at maxBytes (the buffer is never cleared).
func (d *Device) Logcat(ctx context.Context, lines int, maxBytes int) ([]byte, error) {
	args := []string{"logcat", "-d", "-v", "threadtime"}
	if lines > 0 {
		args = append(args, "-t", fmt.Sprint(lines))
	}
	stdout, stderr, code, err := d.t.Shell(ctx, ShellJoin(args...))
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return nil, ie
		}
		return nil, fault.Wrap(fault.Transport, fault.CodeAdbError, "logcat failed", err)
	}
	if code != 0 {
		return nil, fault.Newf(fault.Transport, fault.CodeAdbError, "logcat exited with %d: %s", code, FirstLine(string(stderr))).
			With("stderr", Truncate(strings.TrimSpace(string(stderr)), 2000)).With("exitCode", code)
	}
	if maxBytes > 0 && len(stdout) > maxBytes {
		// Keep the newest lines: cut at a line boundary from the start.
		cut := stdout[len(stdout)-maxBytes:]
		if i := bytes.IndexByte(cut, '\n'); i >= 0 {
			cut = cut[i+1:]
		}
		stdout = cut
	}
	return stdout, nil
}

// Foreground returns the focused component (pkg/cls) from `dumpsys window`,
// or "" when none is well formed.
func (d *Device) Foreground(ctx context.Context) (string, error) {
	stdout, _, _, err := d.t.Shell(ctx, "dumpsys window")
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return "", ie
		}
		return "", fault.Wrap(fault.Transport, fault.CodeAdbError, "dumpsys window failed", err)
	}
	return parseFocus(string(stdout)), nil
}

// parseFocus extracts pkg/cls from the mCurrentFocus line of dumpsys window.
func parseFocus(out string) string {
	for _, line := range strings.Split(out, "\n") {
		i := strings.Index(line, "mCurrentFocus=Window{")
		if i < 0 {
			continue
		}
		rest := strings.TrimSuffix(strings.TrimSpace(line[i+len("mCurrentFocus=Window{"):]), "}")
		f := strings.Fields(rest)
		if len(f) == 0 {
			return ""
		}
		comp := f[len(f)-1]
		slash := strings.IndexByte(comp, '/')
		if slash <= 0 || slash == len(comp)-1 || !protocol.ValidPackageName(comp[:slash]) {
			return ""
		}
		return comp
	}
	return ""
}

// RestoreForeground brings comp (pkg/cls) back to the front.
func (d *Device) RestoreForeground(ctx context.Context, comp string) error {
	if comp == "" {
		return nil
	}
	_, stderr, code, err := d.t.Shell(ctx, ShellJoin("am", "start", "-W", "-n", comp))
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return ie
		}
		return fault.Wrap(fault.Transport, fault.CodeAdbError, "restoring the foreground activity failed", err)
	}
	if code != 0 {
		return fault.Newf(fault.Transport, fault.CodeAdbError, "restoring %s failed: %s", comp, FirstLine(string(stderr)))
	}
	return nil
}
