package device

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// User actions of session bootstrap, in words a tester can follow.
const (
	actionInstallSoloPi = "Install SoloPi 1.x (com.alipay.hulu 1.0.2 or newer, harness protocol 2.0) on the device, " +
		"open it once and finish its first-start setup, then run the command again."
	actionUpgradeSoloPi = "Install SoloPi 1.x (harness protocol 2.0) on the device, e.g. com.alipay.hulu 1.0.2: the " +
		"installed SoloPi has no harness control service. Open it once after installing, then run the command again."
	ActionOpenSoloPi = "Unlock the phone, open SoloPi and wait until its main screen appears; if it keeps failing, " +
		"check that --device-port matches SoloPi's control port (default 23342)."
	actionMatchVersions = "Install a SoloPi build that speaks harness protocol 2.0 and agent protocol 1.0 " +
		"(com.alipay.hulu 1.0.2), or use a solopi CLI release made for the installed SoloPi."
)

// SessionOptions configure OpenSession.
type SessionOptions struct {
	Device DeviceOptions
	// StartupTimeout bounds the wait for the control service after a launch
	// (--startup-timeout, default 15 s).
	StartupTimeout time.Duration
	// PollInterval is the readiness poll period (default 200 ms: faster
	// than the reference host's 0.4 s so a ready service is seen sooner).
	PollInterval time.Duration
	// PreserveForeground records the focused activity before launching
	// SoloPi and brings it back afterwards (agent commands observe the app
	// under test, never SoloPi's own window).
	PreserveForeground bool
}

func (o *SessionOptions) defaults() {
	if o.Device.Package == "" {
		o.Device.Package = protocol.DefaultPackage
	}
	if o.Device.Port == 0 {
		o.Device.Port = protocol.DefaultDevicePort
	}
	if o.Device.RequestTimeout == 0 {
		o.Device.RequestTimeout = 5 * time.Second
	}
	if o.StartupTimeout <= 0 {
		o.StartupTimeout = 15 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
}

// Session is a device whose SoloPi control service answered a capabilities
// query with the protocol versions this host speaks.
type Session struct {
	Device *Device
	// Capabilities is the harness?type=capabilities object as the device
	// sent it.
	Capabilities json.RawMessage
	// Launched is true when the service did not answer and the session
	// launched SoloPi to start it.
	Launched bool
	// Foreground is the activity recorded before the launch (only with
	// PreserveForeground), and Restored tells whether it was brought back.
	Foreground string
	Restored   bool

	opts SessionOptions
}

// Options returns the options the session was opened with.
func (s *Session) Options() SessionOptions { return s.opts }

// DeviceWithTimeout returns a channel over the same transport whose queries
// may take up to d: some device queries (status?type=page, agent observe)
// legitimately block longer than the default request timeout.
func (s *Session) DeviceWithTimeout(d time.Duration) *Device {
	o := s.opts.Device
	if d > o.RequestTimeout {
		o.RequestTimeout = d
	}
	return NewDevice(s.Device.Transport(), o)
}

// Close releases the session's idle HTTP streams.
func (s *Session) Close() {
	if s != nil && s.Device != nil {
		s.Device.Close()
	}
}

// IsInstalled runs `pm path <pkg>`: SoloPi is installed when stdout
// starts with "package:". It returns (false, nil) when it is not.
func IsInstalled(ctx context.Context, t Transport, pkg string) (bool, error) {
	stdout, _, _, err := t.Shell(ctx, ShellJoin("pm", "path", pkg))
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return false, ie
		}
		return false, fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while checking that SoloPi is installed", err)
	}
	// `pm path` of a missing package prints nothing and exits 1; the exit
	// code is not needed because only a "package:" line proves the install.
	return strings.HasPrefix(strings.TrimSpace(string(stdout)), "package:"), nil
}

// notInstalledError is the error of a device without SoloPi (exit 3; doctor
// reports it as a finding instead).
func notInstalledError(pkg string) *fault.Error {
	return fault.Newf(fault.Invalid, fault.CodeSolopiNotInstalled, "SoloPi (%s) is not installed on the selected device", pkg).
		WithUserAction(actionInstallSoloPi).With("package", pkg).With("installed", false)
}

// installedVersion reads the versionName of pkg from `dumpsys package`
// ("" when it cannot be read).
func installedVersion(ctx context.Context, t Transport, pkg string) (string, error) {
	stdout, _, _, err := t.Shell(ctx, ShellJoin("dumpsys", "package", pkg))
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return "", ie
		}
		return "", fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while reading the SoloPi version", err)
	}
	return ParseVersionName(string(stdout)), nil
}

// ParseVersionName returns the first versionName=... of dumpsys package.
func ParseVersionName(out string) string {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "versionName="); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return f[0]
			}
			return ""
		}
	}
	return ""
}

// classicVersion reports whether versionName belongs to SoloPi 0.x, which
// has an HTTP server but no harness resolver.
func classicVersion(v string) bool { return strings.HasPrefix(v, "0.") }

func versionUnsupported(pkg, versionName string, cause error) *fault.Error {
	msg := "the installed SoloPi has no harness control service (SoloPi 0.x); this CLI needs SoloPi 1.x"
	if versionName != "" {
		msg = "the installed SoloPi " + versionName + " has no harness control service; this CLI needs SoloPi 1.x"
	}
	e := fault.Wrap(fault.Transport, fault.CodeSolopiVersionUnsupported, msg, cause).
		WithUserAction(actionUpgradeSoloPi).With("package", pkg)
	if versionName != "" {
		e.With("versionName", versionName)
	}
	return e
}

// OpenSession checks that SoloPi is installed, makes sure its control
// service answers (launching the app only when it does not), and checks the
// protocol versions.
func OpenSession(ctx context.Context, t Transport, opts SessionOptions) (*Session, error) {
	opts.defaults()
	pkg := opts.Device.Package
	installed, err := IsInstalled(ctx, t, pkg)
	if err != nil {
		return nil, err
	}
	if !installed {
		return nil, notInstalledError(pkg)
	}
	return OpenInstalled(ctx, t, opts)
}

// openInstalled is OpenSession after the install check.
func OpenInstalled(ctx context.Context, t Transport, opts SessionOptions) (_ *Session, err error) {
	opts.defaults()
	pkg := opts.Device.Package
	s := &Session{Device: NewDevice(t, opts.Device), opts: opts}
	defer func() {
		if err != nil {
			// Release the HTTP streams of a session nobody will close.
			s.Close()
		}
	}()
	caps, probeErr := s.probe(ctx, opts.Device.RequestTimeout)
	if probeErr == nil {
		// The service already answers: do not launch SoloPi, which would
		// steal the foreground from the app under test on every call.
		if err := s.accept(caps); err != nil {
			return nil, err
		}
		return s, nil
	}
	if fault.IsInterrupt(probeErr) {
		return nil, probeErr
	}
	if isNoListener(probeErr) {
		// An HTTP server without a harness resolver is either SoloPi 0.x or
		// a 1.x still building its resolvers; the version tells which.
		v, err := installedVersion(ctx, t, pkg)
		if err != nil {
			return nil, err
		}
		if classicVersion(v) {
			return nil, versionUnsupported(pkg, v, probeErr)
		}
	}
	if err := s.launch(ctx); err != nil {
		return nil, err
	}
	caps, err = s.waitReady(ctx)
	if restoreErr := s.restore(ctx); err == nil && restoreErr != nil {
		err = restoreErr
	}
	if err != nil {
		return nil, err
	}
	if err := s.accept(caps); err != nil {
		return nil, err
	}
	return s, nil
}

// probe runs one capabilities query bounded by d; it succeeds only when
// the answer has success:true.
func (s *Session) probe(ctx context.Context, d time.Duration) (capabilities, error) {
	qctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var c capabilities
	b, err := s.Device.QueryRaw(qctx, protocol.ActionHarness, P(protocol.ParamType, protocol.HarnessCapabilities))
	if err != nil {
		if ctx.Err() != nil {
			return c, Interrupted(ctx)
		}
		return c, err
	}
	// Only the fields bootstrap reads are decoded here; the whole object is
	// kept as it came for the capabilities command.
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fault.Wrap(fault.Transport, fault.CodeInvalidDeviceResponse, "the capabilities answer is not a JSON object", err)
	}
	c.raw = b
	if ok, _ := c.Success.(bool); !ok {
		return c, fault.New(fault.Transport, fault.CodeControlServiceNotReady, "the SoloPi control service answered capabilities without success").
			With("response", SanitizedDeviceError(WireObject{"success": c.Success, "errorCode": c.ErrorCode, "error": c.Error}))
	}
	return c, nil
}

// capabilities is what bootstrap reads of harness?type=capabilities.
type capabilities struct {
	Success              any `json:"success"`
	ErrorCode            any `json:"errorCode"`
	Error                any `json:"error"`
	ProtocolVersion      any `json:"protocolVersion"`
	AgentProtocolVersion any `json:"agentProtocolVersion"`
	raw                  []byte
}

// sanitizedDeviceError keeps only the diagnostic fields of a device answer.
func SanitizedDeviceError(r WireObject) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"success", "errorCode", "error"} {
		if v, ok := r[k]; ok && v != nil {
			m[k] = v
		}
	}
	return m
}

func (s *Session) launch(ctx context.Context) error {
	t := s.Device.Transport()
	if s.opts.PreserveForeground {
		fg, err := s.Device.Foreground(ctx)
		if err != nil {
			return err
		}
		s.Foreground = fg
	}
	s.opts.Device.Progress.Reportf("bootstrap", "starting SoloPi on %s", t.Serial())
	stdout, stderr, code, err := t.Shell(ctx, ShellJoin("monkey", "-p", s.Device.Package(), "-c", "android.intent.category.LAUNCHER", "1"))
	if err != nil {
		if ie := CtxErr(ctx, err); ie != nil {
			return ie
		}
		return fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while launching SoloPi", err)
	}
	out := string(stdout) + string(stderr)
	if code != 0 || strings.Contains(out, "No activities found") {
		return fault.Newf(fault.Transport, fault.CodeSolopiLaunchFailed, "launching SoloPi failed: %s", FirstLine(out)).
			With("exitCode", code).With("stderr", Truncate(strings.TrimSpace(string(stderr)), 2000)).
			With("stdout", Truncate(strings.TrimSpace(string(stdout)), 2000)).WithUserAction(ActionOpenSoloPi)
	}
	s.Launched = true
	return nil
}

// waitReady polls capabilities until success or the startup timeout.
func (s *Session) waitReady(ctx context.Context) (capabilities, error) {
	clk := s.Device.Clock()
	deadline := clk.Now().Add(s.opts.StartupTimeout)
	var last error
	var caps capabilities
	err := PollUntil(ctx, PollOptions{Timeout: s.opts.StartupTimeout, Interval: s.opts.PollInterval, Initial: s.opts.PollInterval, Clock: clk},
		func(ctx context.Context) (bool, error) {
			remaining := deadline.Sub(clk.Now())
			if remaining <= 0 {
				return false, nil
			}
			r, err := s.probe(ctx, min(remaining, s.opts.Device.RequestTimeout))
			if err == nil {
				caps = r
				return true, nil
			}
			if fault.IsInterrupt(err) {
				return false, err
			}
			last = err
			return false, nil
		})
	if err == nil {
		return caps, nil
	}
	if !errors.Is(err, ErrPollTimeout) {
		return capabilities{}, err
	}
	if isNoListener(last) {
		// The HTTP server answered all along but never with a harness
		// resolver: that is SoloPi 0.x whatever its version string says.
		return capabilities{}, versionUnsupported(s.Device.Package(), "", last)
	}
	e := fault.Wrap(fault.Transport, fault.CodeControlServiceNotReady, "the SoloPi control service was not ready within --startup-timeout", last).
		WithUserAction(ActionOpenSoloPi).With("startupTimeoutSeconds", s.opts.StartupTimeout.Seconds())
	if last != nil {
		WithLastError(e, last)
	}
	return capabilities{}, e
}

func (s *Session) restore(ctx context.Context) error {
	fg := s.Foreground
	if fg == "" || strings.HasPrefix(fg, s.Device.Package()+"/") {
		// Nothing recorded, or SoloPi itself was in front: restoring one of
		// its non-exported activities would fail and change nothing.
		return nil
	}
	if err := s.Device.RestoreForeground(ctx, fg); err != nil {
		return err
	}
	s.Restored = true
	return nil
}

// accept checks the protocol versions of a successful capabilities answer.
func (s *Session) accept(caps capabilities) error {
	hv, _ := caps.ProtocolVersion.(string)
	av, _ := caps.AgentProtocolVersion.(string)
	if hv != protocol.HarnessProtocolVersion || av != protocol.AgentProtocolVersion {
		return fault.Newf(fault.Transport, fault.CodeProtocolVersionMismatch,
			"SoloPi speaks harness protocol %q and agent protocol %q; this CLI needs harness %s and agent %s",
			hv, av, protocol.HarnessProtocolVersion, protocol.AgentProtocolVersion).
			With("protocolVersion", hv).With("agentProtocolVersion", av).
			With("expectedProtocolVersion", protocol.HarnessProtocolVersion).
			With("expectedAgentProtocolVersion", protocol.AgentProtocolVersion).
			WithUserAction(actionMatchVersions)
	}
	s.Capabilities = caps.raw
	return nil
}

// isNoListener reports the text/html "No Valid Listener" answer: an HTTP
// server is there but nothing handles the harness action.
func isNoListener(err error) bool {
	var e *fault.Error
	return errors.As(err, &e) && e.Code == fault.CodeControlServiceNotReady && e.Details["action"] == protocol.ActionHarness
}

// interrupted is the error of a cancelled context (SIGINT/SIGTERM).
func Interrupted(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.Wrap(fault.Timeout, fault.CodeTimeout, "the command timed out", ctx.Err())
	}
	return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the command was interrupted", context.Canceled)
}

// WithLastError attaches the last error of a wait: lastError as solopi-ai
// prints it (the error's text, a string) and lastErrorDetail, ours, with
// its errorCode, message and cause.
func WithLastError(e *fault.Error, err error) *fault.Error {
	d := errorSummary(err)
	text, _ := d["error"].(string)
	if c, ok := d["cause"].(string); ok && c != "" {
		text += ": " + c
	}
	return e.With("lastError", text).With("lastErrorDetail", d)
}

// errorSummary renders an error for a lastError detail without raw causes.
func errorSummary(err error) map[string]any {
	var e *fault.Error
	if errors.As(err, &e) {
		m := map[string]any{"errorCode": e.Code, "error": e.Message}
		if e.Err != nil {
			m["cause"] = e.Err.Error()
		}
		return m
	}
	return map[string]any{"error": err.Error()}
}

// Pause sleeps d on clk or until ctx is done (then the interrupt error).
func Pause(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if clock.Or(clk).Sleep(ctx, d) != nil {
		return Interrupted(ctx)
	}
	return nil
}
