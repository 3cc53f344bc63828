package android

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// TestDefaultAppsInstalled checks the phone a zero Config boots: the stock
// apps installed, the launcher in front.
func TestDefaultAppsInstalled(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	solo, ok := p.App(soloPiPackage)
	if !ok {
		t.Fatal("SoloPi not installed")
	}
	if solo.Label != "SoloPi" || solo.VersionName != "1.0.2" || solo.VersionCode != 37 ||
		solo.LauncherActivity != "com.alipay.hulu.activity.SplashActivity" {
		t.Errorf("SoloPi info = %+v", solo)
	}
	if pkg, act := p.Foreground(); pkg != launcherPackage || act != "com.android.launcher3.Launcher" {
		t.Errorf("boot foreground = %s/%s", pkg, act)
	}
}

func TestCounterTransitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		taps   []string
		value  string
		status string
	}{
		{"initial", nil, "0", "Idle"},
		{"one increment", []string{"increment_button"}, "1", "Counting"},
		{"three increments", []string{"increment_button", "increment_button", "increment_button"}, "3", "Counting"},
		{"reset after counting", []string{"increment_button", "increment_button", "reset_button"}, "0", "Idle"},
		{"reset at zero", []string{"reset_button"}, "0", "Idle"},
		{"count after reset", []string{"increment_button", "reset_button", "increment_button"}, "1", "Counting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newTestPhone(t)
			launch(t, p, "com.example.counter")
			for _, id := range tt.taps {
				tapNode(t, p, byID(t, p, id))
			}
			if got := byID(t, p, "com.example.counter:id/counter_value").Text; got != tt.value {
				t.Errorf("counter_value = %q, want %q", got, tt.value)
			}
			if got := byID(t, p, "com.example.counter:id/counter_status").Text; got != tt.status {
				t.Errorf("counter_status = %q, want %q", got, tt.status)
			}
		})
	}
	p := newTestPhone(t)
	launch(t, p, "com.example.counter")
	for id, text := range map[string]string{"reset_button": "Reset", "increment_button": "+1"} {
		n := byID(t, p, id)
		if n.Text != text || !n.Clickable || n.PackageName != "com.example.counter" || n.ClassName != "android.widget.Button" {
			t.Errorf("%s = %+v", id, n)
		}
	}
}

func TestCounterStateLostOnForceStop(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.counter")
	tapNode(t, p, byID(t, p, "increment_button"))
	if err := p.ForceStop("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Fatalf("after force-stop foreground = %s", pkg)
	}
	launch(t, p, "com.example.counter")
	if v := byID(t, p, "counter_value").Text; v != "0" {
		t.Errorf("counter after restart = %q, want 0", v)
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		user, pass string
		welcome    bool
	}{
		{"demo", "secret", true},
		{"demo", "wrong", false},
		{"Demo", "secret", false},
		{"", "", false},
		{"demo", "secret ", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.user, tt.pass), func(t *testing.T) {
			t.Parallel()
			p := newTestPhone(t)
			launch(t, p, "com.example.login")
			if hasID(p, "error_text") {
				t.Fatal("error shown before any attempt")
			}
			// Type the user name through focus + InputText, the password via
			// ACTION_SET_TEXT, as the two real input paths do.
			tapNode(t, p, byID(t, p, "username"))
			if err := p.InputText(tt.user); err != nil {
				t.Fatal(err)
			}
			if err := p.SetText(byID(t, p, "password").SourceID, tt.pass); err != nil {
				t.Fatal(err)
			}
			if !p.IMEShown() {
				t.Fatal("keyboard not shown after tapping the user name field")
			}
			// The keyboard covers the lower screen; the button is above it.
			tapNode(t, p, byID(t, p, "sign_in_button"))
			_, act := p.Foreground()
			if tt.welcome {
				if act != "com.example.login.WelcomeActivity" {
					t.Fatalf("activity = %s, want WelcomeActivity", act)
				}
				if got := byID(t, p, "welcome_text").Text; got != "Welcome, demo" {
					t.Errorf("welcome = %q", got)
				}
				if p.IMEShown() {
					t.Error("keyboard still shown on the welcome screen")
				}
				if err := p.Back(); err != nil {
					t.Fatal(err)
				}
				if _, act := p.Foreground(); act != "com.example.login.LoginActivity" {
					t.Errorf("after back: %s", act)
				}
				return
			}
			if act != "com.example.login.LoginActivity" {
				t.Fatalf("activity = %s, want LoginActivity", act)
			}
			if got := byID(t, p, "error_text").Text; got != "Wrong username or password" {
				t.Errorf("error text = %q", got)
			}
			// Editing a field clears the error.
			if err := p.SetText(byID(t, p, "username").SourceID, "x"); err != nil {
				t.Fatal(err)
			}
			if hasID(p, "error_text") {
				t.Error("error still shown after editing")
			}
		})
	}
}

func TestPasswordFieldIsMasked(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.login")
	pw := byID(t, p, "password")
	if pw.Text != "Password" || pw.Hint != "Password" || !pw.Password || !pw.Editable {
		t.Fatalf("empty password field = %+v", pw)
	}
	if err := p.SetText(pw.SourceID, "secret"); err != nil {
		t.Fatal(err)
	}
	if got := byID(t, p, "password").Text; got != strings.Repeat("\u2022", 6) {
		t.Errorf("password text = %q, want six bullets", got)
	}
	if err := p.SetText(byID(t, p, "sign_in_button").SourceID, "x"); !errors.Is(err, errNotEditable) {
		t.Errorf("SetText on a button = %v, want ErrNotEditable", err)
	}
	if err := p.SetText(12345, "x"); !errors.Is(err, errNodeNotFound) {
		t.Errorf("SetText on a missing node = %v, want ErrNodeNotFound", err)
	}
}

// listItems returns the visible list rows in order.
func listItems(p *Phone) []*ui.Node {
	var out []*ui.Node
	p.ActiveWindow().Root.Walk(func(n *ui.Node) bool {
		if strings.HasSuffix(n.ResourceID, ":id/item_title") {
			out = append(out, n)
		}
		return true
	})
	return out
}

func TestListScrolling(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.list")
	list := byID(t, p, "com.example.list:id/list")
	if !list.Scrollable || list.Bounds != (ui.Rect{Left: 0, Top: 231, Right: 1080, Bottom: 2340}) {
		t.Fatalf("list = %+v", list)
	}
	check := func(wantFirst, wantLast string, firstTop int) []*ui.Node {
		t.Helper()
		items := listItems(p)
		if len(items) == 0 {
			t.Fatal("no items")
		}
		if items[0].Text != wantFirst || items[len(items)-1].Text != wantLast {
			t.Fatalf("visible %q..%q, want %q..%q", items[0].Text, items[len(items)-1].Text, wantFirst, wantLast)
		}
		if items[0].Bounds.Top != firstTop {
			t.Errorf("first item top = %d, want %d", items[0].Bounds.Top, firstTop)
		}
		for _, it := range items {
			if it.Bounds.Top < list.Bounds.Top || it.Bounds.Bottom > list.Bounds.Bottom || it.Bounds.Empty() {
				t.Errorf("%s bounds %v escape the viewport %v", it.Text, it.Bounds, list.Bounds)
			}
		}
		return items
	}
	// 2109 px of viewport / 168 px rows: 12 full rows and a clipped 13th.
	items := check("Item 1", "Item 13", 231)
	if b := items[12].Bounds; b != (ui.Rect{Left: 0, Top: 2247, Right: 1080, Bottom: 2340}) {
		t.Errorf("clipped Item 13 bounds = %v", b)
	}
	before := items[0].SourceID
	// Drag the content up by 840 px = 5 rows.
	if err := p.Swipe(540, 2000, 540, 1160, 300e6); err != nil {
		t.Fatal(err)
	}
	items = check("Item 6", "Item 18", 231)
	if items[0].SourceID == before {
		t.Error("a different item kept the source id of Item 1")
	}
	// Half a row more: Item 6 is clipped at the top.
	if err := p.Swipe(540, 2000, 540, 1916, 300e6); err != nil {
		t.Fatal(err)
	}
	items = check("Item 6", "Item 19", 231)
	if items[0].Bounds != (ui.Rect{Left: 0, Top: 231, Right: 1080, Bottom: 315}) {
		t.Errorf("clipped Item 6 bounds = %v", items[0].Bounds)
	}
	// Fling far past the end: clamped at the last row.
	for i := 0; i < 10; i++ {
		_ = p.Swipe(540, 2200, 540, 300, 100e6)
	}
	items = check("Item 48", "Item 60", 231)
	if items[0].Bounds.Bottom != 324 {
		t.Errorf("clipped Item 48 bounds = %v", items[0].Bounds)
	}
	if last := items[len(items)-1]; last.Bounds.Bottom != 2340 {
		t.Errorf("last item bottom = %d, want 2340", last.Bounds.Bottom)
	}
	// Back to the top through the accessibility scroll action.
	moved, err := p.ScrollNode(list.SourceID, 0, -100000)
	if err != nil || !moved {
		t.Fatalf("ScrollNode = %v, %v", moved, err)
	}
	check("Item 1", "Item 13", 231)
	if moved, _ := p.ScrollNode(list.SourceID, 0, -10); moved {
		t.Error("scrolled above the top")
	}
	// A row click opens the detail screen with the row's text.
	tapNode(t, p, listItems(p)[2])
	if got := byID(t, p, "detail_text").Text; got != "Selected: Item 3" {
		t.Errorf("detail = %q", got)
	}
}

func TestLauncherIconsAndNavigation(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	w := p.ActiveWindow()
	icon := w.Root.Find(func(n *ui.Node) bool { return n.Kind == "icon" && n.Text == "Counter" })
	if icon == nil {
		t.Fatal("no Counter icon on the home screen")
	}
	if w.Root.Find(func(n *ui.Node) bool { return n.Kind == "icon" && n.Text == "ADB Keyboard" }) != nil {
		t.Error("an app without launcher activity has an icon")
	}
	tapNode(t, p, icon)
	if pkg, act := p.Foreground(); pkg != "com.example.counter" || act != "com.example.counter.MainActivity" {
		t.Fatalf("after icon tap: %s/%s", pkg, act)
	}
	tapNode(t, p, byID(t, p, "increment_button"))
	if err := p.Home(); err != nil {
		t.Fatal(err)
	}
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Fatalf("after HOME: %s", pkg)
	}
	// Coming back restores the task with its state (HOT start).
	launch(t, p, "com.example.counter")
	if v := byID(t, p, "counter_value").Text; v != "1" {
		t.Errorf("counter after home and back = %q", v)
	}
	if err := p.Back(); err != nil {
		t.Fatal(err)
	}
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Errorf("after BACK from the root activity: %s", pkg)
	}
	if err := p.Back(); err != nil {
		t.Fatal(err)
	}
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Errorf("BACK on home left the launcher: %s", pkg)
	}
	if _, ok := p.ProcessRunning("com.example.counter"); !ok {
		t.Error("BACK killed the process")
	}
}

func TestAdbSchemeActivityHandler(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	var got []Intent
	var fgDuring string
	p.RegisterActivityHandler(adbSchemeComponent, func(ctx context.Context, in Intent) error {
		fgDuring, _ = p.Foreground()
		got = append(got, in)
		return nil
	})
	launch(t, p, "com.example.counter")
	uri := "solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fa+b&requestId=r-1"
	r := sh(t, p, "am start -W -n com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity -a android.intent.action.VIEW -d '"+uri+"' --es k 'v w'")
	if r.rc != 0 {
		t.Fatalf("rc=%d %q %q", r.rc, r.out, r.err)
	}
	for _, marker := range []string{"error:", "error type ", "exception occurred", "securityexception", "permission denial", "unable to resolve intent"} {
		if strings.Contains(strings.ToLower(r.out+r.err), marker) {
			t.Errorf("output has failure marker %q: %s", marker, r.out)
		}
	}
	want := Intent{Action: actionView, Data: uri, Component: adbSchemeComponent, Extras: map[string]string{"k": "v w"}}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("handler got %+v, want %+v", got, want)
	}
	if fgDuring != soloPiPackage {
		t.Errorf("foreground during the handler = %s", fgDuring)
	}
	// SoloPi stays in front until something else comes up, then vanishes
	// (noHistory); the previous app is restored by am start.
	if pkg, act := p.Foreground(); pkg != soloPiPackage || act != "com.alipay.hulu.common.scheme.AdbSchemeActivity" {
		t.Fatalf("after am start: %s/%s", pkg, act)
	}
	mustSh(t, p, "am start -W -n com.example.counter/com.example.counter.MainActivity")
	if pkg, _ := p.Foreground(); pkg != "com.example.counter" {
		t.Fatalf("restore: %s", pkg)
	}
	for _, task := range p.Tasks() {
		for _, a := range task {
			if strings.Contains(a, "AdbSchemeActivity") {
				t.Errorf("noHistory activity survived: %v", p.Tasks())
			}
		}
	}
	// A handler's AmFailure becomes visible am output.
	p.RegisterActivityHandler(adbSchemeComponent, func(context.Context, Intent) error {
		return &amFailure{Output: "java.lang.SecurityException: Permission Denial: starting Intent", Code: 255}
	})
	r = sh(t, p, "am start -W -n "+adbSchemeComponent+" -d solopi://startaction/x")
	if r.rc != 255 || !strings.Contains(r.out, "Permission Denial") {
		t.Errorf("AmFailure: rc=%d out=%q", r.rc, r.out)
	}
	// Other handler errors are only logged.
	p.RegisterActivityHandler(adbSchemeComponent, func(context.Context, Intent) error { return errors.New("boom") })
	if r := sh(t, p, "am start -n "+adbSchemeComponent); r.rc != 0 {
		t.Errorf("plain handler error changed am's exit code: %d", r.rc)
	}
	found := false
	for _, e := range p.Logcat() {
		found = found || strings.Contains(e.Msg, "boom")
	}
	if !found {
		t.Error("handler error not logged")
	}
}

func TestProcessEvents(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	var evts []string
	cancel := p.OnProcess(func(pkg string, alive bool) { evts = append(evts, fmt.Sprintf("%s=%t", pkg, alive)) })
	defer cancel()
	launch(t, p, soloPiPackage)
	mustSh(t, p, "am force-stop com.alipay.hulu")
	want := []string{"com.alipay.hulu=true", "com.alipay.hulu=false"}
	if !reflect.DeepEqual(evts, want) {
		t.Errorf("events = %v, want %v", evts, want)
	}
}

func TestInstallCustomApp(t *testing.T) {
	t.Parallel()
	spec, err := appspec.LoadApp([]byte(`{"package":"org.test.toggle","label":"Toggle","launcherActivity":".Main",
		"vars":{"on":false},
		"screens":[{"activity":".Main","root":{"children":[
		  {"class":"android.widget.Switch","id":"toggle","text":"off","clickable":true,"bounds":[0,300,1080,500],"when":{"var":"on","eq":"false"},
		   "onClick":[{"set":"on","value":"true"}]},
		  {"class":"android.widget.Switch","id":"toggle","text":"on","clickable":true,"bounds":[0,300,1080,500],"when":{"not":{"var":"on","eq":"false"}},
		   "onClick":[{"set":"on","value":"false"}]}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPhone(t)
	if err := p.InstallApp(spec); err != nil {
		t.Fatal(err)
	}
	launch(t, p, "org.test.toggle")
	for _, want := range []string{"on", "off", "on"} {
		tapNode(t, p, byID(t, p, "toggle"))
		if got := byID(t, p, "toggle").Text; got != want {
			t.Fatalf("toggle = %q, want %q", got, want)
		}
	}
	if err := p.UninstallApp("org.test.toggle"); err != nil {
		t.Fatal(err)
	}
	if p.IsInstalled("org.test.toggle") {
		t.Error("still installed")
	}
	if pkg, _ := p.Foreground(); pkg != launcherPackage {
		t.Errorf("foreground after uninstall = %s", pkg)
	}
}

func TestScreenScaling(t *testing.T) {
	t.Parallel()
	p := New(Config{Width: 720, Height: 1560}, nil)
	launch(t, p, "com.example.counter")
	b := byID(t, p, "reset_button").Bounds
	if b != (ui.Rect{Left: 80, Top: 746, Right: 346, Bottom: 860}) {
		t.Errorf("scaled bounds = %v", b)
	}
	tapNode(t, p, byID(t, p, "increment_button"))
	if byID(t, p, "counter_value").Text != "1" {
		t.Error("tap on a scaled screen missed")
	}
	if w, h := p.ScreenSize(); w != 720 || h != 1560 {
		t.Errorf("ScreenSize = %dx%d", w, h)
	}
}
