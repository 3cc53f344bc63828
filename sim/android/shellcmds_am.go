package android

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

func amCommands() map[string]shellCmd {
	return map[string]shellCmd{"am": cmdAm, "monkey": cmdMonkey}
}

// amException prints what `cmd activity` prints when a command throws.
func amException(sc *shellCtx, sub, format string, a ...any) int {
	sc.Errf("Exception occurred while executing '%s':\njava.lang.IllegalArgumentException: %s\n", sub, fmt.Sprintf(format, a...))
	return 255
}

func cmdAm(sc *shellCtx, args []string) int {
	if len(args) == 0 {
		sc.Errf("Activity manager (activity) commands:\n  start [-W] [-S] [-R COUNT] [-n COMPONENT] [-a ACTION] [-d DATA] ...\n  force-stop PACKAGE\n  broadcast [-a ACTION] [--es KEY VALUE] ...\n")
		return 1
	}
	switch args[0] {
	case "start", "start-activity":
		return amStart(sc, args[1:])
	case "force-stop", "kill":
		var pkg string
		for i := 1; i < len(args); i++ {
			if args[i] == "--user" {
				i++
				continue
			}
			pkg = args[i]
		}
		if pkg == "" {
			return amException(sc, args[0], "Argument expected after \"%s\"", args[0])
		}
		if args[0] == "force-stop" {
			// Unknown packages are silently ignored, as on a device.
			_ = sc.p.ForceStop(pkg)
		}
		return 0
	case "broadcast":
		return amBroadcast(sc, args[1:])
	case "get-current-user":
		sc.Outf("0\n")
		return 0
	default:
		sc.Errf("Unknown command: %s\n", args[0])
		return 255
	}
}

// amOpts is the parsed option set of am start / am broadcast.
type amOpts struct {
	in     Intent
	wait   bool
	stop   bool
	repeat int
}

// valued lists the am options that take one or two values.
var amValued = map[string]int{
	"-a": 1, "-d": 1, "-t": 1, "-c": 1, "-n": 1, "-f": 1, "-p": 1, "--user": 1, "-R": 1, "-P": 1,
	"--start-profiler": 1, "--sampling": 1, "--attach-agent": 1, "--attach-agent-bind": 1,
	"--windowingMode": 1, "--activityType": 1, "--display": 1, "--task": 1, "--esn": 1,
	"--receiver-permission": 1, "-e": 2, "--es": 2, "--ez": 2, "--ei": 2, "--el": 2, "--ef": 2,
	"--ed": 2, "--eu": 2, "--ecn": 2, "--eia": 2, "--ela": 2, "--efa": 2, "--esa": 2, "--eial": 2,
	"--elal": 2, "--efal": 2, "--esal": 2,
}

func parseAmOpts(sub string, args []string) (amOpts, error) {
	o := amOpts{repeat: 1, in: Intent{Extras: map[string]string{}}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		n, valued := amValued[a]
		if valued && i+n >= len(args) {
			return o, fmt.Errorf("Argument expected after \"%s\"", a)
		}
		switch {
		case a == "-W":
			o.wait = true
		case a == "-S":
			o.stop = true
		case a == "-D" || a == "-N" || a == "--streaming" || a == "--track-allocation" ||
			strings.HasPrefix(a, "--activity-") || strings.HasPrefix(a, "--receiver-") && !valued ||
			a == "--grant-read-uri-permission" || a == "--grant-write-uri-permission" ||
			a == "--include-stopped-packages" || a == "--exclude-stopped-packages" ||
			a == "--debug-log-resolution" || a == "--async" || a == "--allow-background-activity-starts":
			if a == "--activity-clear-top" {
				o.in.Flags |= 0x04000000
			}
		case a == "-a":
			o.in.Action = args[i+1]
		case a == "-d":
			o.in.Data = args[i+1]
		case a == "-t":
			o.in.Type = args[i+1]
		case a == "-c":
			o.in.Categories = append(o.in.Categories, args[i+1])
		case a == "-n":
			pkg, cls, ok := splitComponent(args[i+1])
			if !ok {
				return o, fmt.Errorf("Bad component name: %s", args[i+1])
			}
			o.in.Component = pkg + "/" + cls
		case a == "-f":
			v, err := strconv.ParseInt(args[i+1], 0, 64)
			if err != nil {
				return o, fmt.Errorf("Invalid flags: %s", args[i+1])
			}
			o.in.Flags |= int(v)
		case a == "-R":
			v, err := strconv.Atoi(args[i+1])
			if err != nil || v < 1 {
				return o, fmt.Errorf("Invalid repeat count: %s", args[i+1])
			}
			o.repeat = v
		case a == "--esn":
			o.in.Extras[args[i+1]] = ""
		case a == "--ez":
			v := strings.ToLower(args[i+2])
			if v != "true" && v != "false" && v != "t" && v != "f" && v != "1" && v != "0" {
				return o, fmt.Errorf("Invalid boolean value: %s", args[i+2])
			}
			o.in.Extras[args[i+1]] = strconv.FormatBool(v == "true" || v == "t" || v == "1")
		case a == "--ei" || a == "--el":
			if _, err := strconv.ParseInt(args[i+2], 10, 64); err != nil {
				return o, fmt.Errorf("For input string: \"%s\"", args[i+2])
			}
			o.in.Extras[args[i+1]] = args[i+2]
		case valued && n == 2:
			o.in.Extras[args[i+1]] = args[i+2]
		case valued:
			// accepted and ignored: profiling, users, displays, windowing
		case strings.HasPrefix(a, "-"):
			return o, fmt.Errorf("Unknown option: %s", a)
		default:
			// A trailing argument is an intent URI, a component or a package.
			switch {
			case strings.Contains(a, "/") && !strings.Contains(a, ":"):
				pkg, cls, ok := splitComponent(a)
				if !ok {
					return o, fmt.Errorf("Bad component name: %s", a)
				}
				o.in.Component = pkg + "/" + cls
			case strings.Contains(a, ":"):
				o.in.Data = a
				if o.in.Action == "" {
					o.in.Action = actionView
				}
			default:
				o.in.Component = ""
				return o, fmt.Errorf("Unknown option: %s", a)
			}
		}
		if valued {
			i += n
		}
	}
	if len(o.in.Extras) == 0 {
		o.in.Extras = nil
	}
	return o, nil
}

// jitterMs is the deterministic jitter sequence of launch times, in
// per-mille of the base cost; it makes repeated measurements vary
// plausibly while staying reproducible.
var jitterMs = [...]int{0, 42, -23, 77, -51, 18, 110, -35, 57, -12, 29, -68, 93, 6, -41, 64}

func (p *Phone) launchTimesLocked(cost int) (this, total, wait int) {
	seq := p.launchSeq
	p.launchSeq++
	total = max(1, cost+cost*jitterMs[seq%len(jitterMs)]/1000)
	this = max(1, total-seq%4)
	wait = total + 3 + seq%9
	return this, total, wait
}

func amStart(sc *shellCtx, args []string) int {
	o, err := parseAmOpts("start", args)
	if err != nil {
		return amException(sc, "start", "%v", err)
	}
	p := sc.p
	for iter := 0; iter < o.repeat; iter++ {
		if o.stop {
			pkg, _, ok := splitComponent(o.in.Component)
			if !ok {
				p.view(func() { pkg, _, _ = p.resolveLocked(o.in) })
			}
			if pkg != "" {
				sc.Outf("Stopping: %s\n", pkg)
				_ = p.ForceStop(pkg)
				// ActivityManagerShellCommand sleeps 250 ms after the stop.
				if err := p.clk.Sleep(sc.Ctx, 250*time.Millisecond); err != nil {
					return 130
				}
			}
		}
		sc.Outf("Starting: Intent { %s }\n", intentBody(o.in, true))
		var res launchResult
		var this, total, wait int
		err := p.update(func() error {
			var err error
			if res, err = p.startLocked(o.in); err == nil {
				this, total, wait = p.launchTimesLocked(res.costMs)
			}
			return err
		})
		out := sc.Stderr
		if o.wait {
			out = sc.Stdout // am -W prints results and errors on stdout
		}
		switch {
		case errors.Is(err, errClassNotFound):
			pkg, cls, _ := splitComponent(o.in.Component)
			fmt.Fprintf(out, "Error type 3\nError: Activity class {%s/%s} does not exist.\n", pkg, cls)
			return 1
		case err != nil:
			// The error shows the intent after am added FLAG_ACTIVITY_NEW_TASK.
			shown := o.in
			shown.Flags |= flagNewTask
			fmt.Fprintf(out, "Error: Activity not started, unable to resolve Intent { %s }\n", intentBody(shown, true))
			return 1
		}
		if res.warning != "" {
			fmt.Fprintln(out, res.warning)
		}
		if res.handler != nil {
			if herr := res.handler(sc.Ctx, o.in); herr != nil {
				var f *amFailure
				if errors.As(herr, &f) {
					sc.Outf("%s", f.Output)
					if !strings.HasSuffix(f.Output, "\n") {
						sc.Outf("\n")
					}
					return f.Code
				}
				// The real activity only logs its result.
				p.LogApp(res.pkg, 'W', "SchemeActivity", fmt.Sprintf("scheme handling failed: %v", herr))
			}
		}
		if o.wait {
			if err := p.clk.Sleep(sc.Ctx, time.Duration(wait)*time.Millisecond); err != nil {
				return 130
			}
			sc.Outf("Status: ok\n")
			if p.cfg.SDK >= 29 {
				sc.Outf("LaunchState: %s\n", res.state)
			}
			sc.Outf("Activity: %s\n", shortComponent(res.pkg, res.cls))
			if p.cfg.SDK < 36 {
				sc.Outf("ThisTime: %d\n", this)
			}
			sc.Outf("TotalTime: %d\nWaitTime: %d\nComplete\n", total, wait)
		}
		p.LogApp(res.pkg, 'I', "ActivityTaskManager", fmt.Sprintf("Displayed %s: +%dms", shortComponent(res.pkg, res.cls), total))
		if iter+1 < o.repeat {
			// `am start -R` presses an unhandled BACK between repeats.
			_ = p.update(func() error { p.finishTopLocked(); return nil })
		}
	}
	return 0
}

func amBroadcast(sc *shellCtx, args []string) int {
	o, err := parseAmOpts("broadcast", args)
	if err != nil {
		return amException(sc, "broadcast", "%v", err)
	}
	o.in.Flags |= 0x400000 // FLAG_RECEIVER_FOREGROUND, as am adds
	sc.Outf("Broadcasting: Intent { %s }\n", intentBody(o.in, true))
	sc.p.adbKeyboard(o.in)
	sc.Outf("Broadcast completed: result=0\n")
	return 0
}

// adbKeyboard is the ADB keyboard's broadcast receiver: it edits the
// focused field only while it is the current input method.
func (p *Phone) adbKeyboard(in Intent) {
	_ = p.update(func() error {
		if p.ime.current != adbIME || p.apps["com.android.adbkeyboard"] == nil {
			return nil
		}
		switch in.Action {
		case "ADB_INPUT_TEXT":
			p.typeLocked(in.Extras["msg"])
		case "ADB_INPUT_B64":
			if b, err := base64.StdEncoding.DecodeString(in.Extras["msg"]); err == nil {
				p.typeLocked(string(b))
			}
		case "ADB_INPUT_CHARS":
			var s strings.Builder
			for _, c := range strings.Split(in.Extras["chars"], ",") {
				if v, err := strconv.Atoi(strings.TrimSpace(c)); err == nil {
					s.WriteRune(rune(v))
				}
			}
			p.typeLocked(s.String())
		case "ADB_CLEAR_TEXT":
			if a := p.focusedAppLocked(); a != nil {
				a.fields[p.focus.field] = ""
				p.afterInputLocked(a)
			}
		case "ADB_INPUT_CODE":
			if v, err := strconv.Atoi(in.Extras["code"]); err == nil {
				switch {
				case v == keycodeDel:
					p.deleteCharLocked()
				case v == keycodeEnter:
					p.enterLocked()
				case keyChars[v] != "":
					p.typeLocked(keyChars[v])
				}
			}
		case "ADB_EDITOR_CODE":
			p.enterLocked()
		}
		return nil
	})
}

func cmdMonkey(sc *shellCtx, args []string) int {
	var pkgs, cats []string
	count := 0
	for i := 0; i < len(args); i++ {
		sc.Outf("  bash arg: %s\n", args[i])
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "-p" || a == "-c" || a == "-s" || a == "--throttle" || a == "--pct-touch" || a == "--pct-motion") && i+1 < len(args):
			if a == "-p" {
				pkgs = append(pkgs, args[i+1])
			} else if a == "-c" {
				cats = append(cats, args[i+1])
			}
			i++
		case a == "-v" || strings.HasPrefix(a, "--ignore"):
		default:
			v, err := strconv.Atoi(a)
			if err != nil || v < 0 {
				sc.Errf("** Error: Invalid argument: %s\n", a)
				return 1
			}
			count = v
		}
	}
	p := sc.p
	var target string
	p.view(func() {
		for _, pkg := range pkgs {
			a := p.apps[pkg]
			if a != nil && a.spec.LauncherActivity != "" && (len(cats) == 0 || slices.Contains(cats, categoryLauncher)) {
				target = pkg
				return
			}
		}
	})
	if target == "" {
		sc.Outf("** No activities found to run, monkey aborted.\n")
		return 252
	}
	if count > 0 {
		if err := p.LaunchApp(target); err != nil {
			sc.Outf("** No activities found to run, monkey aborted.\n")
			return 252
		}
	}
	sc.Outf("Events injected: %d\n", count)
	sc.Outf("## Network stats: elapsed time=%dms (0ms mobile, 0ms wifi, %dms not connected)\n", 12+count, 12+count)
	return 0
}
