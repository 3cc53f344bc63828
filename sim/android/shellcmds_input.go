package android

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/sim/android/appspec"
)

func inputCommands() map[string]shellCmd {
	return map[string]shellCmd{"input": cmdInput, "ime": cmdIme, "settings": cmdSettings}
}

var inputSources = map[string]bool{"keyboard": true, "mouse": true, "touchscreen": true, "touchpad": true,
	"stylus": true, "dpad": true, "gamepad": true, "trackball": true, "joystick": true,
	"touchnavigation": true, "rotaryencoder": true, "gesture": true}

func inputUsage(sc *shellCtx, cmd string) int {
	if cmd != "" {
		sc.Errf("Error: Invalid arguments for command: %s\n", cmd)
	}
	sc.Errf("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default sources are:\n" +
		"      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n" +
		"      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n")
	return 1
}

func atois(ss []string) ([]int, bool) {
	out := make([]int, len(ss))
	for i, s := range ss {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false
		}
		out[i] = int(f)
	}
	return out, true
}

func cmdInput(sc *shellCtx, args []string) int {
	if len(args) > 0 && inputSources[args[0]] {
		args = args[1:]
	}
	if len(args) >= 2 && args[0] == "-d" {
		args = args[2:]
	}
	if len(args) == 0 {
		return inputUsage(sc, "")
	}
	p := sc.p
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "tap":
		v, ok := atois(rest)
		if !ok || len(v) != 2 {
			return inputUsage(sc, cmd)
		}
		// A point off screen is injected and simply hits nothing.
		if p.checkPoint(v[0], v[1]) == nil {
			_ = p.Tap(v[0], v[1])
		}
		return 0
	case "swipe", "draganddrop":
		v, ok := atois(rest)
		if !ok || len(v) < 4 || len(v) > 5 {
			return inputUsage(sc, cmd)
		}
		d := 300 * time.Millisecond
		if len(v) == 5 && v[4] >= 0 {
			d = time.Duration(v[4]) * time.Millisecond
		}
		if p.checkPoint(v[0], v[1]) != nil {
			return 0
		}
		if err := p.swipe(sc.Ctx, v[0], v[1], v[2], v[3], d); err != nil && sc.Ctx.Err() != nil {
			return 130
		}
		return 0
	case "press":
		_ = p.KeyEvent(keycodeDpadCenter)
		return 0
	case "keyevent":
		var codes []int
		for _, a := range rest {
			switch a {
			case "--longpress", "--doubletap", "--async":
				continue
			}
			code, err := strconv.Atoi(a)
			if err != nil {
				c, ok := keycodeNames[strings.TrimPrefix(strings.ToUpper(a), "KEYCODE_")]
				if !ok {
					sc.Errf("Error: Unknown keycode: %s\n", a)
					return 1
				}
				code = c
			}
			codes = append(codes, code)
		}
		if len(codes) == 0 {
			return inputUsage(sc, cmd)
		}
		for _, c := range codes {
			if err := p.KeyEvent(c); err != nil {
				sc.Errf("Error: Invalid key code: %d\n", c)
				return 1
			}
		}
		return 0
	case "text":
		if len(rest) == 0 {
			return inputUsage(sc, cmd)
		}
		// Only the first argument counts, %s means space, and the default key
		// character map cannot type non-ASCII runes (that is why pure-vision
		// runtimes switch to the ADB keyboard for such text).
		text := strings.ReplaceAll(rest[0], "%s", " ")
		var b strings.Builder
		for _, r := range text {
			if r >= 0x20 && r < 0x7f || r == '\n' || r == '\t' {
				b.WriteRune(r)
			}
		}
		if b.Len() != len(text) {
			p.Log('W', "Input", "skipped characters the virtual keyboard cannot type")
		}
		_ = p.InputText(b.String())
		return 0
	}
	sc.Errf("Error: Unknown command: %s\n", cmd)
	return inputUsage(sc, "")
}

func cmdIme(sc *shellCtx, args []string) int {
	if len(args) == 0 {
		sc.Errf("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset\n")
		return 1
	}
	p := sc.p
	switch args[0] {
	case "list":
		all, short := false, false
		for _, a := range args[1:] {
			all = all || a == "-a"
			short = short || a == "-s"
		}
		imes := p.IMEs()
		for _, id := range slices.Sorted(maps.Keys(imes)) {
			if !all && !imes[id] {
				continue
			}
			if short {
				sc.Outf("%s\n", id)
				continue
			}
			m, _ := imeByID(id)
			sc.Outf("%s:\n  mId=%s mSettingsActivityName=null\n  mIsDefaultResId=0x0\n  Service:\n    priority=0 preferredOrder=0 match=0x108000\n    ServiceInfo:\n      name=%s\n      packageName=%s\n",
				id, id, appspec.FullClass(m.pkg, strings.TrimPrefix(id, m.pkg+"/")), m.pkg)
		}
		return 0
	case "enable", "disable":
		if len(args) != 2 {
			sc.Errf("Error: no input method ID specified\n")
			return 1
		}
		id := normalizeIMEID(args[1])
		already, err := p.EnableIME(id, args[0] == "enable")
		if err != nil {
			sc.Errf("Unknown input method %s cannot be %sd for user #0\n", id, args[0])
			return 1
		}
		if already {
			sc.Outf("Input method %s: already %sd for user #0\n", id, args[0])
		} else {
			sc.Outf("Input method %s: now %sd for user #0\n", id, args[0])
		}
		return 0
	case "set":
		if len(args) != 2 {
			sc.Errf("Error: no input method ID specified\n")
			return 1
		}
		id := normalizeIMEID(args[1])
		if err := p.SetIME(id); err != nil {
			sc.Errf("Unknown input method %s cannot be selected for user #0\n", id)
			return 1
		}
		sc.Outf("Input method %s selected for user #0\n", id)
		return 0
	case "reset":
		for id, on := range p.IMEs() {
			if on && id != latinIME {
				_, _ = p.EnableIME(id, false)
			}
		}
		_ = p.SetIME(latinIME)
		sc.Outf("Reset current and enabled IMEs for user #0\n  Selected: %s\n", latinIME)
		return 0
	}
	sc.Errf("Unknown command: %s\n", args[0])
	return 1
}

// defaultSettings are values a stock device answers for common keys.
var defaultSettings = map[string]string{
	"system/screen_off_timeout":             "600000",
	"system/accelerometer_rotation":         "0",
	"global/adb_enabled":                    "1",
	"global/development_settings_enabled":   "1",
	"global/stay_on_while_plugged_in":       "7",
	"global/window_animation_scale":         "1.0",
	"global/transition_animation_scale":     "1.0",
	"global/animator_duration_scale":        "1.0",
	"secure/android_id":                     "5a1d0b1c2e3f4a5b",
	"secure/accessibility_enabled":          "0",
	"secure/enabled_accessibility_services": "",
}

func cmdSettings(sc *shellCtx, args []string) int {
	args = skipUser(args)
	if len(args) < 2 {
		sc.Errf("usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n")
		return 1
	}
	verb, ns := args[0], args[1]
	if ns != "system" && ns != "secure" && ns != "global" {
		sc.Errf("Invalid namespace '%s'\n", ns)
		return 1
	}
	p := sc.p
	switch verb {
	case "list":
		sc.locked(func() {
			all := map[string]string{}
			for k, v := range defaultSettings {
				all[k] = v
			}
			for k, v := range p.settings {
				all[k] = v
			}
			for _, k := range slices.Sorted(maps.Keys(all)) {
				if name, ok := strings.CutPrefix(k, ns+"/"); ok {
					sc.Outf("%s=%s\n", name, all[k])
				}
			}
		})
		return 0
	case "get":
		if len(args) != 3 {
			sc.Errf("Error: key not specified\n")
			return 1
		}
		key := ns + "/" + args[2]
		v, ok := "", false
		p.view(func() { v, ok = p.settings[key] })
		if !ok {
			v, ok = defaultSettings[key]
		}
		if !ok {
			v = "null"
		}
		sc.Outf("%s\n", v)
		return 0
	case "put":
		if len(args) < 4 {
			sc.Errf("Error: value not specified\n")
			return 1
		}
		key, val := ns+"/"+args[2], args[3]
		if key == "secure/default_input_method" {
			// Selecting an IME through settings works like `ime set` for an
			// enabled IME.
			if err := p.SetIME(val); err == nil {
				return 0
			}
		}
		p.view(func() { p.settings[key] = val })
		return 0
	case "delete":
		if len(args) != 3 {
			sc.Errf("Error: key not specified\n")
			return 1
		}
		p.view(func() { delete(p.settings, ns+"/"+args[2]) })
		sc.Outf("Deleted 1 rows\n")
		return 0
	}
	sc.Errf("Invalid command: %s\n", verb)
	return 1
}
