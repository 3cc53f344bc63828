package adbdevice

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
)

// shellTransport is a device.Transport that records shell commands and
// answers the few the adb device sends.
type shellTransport struct {
	mu        sync.Mutex
	cmds      []string
	ime       string
	noAdbKB   bool
	kbEnabled bool
	png       []byte
}

func (s *shellTransport) Serial() string { return "fake-adb" }
func (s *shellTransport) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds = append(s.cmds, cmd)
	switch {
	case cmd == "settings get secure default_input_method":
		return []byte(s.ime + "\n"), nil, 0, nil
	case cmd == "ime list -a -s":
		if s.noAdbKB {
			return []byte("com.android.inputmethod.latin/.LatinIME\n"), nil, 0, nil
		}
		return []byte(IME + "\ncom.android.inputmethod.latin/.LatinIME\n"), nil, 0, nil
	case cmd == "ime enable "+IME || cmd == "ime disable "+IME:
		if s.noAdbKB {
			return nil, []byte("Unknown input method " + IME + " cannot be enabled for user #0\n"), 255, nil
		}
		verb := strings.Fields(cmd)[1] + "d"
		was := s.kbEnabled
		s.kbEnabled = verb == "enabled"
		if was == s.kbEnabled {
			return []byte("Input method " + IME + ": already " + verb + " for user #0\n"), nil, 0, nil
		}
		return []byte("Input method " + IME + ": now " + verb + " for user #0\n"), nil, 0, nil
	case strings.HasPrefix(cmd, "ime set "):
		id := strings.TrimPrefix(cmd, "ime set ")
		if id == IME && s.noAdbKB {
			return nil, []byte("Unknown input method com.android.adbkeyboard/.AdbIME cannot be selected for user #0\n"), 255, nil
		}
		s.ime = id
		return []byte("Input method " + id + " selected for user #0\n"), nil, 0, nil
	}
	return nil, nil, 0, nil
}
func (s *shellTransport) Exec(ctx context.Context, cmd string) ([]byte, error) {
	if cmd != "screencap -p" {
		return nil, errors.New("unexpected exec " + cmd)
	}
	return s.png, nil
}
func (s *shellTransport) DialTCP(context.Context, int) (net.Conn, error) {
	return nil, errors.New("no tcp")
}
func (s *shellTransport) Push(context.Context, io.Reader, string, fs.FileMode, time.Time) error {
	return errors.New("no push")
}
func (s *shellTransport) Pull(context.Context, string, io.Writer) error { return errors.New("no pull") }
func (s *shellTransport) Stat(context.Context, string) (fs.FileInfo, error) {
	return nil, fs.ErrNotExist
}
func (s *shellTransport) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cmds...)
}

func mp(x, y int) *coord.MappedPoint { return &coord.MappedPoint{Device: [2]int{x, y}} }

func TestADBDeviceCommands(t *testing.T) {
	t.Parallel()
	scr, _ := agentloop.ScreenFromImage(fakemodel.CounterScreen("0"), time.Now())
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", png: scr.PNG}
	d := New(tr)
	ctx := context.Background()
	s, err := d.Observe(ctx)
	if err != nil || s.Width() != 1080 || s.Height() != 2340 {
		t.Fatalf("observe %v %v", s, err)
	}
	steps := []agentloop.Command{
		{Action: action.Tap, Point: mp(747, 1702)},
		{Action: action.DoubleTap, Point: mp(10, 20)},
		{Action: action.LongPress, Point: mp(30, 40)},
		{Action: action.Swipe, Start: mp(500, 1500), End: mp(500, 500)},
		{Action: action.Back},
		{Action: action.Home},
		{Action: action.Type, Text: "重新设计nas外壳"},
		{Action: action.Type, Text: "second"},
		{Action: action.Wait, Duration: 100 * time.Millisecond},
	}
	for _, c := range steps {
		r, err := d.Dispatch(ctx, c, s)
		if err != nil || !r.Dispatched {
			t.Fatalf("%s: %v %+v", c.Action, err, r)
		}
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("重新设计nas外壳"))
	want := []string{
		"input tap 747 1702",
		"input tap 10 20", "input tap 10 20",
		"input swipe 30 40 30 40 800",
		"input swipe 500 1500 500 500 450",
		"input keyevent 4",
		"input keyevent 3",
		"settings get secure default_input_method",
		"ime enable com.android.adbkeyboard/.AdbIME",
		"ime set com.android.adbkeyboard/.AdbIME",
		"am broadcast -a ADB_INPUT_B64 --es msg " + b64,
		"am broadcast -a ADB_INPUT_B64 --es msg " + base64.StdEncoding.EncodeToString([]byte("second")),
		"ime set com.android.inputmethod.latin/.LatinIME",
		"ime disable com.android.adbkeyboard/.AdbIME",
	}
	got := tr.commands()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tr.ime != "com.android.inputmethod.latin/.LatinIME" || tr.kbEnabled {
		t.Errorf("input method left at %s, ADB Keyboard enabled %v", tr.ime, tr.kbEnabled)
	}
}

// TestADBDeviceCheckKeyboard: the preflight finds a missing ADB Keyboard
// by listing input methods only, and says how to install it.
func TestADBDeviceCheckKeyboard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME"}
	if err := New(tr).CheckKeyboard(ctx); err != nil {
		t.Fatal(err)
	}
	tr = &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", noAdbKB: true}
	err := New(tr).CheckKeyboard(ctx)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != CodeKeyboardMissing || fe.Kind != fault.Failed || !strings.Contains(fe.UserAction, "adb install") {
		t.Fatalf("err %v", err)
	}
	if got := tr.commands(); len(got) != 1 || got[0] != "ime list -a -s" {
		t.Fatalf("the check ran %v; it must only list input methods", got)
	}
}

func TestADBDeviceMissingKeyboard(t *testing.T) {
	t.Parallel()
	tr := &shellTransport{ime: "com.android.inputmethod.latin/.LatinIME", noAdbKB: true}
	d := New(tr)
	_, err := d.Dispatch(context.Background(), agentloop.Command{Action: action.Type, Text: "x"}, nil)
	var de *agentloop.DeviceError
	if !errors.As(err, &de) || de.Code != CodeIMEUnavailable {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range tr.commands() {
		if strings.HasPrefix(c, "am broadcast") {
			t.Fatal("text was broadcast without the ADB keyboard")
		}
	}
}

func TestADBDeviceRejectsNonPNG(t *testing.T) {
	t.Parallel()
	d := New(&shellTransport{png: []byte("not a png")})
	if _, err := d.Observe(context.Background()); err == nil {
		t.Fatal("accepted a non-PNG screenshot")
	}
}
