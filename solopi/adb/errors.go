package adb

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/solopi-dev/solopi/adbwire"
)

// Sentinel kinds. Every error this package returns about device selection or
// reachability is an *Error whose Kind is one of these, so callers test with
// errors.Is(err, adb.ErrOffline) and read details with errors.As(err, &e).
// The sentinels' own texts are short; *Error.Error() adds what to do about it.
var (
	// ErrNoDevice: no device in state "device" (none attached, or only
	// offline/unauthorized ones when several are listed).
	ErrNoDevice = errors.New("no device")
	// ErrMultipleDevices: no serial given and more than one device is ready;
	// *Error.Devices lists them.
	ErrMultipleDevices = errors.New("more than one device")
	// ErrUnauthorized: the device has not accepted this host's adb key.
	ErrUnauthorized = errors.New("device unauthorized")
	// ErrOffline: the server knows the device but cannot talk to it.
	ErrOffline = errors.New("device offline")
	// ErrNotReady: the device is listed in a state other than device,
	// offline or unauthorized (recovery, bootloader, sideload, no
	// permissions, ...).
	ErrNotReady = errors.New("device not ready")
	// ErrDeviceNotFound: a serial was given and the server does not know it.
	ErrDeviceNotFound = errors.New("device not found")
	// ErrDeviceGone: the device disappeared while a service was running
	// (the stream ended early or the server reported it missing).
	ErrDeviceGone = errors.New("device disconnected")
	// ErrServerUnreachable: nothing answers on the adb server port and the
	// server could not be started.
	ErrServerUnreachable = errors.New("adb server unreachable")
	// ErrAdbNotFound: the server had to be started and there is no adb
	// executable to start it with (none on PATH, or --adb names nothing).
	// It comes wrapped in an ErrServerUnreachable error.
	ErrAdbNotFound = errors.New("adb executable not found")
	// ErrServiceRefused: the device is there but refused the service, e.g.
	// tcp:PORT with nothing listening on that port (server FAIL "closed").
	errServiceRefused = errors.New("service refused by device")
	// ErrProtocol: the server or device sent bytes that break the protocol
	// (adbwire's own).
	errProtocol = adbwire.ErrProtocol
)

// Error describes a failure of device selection, reachability or a service.
// It matches its Kind and its cause with errors.Is.
type Error struct {
	Kind      error        // one of the Err* sentinels above
	Op        string       // what we were doing: "shell", "pull /sdcard/x", "select device"
	Serial    string       // device concerned, if any
	Addr      string       // adb server address, for ErrServerUnreachable
	Devices   []DeviceInfo // for ErrMultipleDevices / ErrNoDevice: what the server listed
	ServerMsg string       // the server's FAIL text, verbatim, when there was one
	Err       error        // underlying cause (I/O error, start-server failure)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("adb: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	switch e.Kind {
	case ErrNoDevice:
		if len(e.Devices) == 0 {
			b.WriteString("no device attached; connect one with USB debugging enabled, or `adb connect HOST:PORT` for a network device")
		} else {
			fmt.Fprintf(&b, "no device is ready (%s); authorize or reconnect it, or pick one with --serial", listDevices(e.Devices))
		}
	case ErrMultipleDevices:
		fmt.Fprintf(&b, "more than one device is ready (%s); choose one with --serial or ANDROID_SERIAL", listDevices(e.Devices))
	case ErrUnauthorized:
		fmt.Fprintf(&b, "device %s is unauthorized; unlock it and accept the \"Allow USB debugging\" prompt, then retry", quoteSerial(e.Serial))
	case ErrOffline:
		fmt.Fprintf(&b, "device %s is offline; reconnect the cable or run `adb reconnect` (network device: `adb disconnect` then `adb connect`)", quoteSerial(e.Serial))
	case ErrDeviceNotFound:
		fmt.Fprintf(&b, "device %s not found; check the serial with `adb devices -l` (network device: `adb connect %s` first)", quoteSerial(e.Serial), e.Serial)
	case ErrDeviceGone:
		fmt.Fprintf(&b, "device %s disconnected during the call; check the cable or network and retry", quoteSerial(e.Serial))
	case ErrServerUnreachable:
		fmt.Fprintf(&b, "no adb server answers at %s; start one with `adb start-server`, pass --adb PATH so it can be started, or set ANDROID_ADB_SERVER_PORT", e.Addr)
	case errServiceRefused:
		fmt.Fprintf(&b, "device %s refused the service (is anything listening there?)", quoteSerial(e.Serial))
	default:
		if e.Kind != nil {
			b.WriteString(e.Kind.Error())
		}
	}
	if e.ServerMsg != "" {
		fmt.Fprintf(&b, " [server: %q]", e.ServerMsg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause so errors.Is matches either
// (errors.Is(err, ErrDeviceGone), errors.Is(err, io.ErrUnexpectedEOF)).
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

func quoteSerial(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return "'" + s + "'"
}

func listDevices(ds []DeviceInfo) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Serial + " " + d.State
	}
	return strings.Join(parts, ", ")
}

// FailError is a server FAIL that does not map to a device-state kind, e.g.
// "unknown host service" or "cannot rebind existing socket".
type FailError struct {
	Service string // the request that failed
	Msg     string // the server's text
}

func (e *FailError) Error() string {
	return fmt.Sprintf("adb: server refused %q: %s", e.Service, e.Msg)
}

// connectError is a failed `host:connect` / `host:disconnect`. The server
// answers OKAY even then, with a text like "failed to connect to
// '127.0.0.1:5690': Connection refused", which is kept in Msg.
type connectError struct {
	Op   string // "connect" or "disconnect"
	Addr string
	Msg  string
}

func (e *connectError) Error() string {
	return fmt.Sprintf("adb: %s %s: %s; check the address and that the device listens for adb (adb tcpip 5555)", e.Op, e.Addr, e.Msg)
}

// syncError is a FAIL reply of the sync service (push, pull, list, stat), with
// the device's message, e.g. "couldn't create file: Permission denied".
type syncError struct {
	Op   string // "push", "pull", "list", "stat"
	Path string // remote path
	Msg  string
}

func (e *syncError) Error() string {
	return fmt.Sprintf("adb: %s %s: device says: %s", e.Op, e.Path, e.Msg)
}

// Is lets a device-side "No such file or directory" match fs.ErrNotExist and
// "Permission denied" match fs.ErrPermission, so callers need not parse text.
func (e *syncError) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return strings.Contains(e.Msg, "No such file or directory")
	case fs.ErrPermission:
		return strings.Contains(e.Msg, "Permission denied") || strings.Contains(e.Msg, "Operation not permitted")
	}
	return false
}

// remoteErrno is an errno reported by the device (STA2/LST2). Android uses
// Linux numbering whatever the host OS is, so syscall.Errno would be wrong on
// macOS or Windows hosts; we name the common ones ourselves.
type remoteErrno uint32

func (e remoteErrno) Error() string {
	switch e {
	case 1:
		return "operation not permitted"
	case 2:
		return "no such file or directory"
	case 5:
		return "input/output error"
	case 13:
		return "permission denied"
	case 20:
		return "not a directory"
	case 36:
		return "file name too long"
	case 40:
		return "too many levels of symbolic links"
	}
	return fmt.Sprintf("device errno %d", uint32(e))
}

func (e remoteErrno) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e == 2
	case fs.ErrPermission:
		return e == 1 || e == 13
	}
	return false
}

// classifyFail maps a server FAIL text to a typed error. op and serial give
// context; service is the request that failed (for FailError).
func classifyFail(op, serial, service, msg string) error {
	switch {
	case msg == "device offline":
		return &Error{Kind: ErrOffline, Op: op, Serial: serial, ServerMsg: msg}
	case strings.HasPrefix(msg, "device unauthorized"):
		return &Error{Kind: ErrUnauthorized, Op: op, Serial: serial, ServerMsg: msg}
	case strings.HasPrefix(msg, "device '") && strings.HasSuffix(msg, "' not found"):
		s := strings.TrimSuffix(strings.TrimPrefix(msg, "device '"), "' not found")
		if serial == "" {
			serial = s
		}
		return &Error{Kind: ErrDeviceNotFound, Op: op, Serial: serial, ServerMsg: msg}
	case msg == "no devices/emulators found" || msg == "no devices found" || msg == "no emulators found":
		return &Error{Kind: ErrNoDevice, Op: op, ServerMsg: msg}
	case strings.HasPrefix(msg, "more than one"):
		return &Error{Kind: ErrMultipleDevices, Op: op, ServerMsg: msg}
	}
	return &FailError{Service: service, Msg: msg}
}
