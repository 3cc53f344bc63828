package agentloop

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/textclip"
	"github.com/solopi-dev/solopi/solopi/device"
)

// AdbIME is the ADB Keyboard input method: its ADB_INPUT_B64 broadcast
// types any Unicode text, which `input text` cannot.
const AdbIME = "com.android.adbkeyboard/.AdbIME"

// Gesture timings of the adb device.
const (
	LongPressDuration = 800 * time.Millisecond
	doubleTapGap      = 60 * time.Millisecond
	minSwipeDuration  = 250 * time.Millisecond
	maxSwipeDuration  = 1000 * time.Millisecond
)

// ADBDevice is plain adb input: screencap, input tap/swipe, key events and
// ADB Keyboard text, all through a device.Transport. It has no app launch, no
// package discovery and never reads window state.
type ADBDevice struct {
	t   device.Transport
	now func() time.Time

	mu sync.Mutex
	// prevIME is the input method found before the first Type switched to
	// the ADB Keyboard; it is restored once, when the task ends. enabled
	// says the switch also enabled the ADB Keyboard, which is then
	// disabled again.
	prevIME  string
	switched bool
	enabled  bool
}

// CodeADBKeyboardMissing is the preflight's finding that the ADB Keyboard
// is not installed (Failed: exit 2, with how to install it).
const CodeADBKeyboardMissing = "adb_keyboard_missing"

// ADBKeyboardInstall says how to install the ADB Keyboard.
const ADBKeyboardInstall = "Install the ADB Keyboard on the phone: download ADBKeyboard.apk from " +
	"https://github.com/senzhk/ADBKeyBoard/releases, run `adb install ADBKeyboard.apk`, then run agent-run again " +
	"(it enables and selects the keyboard only while it types, and restores your input method afterwards)."

// CheckKeyboard verifies that the ADB Keyboard is installed, before the
// first Type can need it. It only lists the input methods (`ime list -a
// -s`): nothing on the phone changes.
func (d *ADBDevice) CheckKeyboard(ctx context.Context) error {
	out, err := d.shell(ctx, "ime", "list", "-a", "-s")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fault.Wrap(fault.Transport, CodeIMEUnavailable, "cannot list the phone's input methods", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == AdbIME {
			return nil
		}
	}
	return fault.New(fault.Failed, CodeADBKeyboardMissing, "the ADB Keyboard ("+AdbIME+") is not installed; adb mode types text through it").
		WithUserAction(ADBKeyboardInstall)
}

// NewADBDevice returns the adb device over t.
func NewADBDevice(t device.Transport) *ADBDevice {
	return &ADBDevice{t: t, now: time.Now}
}

// Mode is "adb".
func (d *ADBDevice) Mode() string { return ModeADB }

// Supports: every device action of the protocol has an input equivalent.
func (d *ADBDevice) Supports(name string) (bool, string) {
	switch name {
	case action.Tap, action.DoubleTap, action.LongPress, action.Swipe, action.Type, action.Back, action.Home, action.Wait:
		return true, ""
	}
	return false, name + " is not a device action"
}

// Observe runs `screencap -p` over the binary-safe exec channel (no
// temporary file on the device, so two agents never race for it).
func (d *ADBDevice) Observe(ctx context.Context) (*Screen, error) {
	b, err := d.t.Exec(ctx, "screencap -p")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "screencap -p failed", Err: err}
	}
	s, err := NewScreen(b, d.now())
	if err != nil {
		return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "screencap -p did not return a usable PNG", Err: err}
	}
	return s, nil
}

// shell runs one command and fails on a non-zero exit or an exception
// printed by the Android tool (am and ime report some failures on stdout
// with exit 0).
func (d *ADBDevice) shell(ctx context.Context, args ...string) (string, error) {
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
func (d *ADBDevice) Dispatch(ctx context.Context, cmd Command, _ *Screen) (DispatchResult, error) {
	fail := func(dispatched bool, err error) (DispatchResult, error) {
		if ctx.Err() != nil {
			return DispatchResult{Dispatched: dispatched}, ctx.Err()
		}
		return DispatchResult{Dispatched: dispatched}, &DeviceError{Code: CodeInputFailed, Message: cmd.Action + " failed", Dispatched: dispatched, Err: err}
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
		if err := sleepCtx(ctx, doubleTapGap); err != nil {
			return fail(true, err)
		}
		if _, err := d.shell(ctx, "input", "tap", itoa(x), itoa(y)); err != nil {
			return fail(true, err)
		}
		detail["commands"] = []string{fmt.Sprintf("input tap %d %d", x, y), fmt.Sprintf("input tap %d %d", x, y)}
	case action.LongPress:
		x, y := cmd.Point.Device[0], cmd.Point.Device[1]
		ms := itoa(int(LongPressDuration.Milliseconds()))
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
			var de *DeviceError
			if asDeviceError(err, &de) {
				return DispatchResult{Dispatched: de.Dispatched}, err
			}
			return fail(false, err)
		}
		detail["commands"] = cmds
	case action.Wait:
		if err := sleepCtx(ctx, cmd.Duration); err != nil {
			return fail(false, err)
		}
		detail["waited_ms"] = cmd.Duration.Milliseconds()
		return DispatchResult{Dispatched: true, Detail: detail}, nil
	default:
		return DispatchResult{}, &NotMappableError{Code: CodeUnsupported, Note: cmd.Action + " is not a device action"}
	}
	return DispatchResult{Dispatched: true, Detail: detail}, nil
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
func (d *ADBDevice) typeText(ctx context.Context, text string) ([]string, error) {
	var cmds []string
	d.mu.Lock()
	switched := d.switched
	d.mu.Unlock()
	if !switched {
		cur, err := d.shell(ctx, "settings", "get", "secure", "default_input_method")
		if err != nil {
			return nil, &DeviceError{Code: CodeIMEUnavailable, Message: "cannot read the current input method", Err: err}
		}
		cmds = append(cmds, "settings get secure default_input_method")
		enabled := false
		if cur != AdbIME {
			// An installed keyboard is not selectable until enabled;
			// enabling an enabled one says so and changes nothing.
			out, err := d.shell(ctx, "ime", "enable", AdbIME)
			if err != nil {
				return cmds, &DeviceError{Code: CodeIMEUnavailable, Message: "the ADB Keyboard (" + AdbIME + ") is not installed", Err: err}
			}
			enabled = strings.Contains(out, "now enabled")
			cmds = append(cmds, "ime enable "+AdbIME)
			if _, err := d.shell(ctx, "ime", "set", AdbIME); err != nil {
				return cmds, &DeviceError{Code: CodeIMEUnavailable, Message: "the ADB Keyboard (" + AdbIME + ") cannot be selected", Err: err}
			}
			cmds = append(cmds, "ime set "+AdbIME)
		}
		d.mu.Lock()
		d.prevIME, d.switched, d.enabled = cur, true, enabled
		d.mu.Unlock()
	}
	msg := base64.StdEncoding.EncodeToString([]byte(text))
	if _, err := d.shell(ctx, "am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", msg); err != nil {
		return cmds, &DeviceError{Code: CodeInputFailed, Message: "the ADB Keyboard broadcast failed", Err: err}
	}
	return append(cmds, "am broadcast -a ADB_INPUT_B64 --es msg <base64>"), nil
}

// Close restores the input method found before the first Type. It runs
// with the caller's context; callers use a fresh bounded context after an
// interrupt so the phone is not left on the ADB Keyboard.
func (d *ADBDevice) Close(ctx context.Context) error {
	d.mu.Lock()
	prev, switched, enabled := d.prevIME, d.switched, d.enabled
	d.switched, d.enabled = false, false
	d.mu.Unlock()
	if !switched || prev == "" || prev == "null" || prev == AdbIME {
		return nil
	}
	if _, err := d.shell(ctx, "ime", "set", prev); err != nil {
		return &DeviceError{Code: CodeIMEUnavailable, Message: "cannot restore the previous input method " + prev, Err: err}
	}
	if enabled {
		if _, err := d.shell(ctx, "ime", "disable", AdbIME); err != nil {
			return &DeviceError{Code: CodeIMEUnavailable, Message: "cannot disable the ADB Keyboard again", Err: err}
		}
	}
	return nil
}

func asDeviceError(err error, target **DeviceError) bool {
	de, ok := err.(*DeviceError)
	if ok {
		*target = de
	}
	return ok
}
