package inspector

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/internal/browsertest"
)

// Chromium drives the inspector as a person would: it hovers the +1
// button (highlighted, described), clicks it (selector, steps and
// checkpoint shown), copies the selector, then records reset, +1, +1 and
// an assert on the counter with the page's buttons. The file the page
// wrote replays and passes on the same phone.
func TestBrowserHoverClickCopyRecordReplay(t *testing.T) {
	t.Parallel()
	chromium := browsertest.Start(t)
	p := newPhone(t)
	file := filepath.Join(t.TempDir(), "browser-recorded.json")
	r := serve(t, p, file)
	pg := browsertest.Open(t, chromium, r.url, 1280, 900)
	ctx, cancel := context.WithTimeout(pg.Ctx, 120*time.Second)
	defer cancel()
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	waitFor := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			t.Fatalf("waiting for %s (%s): %v", what, expr, err)
		}
	}
	text := func(id string) string {
		return browsertest.Eval[string](t, pg, `document.getElementById(`+quote(id)+`).textContent`)
	}
	// center is the middle of the overlay box whose node description
	// contains want, in page pixels.
	center := func(want string) (float64, float64) {
		t.Helper()
		waitFor("a node "+want, `Array.from(document.querySelectorAll("#overlay .node")).some(d => d.title.includes(`+quote(want)+`)) && document.getElementById("screen").naturalWidth > 0`)
		xy := browsertest.Eval[[]float64](t, pg, `(() => { const d = Array.from(document.querySelectorAll("#overlay .node")).find(d => d.title.includes(`+quote(want)+`));
			const b = d.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()`)
		return xy[0], xy[1]
	}
	pick := func(want string) {
		t.Helper()
		x, y := center(want)
		run("click "+want, chromedp.MouseClickXY(x, y))
		waitFor("the panel of "+want, `!document.getElementById("panel").hidden && document.getElementById("step-click").textContent.includes(`+quote(strings.Split(want, " ")[0])+`)`)
	}

	// Hover.
	x, y := center("increment_button")
	run("hover", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
	waitFor("the highlight", `document.querySelector("#overlay .node.hover") !== null && document.querySelector("#overlay .node.hover").title.includes("increment_button")`)
	if info := text("hover-info"); !strings.Contains(info, "resourceId="+counterPkg+":id/increment_button") {
		t.Fatalf("hover info %q", info)
	}

	// Click: the selector, the steps and the checkpoint.
	pick("increment_button")
	if sel := text("selector"); !strings.Contains(sel, `"resourceId": "`+counterPkg+`:id/increment_button"`) {
		t.Fatalf("selector %s", sel)
	}
	for id, want := range map[string]string{"step-click": `"actionEnum": "CLICK"`, "step-input": `"actionEnum": "INPUT"`,
		"step-assert": `"assertInputContent": "+1"`, "checkpoint": `"operator": "equals"`, "requirement-step": `"type": "click"`} {
		if got := text(id); !strings.Contains(got, want) || !strings.Contains(got, "increment_button") {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}

	// Copy: the clipboard holds the selector afterwards. The grant is the
	// test's own browser context's.
	bc := chromedp.FromContext(pg.Ctx)
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := cdp.Call(ctx, bc.Browser, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: perm}, Setting: browser.PermissionSettingGranted, Origin: r.base,
			BrowserContextID: bc.BrowserContextID}); err != nil {
			t.Fatalf("grant %s: %v", perm, err)
		}
	}
	run("copy", chromedp.Click(chromedp.CSS(`button[data-copy="selector"]`)))
	waitFor("the copy", `document.getElementById("copied").textContent === "copied: selector"`)
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil || clip != text("selector") {
		t.Fatalf("the clipboard holds %q (%v), want the selector %q", clip, err, text("selector"))
	}

	// Record three clicks and an assert.
	record := func(want, button string, n int) {
		t.Helper()
		pick(want)
		run("press "+button, chromedp.Click(chromedp.CSS("#"+button)))
		waitFor("recorded step "+itoa(n), `document.querySelectorAll("#rec-log li.recorded").length === `+itoa(n)+` || document.getElementById("error").textContent !== ""`)
		if e := text("error"); e != "" {
			t.Fatalf("recording %s: %s", want, e)
		}
	}
	record("reset_button", "rec-click", 1)
	record("increment_button", "rec-click", 2)
	waitFor("the counter at 1", `Array.from(document.querySelectorAll("#overlay .node")).some(d => d.title.includes('counter_value text="1"'))`)
	record("increment_button", "rec-click", 3)
	waitFor("the counter at 2", `Array.from(document.querySelectorAll("#overlay .node")).some(d => d.title.includes('counter_value text="2"'))`)
	record(`counter_value text="2"`, "rec-assert", 4)
	if broken := browsertest.BrokenImages(t, pg); len(broken) > 0 {
		t.Errorf("broken images: %v", broken)
	}
	browsertest.Screenshot(t, pg, "inspector-recorded")
	for _, u := range pg.Requests() {
		if !strings.HasPrefix(u, r.base+"/") {
			t.Errorf("the page requested %s, outside the inspector", u)
		}
	}

	res := r.stop()
	if res.Recording.StepsAdded != 4 {
		t.Fatalf("recording %+v", res.Recording)
	}
	c := loadCase(t, file)
	var enums []string
	for _, s := range c.Steps {
		enums = append(enums, s.Method.ActionEnum)
	}
	if strings.Join(enums, ",") != "CLICK,CLICK,CLICK,ASSERT" {
		t.Fatalf("recorded %v", enums)
	}
	waitFor("the page to say it stopped", `document.getElementById("status").textContent === "the inspector has stopped" || document.getElementById("status").textContent.startsWith("disconnected")`)
	replayFile(t, p, file)
}

func quote(s string) string {
	b := strings.Builder{}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
