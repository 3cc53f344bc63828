package android

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/sim/android/ui"
)

// TestShellMoreCommands covers the less central commands, one table row
// each: output (regexp) and exit status.
func TestShellMoreCommands(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.counter")
	tapNode(t, p, byID(t, p, "increment_button"))
	tests := []struct {
		cmd, want string
		rc        int
	}{
		{"pm clear com.example.counter", `^Success\n$`, 0},
		{"pm clear com.nope", `^Failed\n$`, 1},
		{"pm list packages -f com.example.counter", `^package:/data/app/com\.example\.counter-1/base\.apk=com\.example\.counter\n$`, 0},
		{"pm list packages -s launcher", `^package:com\.android\.launcher3\n$`, 0},
		{"pm grant com.alipay.hulu android.permission.RECORD_AUDIO", `^$`, 0},
		{"pm grant com.nope x", `^$`, 255},
		{"pm dump com.alipay.hulu | grep -E 'version(Name|Code)'", `versionCode=37 minSdk=21 targetSdk=34\n    versionName=1\.0\.2\n$`, 0},
		{"dumpsys package com.alipay.hulu | grep versionName", `^    versionName=1\.0\.2\n$`, 0},
		{"dumpsys input_method | grep mInputShown", `^  mInputShown=false\n$`, 0},
		{"dumpsys nosuch", `^Can't find service: nosuch\n$`, 0},
		{"cmd nosuch x", `^$`, 20},
		{"cmd activity force-stop com.example.counter", `^$`, 0},
		{"cmd window size", `^Physical size: 1080x2340\n$`, 0},
		{"cmd input_method list -s", `LatinIME`, 0},
		{"cmd settings get global adb_enabled", `^1\n$`, 0},
		{"settings put system my_key v1 && settings get system my_key", `^v1\n$`, 0},
		{"settings list system | grep my_key", `^my_key=v1\n$`, 0},
		{"settings delete system my_key; settings get system my_key", `null\n$`, 0},
		{"settings get nowhere x", `^$`, 1},
		{"wm size 100x100", `^$`, 1},
		{"getconf PAGESIZE", `^4096\n$`, 0},
		{"getconf NOPE", `^$`, 1},
		{"setprop debug.x 1 && getprop debug.x", `^1\n$`, 0},
		{"setprop ro.x 1", `^$`, 1},
		{"whoami", `^shell\n$`, 0},
		{"date +%s", `^\d{10}\n$`, 0},
		{"uname -a", `aarch64 Toybox\n$`, 0},
		{"which am input nosuch", `^/system/bin/am\n/system/bin/input\n$`, 1},
		{"printf 'a\\nb\\nc\\n' > /sdcard/l; head -n 2 /sdcard/l; tail -n 1 /sdcard/l", `^a\nb\nc\n$`, 0},
		{"grep -c b /sdcard/l; grep -q zzz /sdcard/l", `^1\n$`, 1},
		{"grep -v -i B /sdcard/l", `^a\nc\n$`, 0},
		{"wc -c < /sdcard/l", `^6\n$`, 0},
		{"chmod 600 /sdcard/l && stat -c %a /sdcard/l", `^600\n$`, 0},
		{"chmod 600 /system", `^$`, 1},
		{"mkdir -p /sdcard/d/e && rmdir /sdcard/d/e && ls /sdcard/d", `^$`, 0},
		{"rmdir /sdcard/l", `^$`, 1},
		{"mkdir -p /sdcard/src/x && echo 1 > /sdcard/src/x/f && cp -r /sdcard/src /sdcard/dst && cat /sdcard/dst/x/f", `^1\n$`, 0},
		{"cp /sdcard/src /sdcard/dst2", `^$`, 1},
		{"stat /sdcard/l", `(?m)^  File: /sdcard/l\n  Size: 6\t`, 0},
		{"ls -ld /sdcard", `^drwxrwx--x 1 u0_a0 media_rw 4096 `, 0},
		{"ls -a /data/local/tmp /sdcard/nope", `^/data/local/tmp:\n$`, 1},
		{"touch -c /sdcard/nope; test -e /sdcard/nope", `^$`, 1},
		{"md5sum /sdcard/l", `^[0-9a-f]{32}  /sdcard/l\n$`, 0},
		{"echo abc | sha256sum", `^[0-9a-f]{64}  -\n$`, 0},
		{"logcat -g", `^main: ring buffer is`, 0},
		{"logcat -d -v brief -m 1", `^--------- beginning of main\n[VDIWEF]/`, 0},
		{"logcat -d -v nope -q", `^$`, 1},
		{"input", `^$`, 1},
		{"input touchscreen tap 100 100", `^$`, 0},
		{"input nosuch", `^$`, 1},
		{"input press", `^$`, 0},
		{"ime", `^$`, 1},
		{"ime disable com.android.inputmethod.latin/.LatinIME", `now disabled`, 0},
		{"ime reset", `Selected: com\.android\.inputmethod\.latin/\.LatinIME`, 0},
		{"ime enable com.nope/.X", `^$`, 1},
		{"am", `^$`, 1},
		{"am get-current-user", `^0\n$`, 0},
		{"am kill com.example.counter", `^$`, 0},
		{"am nosuch", `^$`, 255},
		{"am start -W -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -f 0x10200000 --ez b true --ei n 3 --activity-clear-top com.example.list/.ListActivity", `(?m)^Activity: com\.example\.list/\.ListActivity$`, 0},
		{"am start --ez b maybe -n com.example.list/.ListActivity", `^$`, 255},
		{"monkey -p com.example.counter -v -v 0", `Events injected: 0`, 0},
		{"monkey -p com.example.counter x", `bash arg: x\n$`, 1},
		{"sleep 0.01 1s", `^$`, 0},
		{"sleep x", `^$`, 1},
	}
	for _, tt := range tests {
		r := sh(t, p, tt.cmd)
		if r.rc != tt.rc || !regexp.MustCompile(tt.want).MatchString(r.out) {
			t.Errorf("%q: rc=%d (want %d) out=%q err=%q", tt.cmd, r.rc, tt.rc, r.out, r.err)
		}
	}
}

func TestAdbKeyboardCodesAndAPIExtras(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	mustSh(t, p, "ime enable com.android.adbkeyboard/.AdbIME && ime set com.android.adbkeyboard/.AdbIME")
	if p.CurrentIME() != adbIME {
		t.Fatalf("CurrentIME = %s", p.CurrentIME())
	}
	launch(t, p, "com.example.login")
	u := byID(t, p, "username")
	if err := p.Click(u.SourceID); err != nil { // ACTION_CLICK focuses the field
		t.Fatal(err)
	}
	mustSh(t, p, "am broadcast -a ADB_INPUT_CHARS --eia chars 100,101,109,111,120; am broadcast -a ADB_INPUT_CODE --ei code 67")
	if got := byID(t, p, "username").Text; got != "demo" {
		t.Errorf("typed %q", got)
	}
	if n, ok := p.FindNode(u.SourceID); !ok || n.Text != "demo" {
		t.Errorf("FindNode = %+v %v", n, ok)
	}
	if _, ok := p.FindNode(1); ok {
		t.Error("FindNode found a bogus id")
	}
	if err := p.Click(1); !errors.Is(err, errNodeNotFound) {
		t.Errorf("Click(bogus) = %v", err)
	}
	if err := p.KeyEvent(keycodeEnter); err != nil {
		t.Fatal(err)
	}
	if code, ok := keycodeByName("KEYCODE_BACK"); !ok || code != 4 {
		t.Errorf("KeycodeByName = %d %v", code, ok)
	}
	if code, ok := keycodeByName("66"); !ok || code != 66 {
		t.Errorf("KeycodeByName(66) = %d", code)
	}
	if err := p.KeyEvent(0); err == nil {
		t.Error("key code 0 accepted")
	}
	if err := p.StartActivity("com.example.list/.ListActivity"); err != nil {
		t.Fatal(err)
	}
	if err := p.StartActivity("nonsense"); !errors.Is(err, errUnresolved) {
		t.Errorf("StartActivity(nonsense) = %v", err)
	}
	if err := p.LaunchApp("com.android.adbkeyboard"); !errors.Is(err, errNoLauncher) {
		t.Errorf("LaunchApp(keyboard) = %v", err)
	}
	if err := p.LaunchApp("com.nope"); !errors.Is(err, errNotInstalled) {
		t.Errorf("LaunchApp(missing) = %v", err)
	}
	item := listItems(p)[0]
	if err := p.LongClick(item.SourceID); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(item.SourceID); err != nil {
		t.Fatal(err)
	}
	if got := byID(t, p, "detail_text").Text; got != "Selected: Item 1" {
		t.Errorf("detail after Click = %q", got)
	}
	p.ShowTransientWindow("com.example.popup", ui.Rect{Left: 0, Top: 0, Right: 100, Bottom: 100}, 1e15)
	p.ClearTransientWindows()
	if p.MultiWindow() {
		t.Error("overlay survived ClearTransientWindows")
	}
	if p.Serial() != "sim-0001" || p.Config().SDK != 34 || p.Prop("ro.product.brand") != "google" {
		t.Error("config accessors")
	}
	if err := p.ClearData("com.nope"); err == nil {
		t.Error("ClearData of a missing package succeeded")
	}
	var am *amFailure = &amFailure{Output: "x", Code: 2}
	if !strings.Contains(am.Error(), "x") {
		t.Error(am.Error())
	}
}

func TestSDKDependentAmOutput(t *testing.T) {
	t.Parallel()
	p := New(Config{SDK: 36, AndroidVersion: "16"}, nil)
	out := mustSh(t, p, "am start -W -n com.example.counter/.MainActivity")
	if strings.Contains(out, "ThisTime") || !strings.Contains(out, "LaunchState: COLD") {
		t.Errorf("Android 16 output: %q", out)
	}
	if got := mustSh(t, p, "getprop ro.build.version.release"); got != "16\n" {
		t.Errorf("release = %q", got)
	}
}
