package android

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

func TestShellQuotingPassesURIWhole(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	var got Intent
	p.RegisterActivityHandler("com.alipay.hulu/.common.scheme.AdbSchemeActivity", func(_ context.Context, in Intent) error {
		got = in
		return nil
	})
	tests := []struct{ cmd, data string }{
		{`am start -n a/b -d 'solopi://startaction/x?a=1&b=2'`, ""},
		{`am start -W -n com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity -a android.intent.action.VIEW -d 'solopi://startaction/x?a=1&b=2'`, "solopi://startaction/x?a=1&b=2"},
		{`am start -n com.alipay.hulu/.common.scheme.AdbSchemeActivity -d "solopi://startaction/agent?type=act&text=%27hi%27+there;x"`, "solopi://startaction/agent?type=act&text=%27hi%27+there;x"},
		{`am start -n com.alipay.hulu/.common.scheme.AdbSchemeActivity -d solopi://startaction/harness\?type=cases\&x=\$HOME`, "solopi://startaction/harness?type=cases&x=$HOME"},
	}
	for _, tt := range tests {
		got = Intent{}
		r := sh(t, p, tt.cmd)
		if tt.data == "" { // a/b is not installed: unresolved, the URI is still one argument
			if r.rc != 1 || !strings.Contains(r.err, "unable to resolve Intent") {
				t.Errorf("%s: rc=%d err=%q", tt.cmd, r.rc, r.err)
			}
			continue
		}
		if r.rc != 0 || got.Data != tt.data {
			t.Errorf("%s: rc=%d data=%q want %q (stderr %q)", tt.cmd, r.rc, got.Data, tt.data, r.err)
		}
	}
}

func TestShellHostileStringsRoundTrip(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	hostile := []string{"with spaces", "'", "''", `\'`, `"`, "$HOME", "`id`", "$(id)", ";&&|", "*", "",
		"-n", "line1\nline2", "tab\there", `back\slash`, "ünïcödé 中文", `{"json":[1,2]}`, "%s", "trailing ",
		"a'b\"c$d`e\\f"}
	for _, s := range hostile {
		// "-n" is an option to echo on a device too; printf covers it.
		if s != "-n" {
			r := sh(t, p, "echo "+shQuote(s))
			if r.rc != 0 || r.out != s+"\n" {
				t.Errorf("echo %s = %q rc=%d, want %q", shQuote(s), r.out, r.rc, s+"\n")
			}
		}
		r := sh(t, p, "printf '%s\\0' "+shQuote(s))
		if r.rc != 0 || r.out != s+"\x00" {
			t.Errorf("printf %s = %q rc=%d", shQuote(s), r.out, r.rc)
		}
		// The same string survives as an am extra.
		var got string
		p.RegisterActivityHandler(adbSchemeComponent, func(_ context.Context, in Intent) error { got = in.Extras["k"]; return nil })
		if r := sh(t, p, "am start -n "+adbSchemeComponent+" --es k "+shQuote(s)); r.rc != 0 || got != s {
			t.Errorf("am extra %s = %q rc=%d", shQuote(s), got, r.rc)
		}
	}
	// The glob must not see the host's file system.
	if r := sh(t, p, "echo /etc/*"); r.out != "/etc/*\n" {
		t.Errorf("glob leaked host files: %q", r.out)
	}
	mustSh(t, p, "touch /sdcard/Download/a.txt /sdcard/Download/b.txt")
	if r := sh(t, p, "echo /sdcard/Download/*.txt"); r.out != "/sdcard/Download/a.txt /sdcard/Download/b.txt\n" {
		t.Errorf("glob = %q", r.out)
	}
}

func TestShellLanguage(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	tests := []struct {
		cmd, out, err string
		rc            int
	}{
		{"true; echo $?", "0\n", "", 0},
		{"false; echo $?", "1\n", "", 0},
		{"false && echo no || echo yes", "yes\n", "", 0},
		{"true && echo a; echo b", "a\nb\n", "", 0},
		{"exit 3", "", "", 3},
		{"echo hi >/dev/null; echo $?", "0\n", "", 0},
		{"nosuchcmd 2>/dev/null; echo $?", "127\n", "", 0},
		{"nosuchcmd", "", "/system/bin/sh: nosuchcmd: inaccessible or not found\n", 127},
		{"/data/local/tmp/tool", "", "/system/bin/sh: /data/local/tmp/tool: inaccessible or not found\n", 127},
		{"/system/bin/echo x", "x\n", "", 0},
		{"x=1; [ \"$x\" = 1 ] && echo eq", "eq\n", "", 0},
		{"echo a | grep a | wc -l", "1\n", "", 0},
		{"cd /sdcard && pwd", "/sdcard\n", "", 0},
		{"command -v am", "/system/bin/am\n", "", 0},
		{"echo 'unterminated", "", "", 1},
		{"id -u >/dev/null && echo $USER", "shell\n", "", 0},
	}
	for _, tt := range tests {
		r := sh(t, p, tt.cmd)
		if r.out != tt.out || r.rc != tt.rc || tt.err != "" && r.err != tt.err {
			t.Errorf("%q: out=%q err=%q rc=%d; want out=%q err=%q rc=%d", tt.cmd, r.out, r.err, r.rc, tt.out, tt.err, tt.rc)
		}
	}
}

var amBlockRE = regexp.MustCompile(`(?m)^Status: ok\nLaunchState: (COLD|WARM|HOT)\nActivity: ([^\n]+)\nThisTime: (\d+)\nTotalTime: (\d+)\nWaitTime: (\d+)\nComplete$`)

type amBlock struct {
	state, activity         string
	this, total, waitMillis int
}

func parseAm(t *testing.T, out string) []amBlock {
	t.Helper()
	var blocks []amBlock
	for _, m := range amBlockRE.FindAllStringSubmatch(out, -1) {
		b := amBlock{state: m[1], activity: m[2]}
		b.this, _ = strconv.Atoi(m[3])
		b.total, _ = strconv.Atoi(m[4])
		b.waitMillis, _ = strconv.Atoi(m[5])
		if !(b.this <= b.total && b.total <= b.waitMillis && b.this > 0) {
			t.Errorf("times out of order: %+v", b)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func TestAmStartWait(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	comp := "com.example.counter/com.example.counter.MainActivity"
	out := mustSh(t, p, "am start -W -n "+comp)
	if !strings.HasPrefix(out, "Starting: Intent { cmp=com.example.counter/.MainActivity }\n") {
		t.Errorf("missing Starting line: %q", out)
	}
	b := parseAm(t, out)
	if len(b) != 1 || b[0].state != "COLD" || b[0].activity != "com.example.counter/.MainActivity" {
		t.Fatalf("first start: %q", out)
	}
	if b[0].total < 300 || b[0].total > 700 {
		t.Errorf("cold TotalTime %d outside 300..700", b[0].total)
	}
	// Already in front: HOT with the delivered-to-top warning.
	out = mustSh(t, p, "am start -W -n "+comp)
	if hot := parseAm(t, out); len(hot) != 1 || hot[0].state != "HOT" || hot[0].total >= b[0].total {
		t.Errorf("second start: %q", out)
	}
	// -S force-stops first: COLD again.
	out = mustSh(t, p, "am start -W -S -n "+comp)
	if !strings.HasPrefix(out, "Stopping: com.example.counter\n") {
		t.Errorf("-S output: %q", out)
	}
	if c := parseAm(t, out); len(c) != 1 || c[0].state != "COLD" {
		t.Errorf("-S start: %q", out)
	}
	// -R 2: two complete blocks; the second launch follows an unhandled
	// BACK, so the process is warm.
	out = mustSh(t, p, "am start -W -R 2 -n "+comp)
	r2 := parseAm(t, out)
	if len(r2) != 2 || r2[1].state != "WARM" || strings.Count(out, "Starting: Intent") != 2 {
		t.Fatalf("-R 2: %q", out)
	}
	// From home the task comes back HOT.
	mustSh(t, p, "input keyevent KEYCODE_HOME")
	if h := parseAm(t, mustSh(t, p, "am start -W -n "+comp)); len(h) != 1 || h[0].state != "HOT" {
		t.Errorf("after home: %+v", h)
	}
}

func TestAmStartTimingStatistics(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	totals := map[string][]int{}
	for _, pkg := range []string{"com.example.counter", "com.example.login"} {
		comp := pkg + "/" + map[string]string{"com.example.counter": ".MainActivity", "com.example.login": ".LoginActivity"}[pkg]
		for i := 0; i < 6; i++ {
			b := parseAm(t, mustSh(t, p, "am start -W -S -n "+comp))
			if len(b) != 1 || b[0].state != "COLD" {
				t.Fatalf("run %d: %+v", i, b)
			}
			totals[pkg] = append(totals[pkg], b[0].total)
		}
	}
	for pkg, v := range totals {
		distinct := map[int]bool{}
		for _, x := range v {
			distinct[x] = true
		}
		if len(distinct) < 3 {
			t.Errorf("%s cold times barely vary: %v", pkg, v)
		}
	}
	if mean(totals["com.example.login"]) <= mean(totals["com.example.counter"]) {
		t.Errorf("login (%v) should start slower than counter (%v)", totals["com.example.login"], totals["com.example.counter"])
	}
	// Deterministic: a fresh phone gives the same sequence.
	q := newTestPhone(t)
	for i := 0; i < 6; i++ {
		b := parseAm(t, mustSh(t, q, "am start -W -S -n com.example.counter/.MainActivity"))
		if b[0].total != totals["com.example.counter"][i] {
			t.Fatalf("run %d differs on a fresh phone: %d vs %d", i, b[0].total, totals["com.example.counter"][i])
		}
	}
}

func mean(v []int) float64 {
	s := 0
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

func TestAmStartTakesSimulatedTime(t *testing.T) {
	t.Parallel()
	clk := clock.NewScaled(1000)
	p := New(Config{}, clk)
	start := clk.Now()
	mustSh(t, p, "am start -W -n com.example.counter/.MainActivity")
	if el := clk.Now().Sub(start); el < 300*time.Millisecond {
		t.Errorf("am start -W returned after %v of simulated time", el)
	}
	start = clk.Now()
	mustSh(t, p, "sleep 2")
	if el := clk.Now().Sub(start); el < 2*time.Second {
		t.Errorf("sleep 2 took %v simulated", el)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if rc := p.RunShell(ctx, "sleep 1000", nil, nil, nil); rc != 130 {
		t.Errorf("cancelled sleep rc = %d, want 130", rc)
	}
}

func TestAmErrors(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	tests := []struct {
		cmd, stdout, stderr string
		rc                  int
	}{
		{"am start -W -n com.nope/.Main", "Error: Activity not started, unable to resolve Intent { flg=0x10000000 cmp=com.nope/.Main }", "", 1},
		{"am start -n com.nope/.Main", "", "Error: Activity not started, unable to resolve Intent", 1},
		{"am start -W -n com.example.counter/.Missing", "Error type 3\nError: Activity class {com.example.counter/com.example.counter.Missing} does not exist.", "", 1},
		{"am start --bogus", "", "Exception occurred while executing 'start':", 255},
		{"am start -n", "", "Argument expected after \"-n\"", 255},
		{"am force-stop com.nope", "", "", 0},
		{"am start -a android.intent.action.VIEW -d solopi://startaction/harness", "Starting: Intent { act=android.intent.action.VIEW dat=solopi://startaction/... }", "", 0},
	}
	for _, tt := range tests {
		r := sh(t, p, tt.cmd)
		if r.rc != tt.rc || !strings.Contains(r.out, tt.stdout) || !strings.Contains(r.err, tt.stderr) {
			t.Errorf("%q: rc=%d out=%q err=%q", tt.cmd, r.rc, r.out, r.err)
		}
	}
	if _, act := p.Foreground(); act != "com.alipay.hulu.common.scheme.SchemeActivity" {
		t.Errorf("implicit solopi:// intent went to %s", act)
	}
}

func TestShellCommandFormats(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	mustSh(t, p, "monkey -p com.example.counter -c android.intent.category.LAUNCHER 1")
	tests := []struct {
		cmd  string
		want string // regexp on stdout
		rc   int
	}{
		{"pm path com.alipay.hulu", `^package:/data/app/com\.alipay\.hulu-1/base\.apk\n$`, 0},
		{"pm path com.nope", `^$`, 1},
		{"pm list packages", `(?m)^package:com\.example\.counter$`, 0},
		{"pm list packages -3 example.l", `^package:com\.example\.list\npackage:com\.example\.login\n$`, 0},
		{"cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER com.alipay.hulu",
			`^priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\ncom\.alipay\.hulu/com\.alipay\.hulu\.activity\.SplashActivity\n$`, 0},
		{"pm resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER com.example.list",
			`\ncom\.example\.list/com\.example\.list\.ListActivity\n$`, 0},
		{"cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER com.android.adbkeyboard", `^No activity found\n$`, 0},
		{"dumpsys window", `(?m)^  mCurrentFocus=Window\{[0-9a-f]+ u0 com\.example\.counter/com\.example\.counter\.MainActivity\}$`, 0},
		{"dumpsys activity top", `(?m)^    ACTIVITY com\.example\.counter/\.MainActivity [0-9a-f]+ pid=\d+$`, 0},
		{"monkey -p com.nope -c android.intent.category.LAUNCHER 1", `No activities found to run, monkey aborted\.`, 252},
		{"monkey -p com.alipay.hulu -c android.intent.category.LAUNCHER 1", `(?m)^Events injected: 1$`, 0},
		{"getprop ro.build.version.sdk", `^34\n$`, 0},
		{"getprop ro.build.version.release", `^14\n$`, 0},
		{"getprop ro.product.model", `^Pixel 7\n$`, 0},
		{"getprop ro.product.model; date +%z", `^Pixel 7\n\+0000\n$`, 0},
		{"getprop ro.serialno", `^sim-0001\n$`, 0},
		{"getprop no.such.prop", `^\n$`, 0},
		{"getprop", `(?m)^\[ro\.build\.version\.sdk\]: \[34\]$`, 0},
		{"wm size", `^Physical size: 1080x2340\n$`, 0},
		{"wm density", `^Physical density: 440\n$`, 0},
		{"getconf _NPROCESSORS_ONLN", `^8\n$`, 0},
		{"nproc", `^8\n$`, 0},
		{"id", `^uid=2000\(shell\) gid=2000\(shell\) `, 0},
		{"settings get secure default_input_method", `^com\.android\.inputmethod\.latin/\.LatinIME\n$`, 0},
		{"settings get system no_such_key", `^null\n$`, 0},
		{"ime list -s", `^com\.android\.inputmethod\.latin/\.LatinIME\n$`, 0},
		{"ime list -a -s", `^com\.android\.adbkeyboard/\.AdbIME\ncom\.android\.inputmethod\.latin/\.LatinIME\n$`, 0},
		{"input tap 10 10", `^$`, 0},
		{"input swipe 500 1500 500 500 100", `^$`, 0},
		{"input keyevent 4", `^$`, 0},
		{"input keyevent KEYCODE_HOME", `^$`, 0},
		{"input text hello%sworld", `^$`, 0},
		{"input keyevent KEYCODE_NOPE", `^$`, 1},
		{"input tap 1", `^$`, 1},
		{"uname", `^Linux\n$`, 0},
	}
	for _, tt := range tests {
		r := sh(t, p, tt.cmd)
		if r.rc != tt.rc || !regexp.MustCompile(tt.want).MatchString(r.out) {
			t.Errorf("%q: rc=%d (want %d) out=%q err=%q", tt.cmd, r.rc, tt.rc, r.out, r.err)
		}
	}
}

func TestShellInputDrivesUI(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	mustSh(t, p, "monkey -p com.example.login -c android.intent.category.LAUNCHER 1")
	u := byID(t, p, "username")
	mustSh(t, p, "input tap "+strconv.Itoa(u.Bounds.CenterX())+" "+strconv.Itoa(u.Bounds.CenterY()))
	mustSh(t, p, "input text 'dem%sx'; input keyevent KEYCODE_DEL KEYCODE_DEL 43")
	if got := byID(t, p, "username").Text; got != "demo" {
		t.Errorf("typed %q, want demo", got)
	}
	mustSh(t, p, "input keyevent 4")
	if p.IMEShown() {
		t.Error("BACK did not hide the keyboard")
	}
	if _, act := p.Foreground(); act != "com.example.login.LoginActivity" {
		t.Error("first BACK left the screen instead of hiding the keyboard")
	}
	mustSh(t, p, "input keyevent 4")
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Errorf("second BACK: %s", pkg)
	}
}

func TestAdbKeyboardBroadcast(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.login")
	tapNode(t, p, byID(t, p, "username"))
	bc := "am broadcast -a ADB_INPUT_TEXT --es msg '你好 demo'"
	out := mustSh(t, p, bc)
	if out != "Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\nBroadcast completed: result=0\n" {
		t.Errorf("broadcast output %q", out)
	}
	if got := byID(t, p, "username").Text; got != "Username" {
		t.Fatalf("broadcast typed %q while LatinIME is selected", got)
	}
	if r := sh(t, p, "ime set com.android.adbkeyboard/.AdbIME"); r.rc != 1 {
		t.Errorf("ime set of a disabled IME: rc=%d", r.rc)
	}
	for _, c := range [][2]string{
		{"ime enable com.android.adbkeyboard/.AdbIME", "Input method com.android.adbkeyboard/.AdbIME: now enabled for user #0\n"},
		{"ime enable com.android.adbkeyboard/.AdbIME", "Input method com.android.adbkeyboard/.AdbIME: already enabled for user #0\n"},
		{"ime set com.android.adbkeyboard/.AdbIME", "Input method com.android.adbkeyboard/.AdbIME selected for user #0\n"},
	} {
		cmd, want := c[0], c[1]
		if got := mustSh(t, p, cmd); got != want {
			t.Errorf("%s = %q", cmd, got)
		}
	}
	if got := mustSh(t, p, "settings get secure default_input_method"); got != adbIME+"\n" {
		t.Errorf("default_input_method = %q", got)
	}
	mustSh(t, p, bc)
	if got := byID(t, p, "username").Text; got != "你好 demo" {
		t.Errorf("ADB_INPUT_TEXT typed %q", got)
	}
	mustSh(t, p, "am broadcast -a ADB_CLEAR_TEXT; am broadcast -a ADB_INPUT_B64 --es msg ZGVtbw==")
	if got := byID(t, p, "username").Text; got != "demo" {
		t.Errorf("ADB_INPUT_B64 typed %q", got)
	}
	// The IME window is now the ADB keyboard's strip.
	var ime *ui.Window
	for _, w := range p.Windows() {
		if w.Kind == ui.WindowIME {
			w := w
			ime = &w
		}
	}
	if ime == nil || ime.Package != "com.android.adbkeyboard" {
		t.Fatalf("IME window = %+v", ime)
	}
}

func TestScreencapAndLogcatCommands(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	r := sh(t, p, "screencap -p")
	if r.rc != 0 || !strings.HasPrefix(r.out, "\x89PNG\r\n\x1a\n") {
		t.Fatalf("screencap -p: rc=%d head=%q", r.rc, r.out[:min(8, len(r.out))])
	}
	mustSh(t, p, "screencap -p /sdcard/s.png")
	data, err := p.FS().ReadFile("/storage/emulated/0/s.png")
	if err != nil || !bytes.Equal(data, []byte(r.out)) {
		t.Errorf("screencap to file: %v, %d bytes", err, len(data))
	}
	p.SetScreenshotFault(nil, 0)
	p.SetScreenshotFault(ErrScreenshotFault, 0)
	if r := sh(t, p, "screencap -p"); r.rc == 0 || r.out != "" {
		t.Errorf("faulted screencap: rc=%d", r.rc)
	}
	p.SetScreenshotFault(nil, 0)

	p.Log('E', "MyTag", "first\nsecond")
	out := mustSh(t, p, "logcat -d -v threadtime")
	line := regexp.MustCompile(`(?m)^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ E MyTag   : second$`)
	if !strings.HasPrefix(out, "--------- beginning of main\n") || !line.MatchString(out) {
		t.Errorf("logcat output:\n%s", out)
	}
	if out := mustSh(t, p, "logcat -d -t 2"); strings.Count(out, "\n") != 4 || !strings.HasSuffix(out, "E MyTag   : second\n") {
		t.Errorf("logcat -t 2:\n%s", out)
	}
	if out := mustSh(t, p, "logcat -d -s MyTag:E"); strings.Count(out, "MyTag") != 2 || strings.Count(out, "\n") != 3 {
		t.Errorf("logcat filter:\n%s", out)
	}
	mustSh(t, p, "logcat -c")
	if out := mustSh(t, p, "logcat -d"); out != "" {
		t.Errorf("after -c: %q", out)
	}
	// Without -d logcat follows until the client goes away.
	ctx, cancel := context.WithCancel(context.Background())
	var buf syncBuffer
	done := make(chan int)
	go func() { done <- p.RunShell(ctx, "logcat -v brief", nil, &buf, nil) }()
	for i := 0; i < 200 && !strings.Contains(buf.String(), "live line"); i++ {
		p.Log('I', "Live", "live line")
		time.Sleep(time.Millisecond)
	}
	cancel()
	if rc := <-done; rc != 130 || !strings.Contains(buf.String(), "I/Live    (") {
		t.Errorf("streaming logcat rc=%d out=%q", rc, buf.String())
	}
}
