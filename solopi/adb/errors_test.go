package adb

import (
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
)

// Every error kind renders a message naming the problem and a next step.
func TestErrorMessages(t *testing.T) {
	t.Parallel()
	devs := []DeviceInfo{{Serial: "a", State: "device"}, {Serial: "b", State: "offline"}}
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{&Error{Kind: ErrNoDevice}, []string{"no device attached", "adb connect"}},
		{&Error{Kind: ErrNoDevice, Devices: devs[1:]}, []string{"b offline", "--serial"}},
		{&Error{Kind: ErrMultipleDevices, Devices: devs}, []string{"a device, b offline", "ANDROID_SERIAL"}},
		{&Error{Kind: ErrUnauthorized, Serial: "x"}, []string{"'x' is unauthorized", "Allow USB debugging"}},
		{&Error{Kind: ErrOffline, Serial: "x"}, []string{"'x' is offline", "adb reconnect"}},
		{&Error{Kind: ErrDeviceNotFound, Serial: "x"}, []string{"'x' not found", "adb devices -l", "adb connect x"}},
		{&Error{Kind: ErrDeviceGone, Op: "pull /a", Serial: "x", Err: io.ErrUnexpectedEOF}, []string{"pull /a", "disconnected", "unexpected EOF"}},
		{&Error{Kind: ErrServerUnreachable, Addr: "127.0.0.1:5037"}, []string{"127.0.0.1:5037", "adb start-server", "--adb"}},
		{&Error{Kind: errServiceRefused, Op: "dial tcp:1", Serial: "x", ServerMsg: "closed"}, []string{"dial tcp:1", "refused", `"closed"`}},
		{&Error{Kind: ErrNotReady, Serial: "x", ServerMsg: "state recovery"}, []string{"not ready", "recovery"}},
		{&FailError{Service: "host:bogus", Msg: "unknown host service"}, []string{"host:bogus", "unknown host service"}},
		{&connectError{Op: "connect", Addr: "h:1", Msg: "failed to connect"}, []string{"connect h:1", "failed to connect"}},
		{&syncError{Op: "push", Path: "/p", Msg: "couldn't create file: Read-only file system"}, []string{"push /p", "Read-only"}},
		{&fs.PathError{Op: "adb: stat", Path: "/p", Err: remoteErrno(13)}, []string{"permission denied"}},
		{remoteErrno(99), []string{"errno 99"}},
	} {
		msg := tc.err.Error()
		if !strings.HasPrefix(msg, "adb: ") && !strings.HasPrefix(msg, "device errno") {
			t.Errorf("%q lacks the adb: prefix", msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not mention %q", msg, w)
			}
		}
	}
	if !errors.Is(&fs.PathError{Err: remoteErrno(13)}, fs.ErrPermission) || !errors.Is(remoteErrno(2), fs.ErrNotExist) {
		t.Error("errno mapping")
	}
	// The device's errno uses Linux numbering on every host.
	for errno, text := range map[remoteErrno]string{1: "operation not permitted", 2: "no such file or directory", 5: "input/output error",
		13: "permission denied", 20: "not a directory", 36: "file name too long", 40: "too many levels of symbolic links"} {
		if errno.Error() != text {
			t.Errorf("errno %d reads %q, want %q", uint32(errno), errno.Error(), text)
		}
	}
	if errors.Is(remoteErrno(20), fs.ErrNotExist) || errors.Is(remoteErrno(2), fs.ErrPermission) || errors.Is(remoteErrno(2), io.EOF) {
		t.Error("an errno matched another error")
	}
	if e := classifyFail("op", "s", "req", "device 'zz' not found"); !errors.Is(e, ErrDeviceNotFound) {
		t.Errorf("classify not found: %v", e)
	}
	if e := classifyFail("op", "", "req", "more than one device/emulator"); !errors.Is(e, ErrMultipleDevices) {
		t.Errorf("classify more than one: %v", e)
	}
	if e := classifyFail("op", "", "req", "no devices/emulators found"); !errors.Is(e, ErrNoDevice) {
		t.Errorf("classify none: %v", e)
	}
}

// SEND carries a regular file or a symlink, 0644 when no permission is
// given.
func TestSendMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode fs.FileMode
		want uint32
	}{
		{0, 0o100644},
		{0o755, 0o100755},
		{fs.ModeDir | 0o700, 0o100700},
		{fs.ModeSymlink | 0o777, 0o120777},
		{fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | 0o700, 0o107700},
	} {
		if got := sendMode(tc.mode); got != tc.want {
			t.Errorf("sendMode(%v) = %o, want %o", tc.mode, got, tc.want)
		}
	}
}
