// Package adbdevice is the planner's plain adb device: screencap for
// observations, input tap, swipe and key events for gestures, and the ADB
// Keyboard's broadcast for text, all over a device.Transport. It has no
// app launch, no package discovery and never reads window state, so the
// pure-vision contract holds on any phone adb reaches.
package adbdevice

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/textclip"
	"github.com/solopi-dev/solopi/solopi/device"
)

// IME is the ADB Keyboard input method: its ADB_INPUT_B64 broadcast types
// any Unicode text, which `input text` cannot.
const IME = "com.android.adbkeyboard/.AdbIME"

// keyboardInstall says how to install the ADB Keyboard.
const keyboardInstall = "Install the ADB Keyboard on the phone: download ADBKeyboard.apk from " +
	"https://github.com/senzhk/ADBKeyBoard/releases, run `adb install ADBKeyboard.apk`, then run agent-run again " +
	"(it enables and selects the keyboard only while it types, and restores your input method afterwards)."

// Gesture timings of the adb device (a Long Press holds
// agentloop.LongPressDuration).
const (
	doubleTapGap     = 60 * time.Millisecond
	minSwipeDuration = 250 * time.Millisecond
	maxSwipeDuration = 1000 * time.Millisecond
)

// Device is plain adb input as an agentloop.Device.
type Device struct {
	t   device.Transport
	clk clock.Clock

	mu sync.Mutex
	// prevIME is the input method found before the first Type switched to
	// the ADB Keyboard; it is restored once, when the task ends. enabled
	// says the switch also enabled the ADB Keyboard, which is then
	// disabled again.
	prevIME  string
	switched bool
	enabled  bool
}

// New returns the adb device over t.
func New(t device.Transport) *Device {
	return &Device{t: t, clk: clock.System}
}

// CheckKeyboard verifies that the ADB Keyboard is installed, before the
// first Type can need it. It only lists the input methods (`ime list -a
// -s`): nothing on the phone changes.
func (d *Device) CheckKeyboard(ctx context.Context) error {
	out, err := d.shell(ctx, "ime", "list", "-a", "-s")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fault.Wrap(fault.Transport, fault.CodeAdbKeyboardUnavailable, "cannot list the phone's input methods", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == IME {
			return nil
		}
	}
	return fault.New(fault.Failed, fault.CodeAdbKeyboardMissing, "the ADB Keyboard ("+IME+") is not installed; adb mode types text through it").
		WithUserAction(keyboardInstall)
}

// Mode is "adb".
func (d *Device) Mode() string { return agentloop.ModeADB }

// Supports: every device action of the protocol has an input equivalent.
func (d *Device) Supports(name string) (bool, string) {
	switch name {
	case action.Tap, action.DoubleTap, action.LongPress, action.Swipe, action.Type, action.Back, action.Home, action.Wait:
		return true, ""
	}
	return false, name + " is not a device action"
}

// Observe runs `screencap -p` over the binary-safe exec channel (no
// temporary file on the device, so two agents never race for it).
func (d *Device) Observe(ctx context.Context) (*agentloop.Screen, error) {
	b, err := d.t.Exec(ctx, "screencap -p")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "screencap -p failed", Err: err}
	}
	s, err := agentloop.NewScreen(b, d.clk.Now())
	if err != nil {
		return nil, &agentloop.DeviceError{Code: fault.CodeScreenshotFailed, Message: "screencap -p did not return a usable PNG", Err: err}
	}
	return s, nil
}

// shell runs one command and fails on a non-zero exit or an exception
// printed by the Android tool (am and ime report some failures on stdout
// with exit 0).
func (d *Device) shell(ctx context.Context, args ...string) (string, error) {
	cmd := device.ShellJoin(args...)
	out, errOut, code, err := d.t.Shell(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("%s: %w", args[0], err)
	}
	text := strings.TrimSpace(string(out))
	if code != 0 || strings.Contains(text, "Exception") || strings.Contains(string(errOut), "Exception") {
		msg := strings.TrimSpace(string(errOut))
		if msg == "" {
			msg = text
		}
		return text, fmt.Errorf("%s exited %d: %s", strings.Join(args[:min(2, len(args))], " "), code, textclip.Runes(msg, 200))
	}
	return text, nil
}

func itoa(v int) string { return strconv.Itoa(v) }

// Dispatch performs one command with input-equivalent adb commands.
func (d *Device) Dispatch(ctx context.Context, cmd agentloop.Command, _ *agentloop.Screen) (agentloop.DispatchResult, error) {
	fail := func(dispatched bool, err error) (agentloop.DispatchResult, error) {
		if ctx.Err() != nil {
			return agentloop.DispatchResult{Dispatched: dispatched}, ctx.Err()
		}
		return agentloop.DispatchResult{Dispatched: dispatched}, &agentloop.DeviceError{Code: fault.CodeInputFailed, Message: cmd.Action + " failed", Dispatched: dispatched, Err: err}
	}
	detail := map[string]any{}
	switch cmd.Action {
	case action.Tap:
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		if _, err := d.shell(ctx, "input", "tap", itoa(x), itoa(y)); err != nil {
			return fail(false, err)
		}
		detail["commands"] = []string{fmt.Sprintf("input tap %d %d", x, y)}
	case action.DoubleTap:
		// Two taps close together; each is its own command because the
		// device shell may not chain commands.
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		if _, err := d.shell(ctx, "input", "tap", itoa(x), itoa(y)); err != nil {
			return fail(false, err)
		}
		if err := d.clk.Sleep(ctx, doubleTapGap); err != nil {
			return fail(true, err)
		}
		if _, err := d.shell(ctx, "input", "tap", itoa(x), itoa(y)); err != nil {
			return fail(true, err)
		}
		detail["commands"] = []string{fmt.Sprintf("input tap %d %d", x, y), fmt.Sprintf("input tap %d %d", x, y)}
	case action.LongPress:
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		ms := itoa(int(agentloop.LongPressDuration.Milliseconds()))
		if _, err := d.shell(ctx, "input", "swipe", itoa(x), itoa(y), itoa(x), itoa(y), ms); err != nil {
			return fail(false, err)
		}
		detail["commands"] = []string{fmt.Sprintf("input swipe %d %d %d %d %s", x, y, x, y, ms)}
	case action.Swipe:
		x1, y1, x2, y2 := cmd.Start.Device[0], cmd.Start.Device[1], cmd.End.Device[0], cmd.End.Device[1]
		dur := swipeDuration(x1, y1, x2, y2)
		ms := itoa(int(dur.Milliseconds()))
		if _, err := d.shell(ctx, "input", "swipe", itoa(x1), itoa(y1), itoa(x2), itoa(y2), ms); err != nil {
			return fail(false, err)
		}
		detail["commands"] = []string{fmt.Sprintf("input swipe %d %d %d %d %s", x1, y1, x2, y2, ms)}
	case action.Back, action.Home:
		key := map[string]string{action.Back: "4", action.Home: "3"}[cmd.Action]
		if _, err := d.shell(ctx, "input", "keyevent", key); err != nil {
			return fail(false, err)
		}
		detail["commands"] = []string{"input keyevent " + key}
	case action.Type:
		cmds, err := d.typeText(ctx, cmd.Text)
		if err != nil {
			var de *agentloop.DeviceError
			if asDeviceError(err, &de) {
				return agentloop.DispatchResult{Dispatched: de.Dispatched}, err
			}
			return fail(false, err)
		}
		detail["commands"] = cmds
	case action.Wait:
		if err := d.clk.Sleep(ctx, cmd.Duration); err != nil {
			return fail(false, err)
		}
		detail["waited_ms"] = cmd.Duration.Milliseconds()
		return agentloop.DispatchResult{Dispatched: true, Detail: detail}, nil
	default:
		return agentloop.DispatchResult{}, &agentloop.NotMappableError{Code: fault.CodeUnsupportedAction, Note: cmd.Action + " is not a device action"}
	}
	return agentloop.DispatchResult{Dispatched: true, Detail: detail}, nil
}

// swipeDuration scales with the distance (0.45 ms per pixel) within
// 250..1000 ms: a drag, not a fling, yet not the 1–2 s crawl that makes
// long lists slow.
func swipeDuration(x1, y1, x2, y2 int) time.Duration {
	dist := math.Hypot(float64(x2-x1), float64(y2-y1))
	d := time.Duration(dist*0.45) * time.Millisecond
	return min(max(d, minSwipeDuration), maxSwipeDuration)
}

// typeText switches to the ADB Keyboard once per task (remembering the
// previous input method) and sends the text base64-encoded, so non-ASCII
// text arrives intact. The text is appended to the focused field; the
// field is not cleared first.
func (d *Device) typeText(ctx context.Context, text string) ([]string, error) {
	var cmds []string
	d.mu.Lock()
	switched := d.switched
	d.mu.Unlock()
	if !switched {
		cur, err := d.shell(ctx, "settings", "get", "secure", "default_input_method")
		if err != nil {
			return nil, &agentloop.DeviceError{Code: fault.CodeAdbKeyboardUnavailable, Message: "cannot read the current input method", Err: err}
		}
		cmds = append(cmds, "settings get secure default_input_method")
		enabled := false
		if cur != IME {
			// An installed keyboard is not selectable until enabled;
			// enabling an enabled one says so and changes nothing.
			out, err := d.shell(ctx, "ime", "enable", IME)
			if err != nil {
				return cmds, &agentloop.DeviceError{Code: fault.CodeAdbKeyboardUnavailable, Message: "the ADB Keyboard (" + IME + ") is not installed", Err: err}
			}
			enabled = strings.Contains(out, "now enabled")
			cmds = append(cmds, "ime enable "+IME)
			if _, err := d.shell(ctx, "ime", "set", IME); err != nil {
				return cmds, &agentloop.DeviceError{Code: fault.CodeAdbKeyboardUnavailable, Message: "the ADB Keyboard (" + IME + ") cannot be selected", Err: err}
			}
			cmds = append(cmds, "ime set "+IME)
		}
		d.mu.Lock()
		d.prevIME, d.switched, d.enabled = cur, true, enabled
		d.mu.Unlock()
	}
	msg := base64.StdEncoding.EncodeToString([]byte(text))
	if _, err := d.shell(ctx, "am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", msg); err != nil {
		return cmds, &agentloop.DeviceError{Code: fault.CodeInputFailed, Message: "the ADB Keyboard broadcast failed", Err: err}
	}
	return append(cmds, "am broadcast -a ADB_INPUT_B64 --es msg <base64>"), nil
}

// Close restores the input method found before the first Type. It runs
// with the caller's context; callers use a fresh bounded context after an
// interrupt so the phone is not left on the ADB Keyboard.
func (d *Device) Close(ctx context.Context) error {
	d.mu.Lock()
	prev, switched, enabled := d.prevIME, d.switched, d.enabled
	d.switched, d.enabled = false, false
	d.mu.Unlock()
	if !switched || prev == "" || prev == "null" || prev == IME {
		return nil
	}
	if _, err := d.shell(ctx, "ime", "set", prev); err != nil {
		return &agentloop.DeviceError{Code: fault.CodeAdbKeyboardUnavailable, Message: "cannot restore the previous input method " + prev, Err: err}
	}
	if enabled {
		if _, err := d.shell(ctx, "ime", "disable", IME); err != nil {
			return &agentloop.DeviceError{Code: fault.CodeAdbKeyboardUnavailable, Message: "cannot disable the ADB Keyboard again", Err: err}
		}
	}
	return nil
}

func asDeviceError(err error, target **agentloop.DeviceError) bool {
	de, ok := err.(*agentloop.DeviceError)
	if ok {
		*target = de
	}
	return ok
}
