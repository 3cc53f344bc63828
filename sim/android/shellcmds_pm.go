package android

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/sim/android/ui"
)

func pmCommands() map[string]shellCmd {
	return map[string]shellCmd{"pm": cmdPm, "cmd": cmdCmd, "dumpsys": cmdDumpsys}
}

// apkPath is where the package manager reports an app's base APK.
func apkPath(pkg string, system bool) string {
	if system {
		return "/system/priv-app/" + pkg + "/" + pkg + ".apk"
	}
	return "/data/app/" + pkg + "-1/base.apk"
}

func cmdCmd(sc *shellCtx, args []string) int {
	if len(args) == 0 {
		sc.Errf("cmd: No service specified; use -l to list all running services. Use -w to start and wait for a service.\n")
		return 255
	}
	switch args[0] {
	case "package":
		return cmdPm(sc, args[1:])
	case "activity":
		return cmdAm(sc, args[1:])
	case "input":
		return cmdInput(sc, args[1:])
	case "input_method":
		return cmdIme(sc, args[1:])
	case "settings":
		return cmdSettings(sc, args[1:])
	case "window":
		return cmdWm(sc, args[1:])
	}
	sc.Errf("cmd: Can't find service: %s\n", args[0])
	return 20
}

func cmdPm(sc *shellCtx, args []string) int {
	if len(args) == 0 {
		sc.Errf("Package manager (package) commands:\n  path PACKAGE\n  list packages [-f] [-s] [-3] [FILTER]\n  resolve-activity [--brief] INTENT\n  clear PACKAGE\n")
		return 1
	}
	p := sc.p
	apps := p.Apps()
	find := func(pkg string) (appInfo, bool) {
		for _, a := range apps {
			if a.Package == pkg {
				return a, true
			}
		}
		return appInfo{}, false
	}
	switch args[0] {
	case "path":
		rest := skipUser(args[1:])
		if len(rest) != 1 {
			sc.Errf("Error: no package specified\n")
			return 1
		}
		a, ok := find(rest[0])
		if !ok {
			return 1 // the real pm prints nothing and fails
		}
		sc.Outf("package:%s\n", apkPath(a.Package, a.System))
		return 0
	case "list":
		if len(args) < 2 || args[1] != "packages" {
			sc.Errf("Error: unknown list type '%s'\n", strings.Join(args[1:], " "))
			return 1
		}
		var showPath, sysOnly, thirdOnly bool
		filter := ""
		for _, a := range skipUser(args[2:]) {
			switch a {
			case "-f":
				showPath = true
			case "-s":
				sysOnly = true
			case "-3":
				thirdOnly = true
			case "-e", "-d", "-i", "-u", "-U", "--show-versioncode":
			default:
				filter = a
			}
		}
		for _, a := range apps {
			if sysOnly && !a.System || thirdOnly && a.System || !strings.Contains(a.Package, filter) {
				continue
			}
			if showPath {
				sc.Outf("package:%s=%s\n", apkPath(a.Package, a.System), a.Package)
			} else {
				sc.Outf("package:%s\n", a.Package)
			}
		}
		return 0
	case "resolve-activity":
		return pmResolve(sc, args[1:])
	case "clear":
		rest := skipUser(args[1:])
		if len(rest) != 1 {
			sc.Errf("Error: no package specified\n")
			return 1
		}
		if err := p.ClearData(rest[0]); err != nil {
			sc.Outf("Failed\n")
			return 1
		}
		sc.Outf("Success\n")
		return 0
	case "grant", "revoke", "enable", "disable", "disable-user", "hide", "unhide":
		rest := skipUser(args[1:])
		if len(rest) == 0 {
			sc.Errf("Error: no package specified\n")
			return 1
		}
		if _, ok := find(rest[0]); !ok {
			sc.Errf("Exception occurred while executing '%s':\njava.lang.IllegalArgumentException: Unknown package: %s\n", args[0], rest[0])
			return 255
		}
		return 0
	case "dump":
		if len(args) < 2 {
			return 1
		}
		return dumpPackage(sc, args[1])
	}
	sc.Errf("Unknown command: %s\n", args[0])
	return 255
}

func skipUser(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--user" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// pmResolve is `cmd package resolve-activity [--brief] [-a A] [-c C] [pkg]`.
func pmResolve(sc *shellCtx, args []string) int {
	brief := false
	var in Intent
	pkg := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--brief":
			brief = true
		case "--components", "--query-flags":
		case "-a", "-c", "-d", "-n", "--user":
			if i+1 >= len(args) {
				sc.Errf("Error: Argument expected after \"%s\"\n", a)
				return 1
			}
			switch a {
			case "-a":
				in.Action = args[i+1]
			case "-c":
				in.Categories = append(in.Categories, args[i+1])
			case "-d":
				in.Data = args[i+1]
			case "-n":
				in.Component = args[i+1]
			}
			i++
		default:
			pkg = a
		}
	}
	p := sc.p
	var rpkg, rcls string
	var err error
	p.view(func() {
		if pkg != "" && in.Component == "" {
			// Restricting to a package: look only at that app.
			a := p.apps[pkg]
			if a == nil {
				err = errUnresolved
				return
			}
			if in.Action == actionMain && slices.Contains(in.Categories, categoryLauncher) && in.Data == "" {
				if a.spec.LauncherActivity == "" {
					err = errUnresolved
					return
				}
				rpkg, rcls = pkg, a.spec.LauncherActivity
				return
			}
			rpkg, rcls, err = p.resolveInLocked(in, pkg)
			return
		}
		rpkg, rcls, err = p.resolveLocked(in)
	})
	if err != nil {
		sc.Outf("No activity found\n")
		return 0
	}
	if brief {
		sc.Outf("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n%s/%s\n", rpkg, rcls)
		return 0
	}
	sc.Outf("Activity Resolver Table:\n  ActivityInfo:\n    name=%s\n    packageName=%s\n    enabled=true exported=true directBootAware=false\n", rcls, rpkg)
	return 0
}

func cmdDumpsys(sc *shellCtx, args []string) int {
	if len(args) == 0 {
		sc.Outf("Currently running services:\n  activity\n  input_method\n  package\n  window\n")
		return 0
	}
	switch args[0] {
	case "window":
		return dumpWindow(sc)
	case "activity":
		return dumpActivity(sc)
	case "input_method":
		p := sc.p
		sc.locked(func() {
			sc.Outf("Current Input Method Manager state:\n  mCurMethodId=%s\n  mCurFocusedWindowPackage=%s\n  mInputShown=%t\n  mShowRequested=%t\n",
				p.ime.current, p.focus.pkg, p.ime.shown, p.ime.shown)
		})
		return 0
	case "package":
		if len(args) < 2 {
			return 0
		}
		return dumpPackage(sc, args[1])
	}
	sc.Outf("Can't find service: %s\n", args[0])
	return 0
}

func dumpPackage(sc *shellCtx, pkg string) int {
	a, ok := sc.p.App(pkg)
	if !ok {
		sc.Outf("Unable to find package: %s\n", pkg)
		return 0
	}
	sc.Outf("Packages:\n  Package [%s] (%x):\n    versionCode=%d minSdk=21 targetSdk=%d\n    versionName=%s\n    codePath=%s\n",
		a.Package, hash32(a.Package), a.VersionCode, sc.p.cfg.SDK, a.VersionName, strings.TrimSuffix(apkPath(a.Package, a.System), "/base.apk"))
	return 0
}

// dumpWindow prints the parts of `dumpsys window` hosts parse, above all
// mCurrentFocus=Window{<hash> u0 pkg/cls}.
func dumpWindow(sc *shellCtx) int {
	p := sc.p
	sc.locked(func() {
		lws := p.liveWindowsLocked()
		sc.Outf("WINDOW MANAGER WINDOWS (dumpsys window windows)\n")
		var focus string
		for i, lw := range lws {
			title := lw.w.Package
			switch lw.w.Kind {
			case ui.WindowStatusBar:
				title = "StatusBar"
			case ui.WindowIME:
				title = "InputMethod"
			case ui.WindowApp:
				title = lw.w.Package + "/" + lw.w.Activity
			}
			win := fmt.Sprintf("Window{%x u0 %s}", hash32(title)&0xfffffff, title)
			if lw.w.Kind == ui.WindowApp {
				focus = win
			}
			sc.Outf("  Window #%d %s:\n    mDisplayId=0 rootTaskId=1 mSession=Session{%x}\n    mOwnerUid=%d showForAllUsers=false package=%s\n    mFrame=%s\n",
				len(lws)-1-i, win, hash32(title+"s")&0xfffffff, 10000+int(hash32(lw.w.Package)%400), lw.w.Package, lw.w.Bounds)
		}
		sc.Outf("\nWINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0 rootTasks=%d\n    init=%dx%d %ddpi cur=%dx%d\n",
			len(p.tasks), p.cfg.Width, p.cfg.Height, p.cfg.Density, p.cfg.Width, p.cfg.Height)
		pkg, act := p.foregroundLocked()
		if focus != "" {
			sc.Outf("  mCurrentFocus=%s\n", focus)
			sc.Outf("  mFocusedApp=ActivityRecord{%x u0 %s t%d}\n", hash32(pkg+act)&0xfffffff, shortComponent(pkg, act), p.topTaskLocked().id)
		} else {
			sc.Outf("  mCurrentFocus=null\n  mFocusedApp=null\n")
		}
		sc.Outf("  mInputMethodWindow=%s\n", map[bool]string{true: "Window{ime u0 InputMethod}", false: "null"}[p.ime.shown])
	})
	return 0
}

func dumpActivity(sc *shellCtx) int {
	p := sc.p
	sc.locked(func() {
		sc.Outf("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n")
		for i := len(p.tasks) - 1; i >= 0; i-- {
			t := p.tasks[i]
			pid := 0
			if a := p.apps[t.pkg]; a != nil {
				pid = a.pid
			}
			sc.Outf("  TASK id=%d userId=0 pkg=%s\n", t.id, t.pkg)
			for j := len(t.stack) - 1; j >= 0; j-- {
				r := t.stack[j]
				sc.Outf("    ACTIVITY %s %x pid=%d\n", shortComponent(t.pkg, r.activity), r.hash&0xfffffff, pid)
			}
		}
		if t := p.topTaskLocked(); t != nil {
			r := t.top()
			sc.Outf("  mResumedActivity: ActivityRecord{%x u0 %s t%d}\n", r.hash&0xfffffff, shortComponent(t.pkg, r.activity), t.id)
		}
		running := slices.Sorted(maps.Keys(p.apps))
		sc.Outf("PROCESSES\n")
		for _, pkg := range running {
			if a := p.apps[pkg]; a.running {
				sc.Outf("  ProcessRecord{%x %d:%s/u0a%d}\n", hash32(pkg)&0xfffffff, a.pid, pkg, 100+a.pid%400)
			}
		}
	})
	return 0
}
