package soloapp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// replayLog collects running.log lines; it is written with the result.
type replayLog struct {
	a     *App
	lines []string
}

func (l *replayLog) printf(format string, args ...any) {
	ts := l.a.Clk.Now().Format("2006-01-02 15:04:05.000")
	l.lines = append(l.lines, ts+" I/Replay: "+fmt.Sprintf(format, args...))
}

// stepFailure is a failed step: its message becomes exceptionMessage.
type stepFailure struct{ msg string }

func (e *stepFailure) Error() string { return e.msg }

func fail(format string, args ...any) error { return &stepFailure{msg: fmt.Sprintf(format, args...)} }

// executeReplay runs the case's decrypted steps against the phone and builds
// the results[] element (docs/device-protocol.md#harness). A cancelled ctx
// stops between and inside steps; the caller then publishes cancelled.
func (a *App) executeReplay(ctx context.Context, run *harnessRun, snap *caseSnapshot, app core.AppInfo, label string, restart bool) core.Obj {
	log := &replayLog{a: a}
	start := a.NowMs()
	shots := map[string][]byte{}
	log.printf("start replay of case %s (run %s) on %s", snap.row.name, run.runID, app.Package)
	a.Mu.Lock()
	maxWait := time.Duration(a.IntSetting(core.KeyMaxWaitTime)) * time.Millisecond
	root := a.SolopiDirLocked()
	a.Mu.Unlock()
	if restart {
		_ = a.Phone.ForceStop(app.Package)
	}
	var failure error
	failIndex := -1
	if err := a.Phone.LaunchApp(app.Package); err != nil {
		failure, failIndex = fail("Unable to launch target application: %v", err), 0
	}
	for i := 0; failure == nil && i < len(snap.steps); i++ {
		s := snap.steps[i]
		log.printf("step %d (%s) %s", i, s.StepID, s.Method.ActionEnum)
		var err error
		if i == 0 {
			err = a.takeInjectedFailure(snap.row.name)
		}
		if err == nil {
			err = a.runStep(ctx, s, maxWait, shots, i)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			failure, failIndex = err, i
			log.printf("step %d failed: %v", i, err)
		}
	}
	end := a.NowMs()
	if failure != nil {
		if png, err := a.Phone.Screenshot(); err == nil {
			shots[fmt.Sprintf("failure-step-%d", failIndex)] = png
		}
	}
	dir := fmt.Sprintf("%s/replay/%s_%d", root, sanitizeName(snap.row.name), end)
	_ = a.Phone.MkdirAll(dir)
	files := map[string]string{}
	for name, png := range shots {
		p := dir + "/" + sanitizeName(name) + ".png"
		if a.Phone.WriteFile(p, png) == nil {
			files[name] = p
		}
	}
	if failure == nil {
		log.printf("replay passed")
	} else {
		log.printf("replay failed at step %d: %v", failIndex, failure)
	}
	logFile := dir + "/running.log"
	_ = a.Phone.WriteFile(logFile, []byte(strings.Join(log.lines, "\n")+"\n"))

	o := core.NewObj("caseName", snap.row.name, "status", "passed", "targetApp", label,
		"targetAppPackage", app.Package, "targetAppVersion", app.VersionName,
		"startTime", start, "endTime", end)
	if failure != nil {
		o.Set("status", "failed")
		o.Set("exceptionMessage", failure.Error())
		o.Set("exceptionStep", failIndex)
		if failIndex >= 0 && failIndex < len(snap.steps) {
			if id := stepIdentity(snap.steps[failIndex]); id != "" {
				o.Set("exceptionStepId", id)
			}
		}
	}
	o.Set("logFile", logFile)
	o.Set("screenshotFiles", files)
	o.Set("platform", "Android")
	o.Set("platformVersion", a.Cfg.Device.AndroidVersion)
	// The saved info.json names the package targetAppPkg (the history
	// resolver's summary copies that key); the harness result keeps
	// targetAppPackage.
	info := o.Clone()
	info.Set("targetAppPkg", app.Package)
	_ = a.Phone.WriteFile(dir+"/info.json", core.Encode(info, false))
	return o
}

// stepIdentity is the id a failed step is reported under: stepId, else
// operationId.
func stepIdentity(s casefile.Step) string {
	if s.StepID != "" {
		return s.StepID
	}
	return s.OperationID
}

// sanitizeName keeps a file name component safe on the device FS.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, s)
}

// runStep executes one PerformActionEnum step.
func (a *App) runStep(ctx context.Context, s casefile.Step, maxWait time.Duration, shots map[string][]byte, index int) error {
	param := func(k string) string { v, _ := s.Method.Param(k); return v }
	locate := func(wait time.Duration) (*core.Node, error) {
		n, err := a.waitForNode(ctx, s.Node, wait)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, fail("Target node not found: %s", describeSelector(s.Node))
		}
		return n, nil
	}
	switch act := s.Method.ActionEnum; act {
	case "CLICK", "CLICK_QUICK":
		n, err := locate(maxWait)
		if err != nil {
			return err
		}
		x, y := clickPoint(n, param("localClickPos"))
		return wrapDevice(a.Phone.Tap(x, y))
	case "CLICK_IF_EXISTS":
		n, err := a.waitForNode(ctx, s.Node, 0)
		if err != nil || n == nil {
			return err
		}
		x, y := clickPoint(n, param("localClickPos"))
		return wrapDevice(a.Phone.Tap(x, y))
	case "LONG_CLICK":
		n, err := locate(maxWait)
		if err != nil {
			return err
		}
		d := 2000 * time.Millisecond
		if ms, okN := strconv.ParseInt(param("text"), 10, 64); okN == nil && ms > 0 {
			d = time.Duration(ms) * time.Millisecond
		}
		x, y := clickPoint(n, param("localClickPos"))
		return wrapDevice(a.Phone.LongPress(x, y, d))
	case "INPUT", "CLICK_AND_INPUT", "INPUT_SEARCH":
		n, err := locate(maxWait)
		if err != nil {
			return err
		}
		x, y := n.Bounds.Centre()
		if err := a.Phone.Tap(x, y); err != nil {
			return wrapDevice(err)
		}
		// ACTION_SET_TEXT replaces the content, which is also how SoloPi
		// clears a field (there is no separate clear action in the catalog).
		if err := a.Phone.SetText(n.SourceID, param("text")); err != nil {
			return wrapDevice(err)
		}
		return wrapDevice(a.HideIME())
	case "SLEEP":
		ms, _ := strconv.ParseInt(param("text"), 10, 64)
		return a.Clk.Sleep(ctx, time.Duration(max(ms, 0))*time.Millisecond)
	case "SLEEP_UNTIL":
		wait := maxWait
		if ms, err := strconv.ParseInt(param("text"), 10, 64); err == nil && ms > 0 {
			wait = time.Duration(ms) * time.Millisecond
		}
		_, err := locate(wait)
		return err
	case "ASSERT":
		n, err := locate(maxWait)
		if err != nil {
			return err
		}
		return checkAssert(param("assertMode"), n.Text, param("assertInputContent"))
	case "BACK", "GLOBAL_BACK":
		return wrapDevice(a.Phone.KeyEvent(core.KeyCodeBack))
	case "HOME", "GLOBAL_HOME":
		return wrapDevice(a.Phone.KeyEvent(core.KeyCodeHome))
	case "SCROLL_TO_BOTTOM", "SCROLL_TO_TOP", "SCROLL_TO_LEFT", "SCROLL_TO_RIGHT":
		n, err := locate(maxWait)
		if err != nil {
			return err
		}
		return wrapDevice(a.Scroll(n.Bounds, act, scrollPercent(param("scrollDistance"), param("text"))))
	case "GLOBAL_SCROLL_TO_BOTTOM", "GLOBAL_SCROLL_TO_TOP", "GLOBAL_SCROLL_TO_LEFT", "GLOBAL_SCROLL_TO_RIGHT":
		w, h := a.Phone.ScreenSize()
		return wrapDevice(a.Scroll(core.Rect{Left: 0, Top: 0, Right: w, Bottom: h}, strings.TrimPrefix(act, "GLOBAL_"), scrollPercent(param("scrollDistance"), param("text"))))
	case "SCREENSHOT":
		png, err := a.Phone.Screenshot()
		if err != nil {
			return fail("Screenshot failed: %v", err)
		}
		name := param("text")
		if name == "" {
			name = fmt.Sprintf("step-%d", index)
		}
		shots[name] = png
		return nil
	default:
		return fail("Unsupported action in simulator: %s", act)
	}
}

func wrapDevice(err error) error {
	if err == nil {
		return nil
	}
	var sf *stepFailure
	if errors.As(err, &sf) {
		return err
	}
	return fail("Device action failed: %v", err)
}

// clickPoint honours localClickPos ("fx,fy", fractions of the node bounds).
func clickPoint(n *core.Node, pos string) (int, int) {
	if fx, fy, found := strings.Cut(pos, ","); found {
		x, errX := strconv.ParseFloat(strings.TrimSpace(fx), 64)
		y, errY := strconv.ParseFloat(strings.TrimSpace(fy), 64)
		if errX == nil && errY == nil && x >= 0 && x <= 1 && y >= 0 && y <= 1 {
			b := n.Bounds
			return b.Left + int(x*float64(b.Width())), b.Top + int(y*float64(b.Height()))
		}
	}
	return n.Bounds.Centre()
}

func scrollPercent(values ...string) int {
	for _, v := range values {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 100 {
			return n
		}
	}
	return 50
}

// checkAssert implements SoloPi's assert modes on the node text.
func checkAssert(mode, text, want string) error {
	switch mode {
	case "assert_accurate", "":
		if text != want {
			return fail("Assert failed: text %q is not %q", text, want)
		}
	case "assert_contain":
		if !strings.Contains(text, want) {
			return fail("Assert failed: text %q does not contain %q", text, want)
		}
	case "assert_regular":
		re, err := regexp.Compile(`^(?:` + want + `)$`)
		if err != nil {
			return fail("Assert failed: invalid pattern %q", want)
		}
		if !re.MatchString(text) {
			return fail("Assert failed: text %q does not match %q", text, want)
		}
	case "assert_dayu", "assert_dayuAndEqual", "assert_equal", "assert_xiaoyu", "assert_xiaoyuAndEqual":
		got, errG := strconv.ParseFloat(strings.TrimSpace(text), 64)
		exp, errE := strconv.ParseFloat(strings.TrimSpace(want), 64)
		if errG != nil || errE != nil {
			return fail("Assert failed: %q or %q is not a number", text, want)
		}
		pass := map[string]bool{
			"assert_dayu": got > exp, "assert_dayuAndEqual": got >= exp, "assert_equal": got == exp,
			"assert_xiaoyu": got < exp, "assert_xiaoyuAndEqual": got <= exp,
		}[mode]
		if !pass {
			return fail("Assert failed: %s %s %s", text, mode, want)
		}
	default:
		return fail("Assert failed: unsupported assert mode %q", mode)
	}
	return nil
}

func describeSelector(n *casefile.Node) string {
	if n == nil {
		return "(no node)"
	}
	var parts []string
	for _, f := range []struct {
		k string
		v *string
	}{{"resourceId", n.ResourceID}, {"text", n.Text}, {"description", n.Description}, {"xpath", n.XPath}, {"className", n.ClassName}} {
		if f.v != nil && *f.v != "" {
			parts = append(parts, f.k+"="+*f.v)
		}
	}
	return strings.Join(parts, ", ")
}

// waitForNode polls the replay root every 250 ms for up to wait (at least
// one look) for the node the selector describes.
func (a *App) waitForNode(ctx context.Context, sel *casefile.Node, wait time.Duration) (*core.Node, error) {
	deadline := a.Clk.Now().Add(wait)
	for {
		if n := findBySelector(a.replayRoots(), sel); n != nil {
			return n, nil
		}
		if !a.Clk.Now().Before(deadline) {
			return nil, nil
		}
		if err := a.Clk.Sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// replayRoots are the window roots a replay searches: the foreground
// page as the provider sees it (SoloPi's own windows ignored), every
// window of a multi-window page included.
func (a *App) replayRoots() []*core.Node {
	r := a.ReadRoot(true)
	if r == nil {
		return nil
	}
	return r.Roots
}

// findBySelector locates the node a recorded OperationNode describes. The
// strongest selector present picks the candidates (resourceId, text,
// description, xpath, source id, className); the others break ties.
func findBySelector(roots []*core.Node, sel *casefile.Node) *core.Node {
	if sel == nil {
		return nil
	}
	var all []core.FlatNode
	for _, r := range roots {
		all = core.Flatten(r, "", 1, all)
	}
	get := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	tests := []func(f core.FlatNode) (bool, bool){
		func(f core.FlatNode) (bool, bool) { v := get(sel.ResourceID); return v != "", f.N.ResourceID == v },
		func(f core.FlatNode) (bool, bool) { v := get(sel.Text); return v != "", f.N.Text == v },
		func(f core.FlatNode) (bool, bool) { v := get(sel.Description); return v != "", f.N.Description == v },
		func(f core.FlatNode) (bool, bool) { v := get(sel.XPath); return v != "", f.Xpath == v },
		func(f core.FlatNode) (bool, bool) {
			v := get(sel.ID)
			return v != "", strconv.FormatInt(f.N.SourceID, 10) == v
		},
		func(f core.FlatNode) (bool, bool) { v := get(sel.ClassName); return v != "", f.N.ClassName == v },
	}
	var cands []core.FlatNode
	primary := -1
	for i, t := range tests {
		if used, _ := t(core.FlatNode{N: &core.Node{}}); !used {
			continue
		}
		for _, f := range all {
			if _, match := t(f); match {
				cands = append(cands, f)
			}
		}
		primary = i
		break
	}
	if primary < 0 || len(cands) == 0 {
		return nil
	}
	for _, t := range tests[primary+1:] {
		if len(cands) == 1 {
			break
		}
		var narrowed []core.FlatNode
		for _, f := range cands {
			if used, match := t(f); !used || match {
				narrowed = append(narrowed, f)
			}
		}
		if len(narrowed) > 0 {
			cands = narrowed
		}
	}
	return cands[0].N
}
