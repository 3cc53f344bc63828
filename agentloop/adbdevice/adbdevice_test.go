package adbdevice

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/appspec"
)

// simPhone starts a simulated phone (its shell answers input, ime,
// settings and am as Android does; ADB Keyboard is installed unless
// withoutAdbKeyboard) and returns it with the commands it ran from now on.
func simPhone(t *testing.T, withoutAdbKeyboard bool) *sim.Device {
	t.Helper()
	o := sim.Options{Serial: "sim-adbdevice", TimeScale: 100}
	if withoutAdbKeyboard {
		for _, a := range appspec.DefaultApps() {
			if a.Package != "com.android.adbkeyboard" {
				o.Phone.Apps = append(o.Phone.Apps, a)
			}
		}
	}
	d := sim.New(o)
	t.Cleanup(func() { d.Close() })
	return d
}

// shellOut runs a command on the phone and returns its trimmed stdout.
func shellOut(t *testing.T, d *sim.Device, cmd string) string {
	t.Helper()
	out, _, _, err := d.Shell(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func mp(x, y int) *coord.MappedPoint { return &coord.MappedPoint{Device: [2]int{x, y}} }

func TestADBDeviceCommands(t *testing.T) {
	t.Parallel()
	tr := simPhone(t, false)
	imeBefore := shellOut(t, tr, "settings get secure default_input_method")
	n := len(tr.Commands())
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
	var got []string
	for _, c := range tr.Commands()[n:] {
		if c != "screencap -p" { // the observation
			got = append(got, c)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ime := shellOut(t, tr, "settings get secure default_input_method"); ime != imeBefore || strings.Contains(shellOut(t, tr, "ime list -s"), IME) {
		t.Errorf("input method left at %s (was %s), ADB Keyboard still enabled", ime, imeBefore)
	}
}

// TestADBDeviceCheckKeyboard: the preflight finds a missing ADB Keyboard
// by listing input methods only, and says how to install it.
func TestADBDeviceCheckKeyboard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if err := New(simPhone(t, false)).CheckKeyboard(ctx); err != nil {
		t.Fatal(err)
	}
	tr := simPhone(t, true)
	err := New(tr).CheckKeyboard(ctx)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeAdbKeyboardMissing || fe.Kind != fault.Failed || !strings.Contains(fe.UserAction, "adb install") {
		t.Fatalf("err %v", err)
	}
	if got := tr.Commands(); len(got) != 1 || got[0] != "ime list -a -s" {
		t.Fatalf("the check ran %v; it must only list input methods", got)
	}
}

func TestADBDeviceMissingKeyboard(t *testing.T) {
	t.Parallel()
	tr := simPhone(t, true)
	d := New(tr)
	_, err := d.Dispatch(context.Background(), agentloop.Command{Action: action.Type, Text: "x"}, nil)
	var de *agentloop.DeviceError
	if !errors.As(err, &de) || de.Code != fault.CodeAdbKeyboardUnavailable {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range tr.Commands() {
		if strings.HasPrefix(c, "am broadcast") {
			t.Fatal("text was broadcast without the ADB keyboard")
		}
	}
}

func TestADBDeviceRejectsNonPNG(t *testing.T) {
	t.Parallel()
	tr := simPhone(t, false)
	// A screencap that prints something else (a vendor build's error).
	if err := tr.Phone.OverrideCommand("screencap", nil, android.CommandOutput{Stdout: "not a png"}); err != nil {
		t.Fatal(err)
	}
	d := New(tr)
	if _, err := d.Observe(context.Background()); err == nil {
		t.Fatal("accepted a non-PNG screenshot")
	}
}
