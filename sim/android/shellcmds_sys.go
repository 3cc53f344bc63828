package android

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/sim/android/shell"
)

func sysCommands() map[string]shellCmd {
	return map[string]shellCmd{
		"getprop": cmdGetprop, "setprop": cmdSetprop, "wm": cmdWm, "screencap": cmdScreencap,
		"logcat": cmdLogcat, "getconf": cmdGetconf, "nproc": cmdNproc,
	}
}

func (p *Phone) defaultProps() map[string]string {
	c := p.cfg
	m := map[string]string{
		"ro.build.version.sdk":         strconv.Itoa(c.SDK),
		"ro.build.version.release":     c.AndroidVersion,
		"ro.build.version.incremental": "10754064",
		"ro.build.type":                "user",
		"ro.build.tags":                "release-keys",
		"ro.build.id":                  "UQ1A.240105.004",
		"ro.build.fingerprint":         fmt.Sprintf("%s/%s/%s:%s/UQ1A.240105.004/10754064:user/release-keys", c.Brand, c.Product, c.Device, c.AndroidVersion),
		"ro.product.model":             c.Model,
		"ro.product.brand":             c.Brand,
		"ro.product.manufacturer":      c.Manufacturer,
		"ro.product.name":              c.Product,
		"ro.product.device":            c.Device,
		"ro.product.cpu.abi":           "arm64-v8a",
		"ro.product.cpu.abilist":       "arm64-v8a,armeabi-v7a,armeabi",
		"ro.serialno":                  c.Serial,
		"ro.boot.serialno":             c.Serial,
		"ro.sf.lcd_density":            strconv.Itoa(c.Density),
		"ro.debuggable":                "0",
		"ro.secure":                    "1",
		"sys.boot_completed":           "1",
		"dev.bootcomplete":             "1",
		"persist.sys.locale":           "en-US",
		"persist.sys.timezone":         "UTC",
		"service.adb.root":             "0",
		"init.svc.adbd":                "running",
	}
	for k, v := range c.Props {
		m[k] = v
	}
	return m
}

// Prop returns one system property.
func (p *Phone) Prop(key string) string {
	var v string
	p.view(func() { v = p.props[key] })
	return v
}

func cmdGetprop(sc *shellCtx, args []string) int {
	p := sc.p
	sc.locked(func() {
		if len(args) == 0 {
			for _, k := range slices.Sorted(maps.Keys(p.props)) {
				sc.Outf("[%s]: [%s]\n", k, p.props[k])
			}
			return
		}
		v, ok := p.props[args[0]]
		if !ok && len(args) > 1 {
			v = args[1]
		}
		sc.Outf("%s\n", v)
	})
	return 0
}

func cmdSetprop(sc *shellCtx, args []string) int {
	if len(args) != 2 {
		sc.Errf("setprop: Need 2 arguments\n")
		return 1
	}
	if strings.HasPrefix(args[0], "ro.") {
		sc.Errf("Failed to set property '%s' to '%s'.\nSee dmesg for error reason.\n", args[0], args[1])
		return 1
	}
	sc.p.view(func() { sc.p.props[args[0]] = args[1] })
	return 0
}

func cmdWm(sc *shellCtx, args []string) int {
	c := sc.p.cfg
	if len(args) == 0 {
		sc.Errf("Window manager (window) commands:\n  size [reset|WxH]\n  density [reset|DENSITY]\n")
		return 1
	}
	switch args[0] {
	case "size":
		if len(args) == 1 {
			sc.Outf("Physical size: %dx%d\n", c.Width, c.Height)
			return 0
		}
		if args[1] == "reset" {
			return 0
		}
		// The virtual screen has a fixed size; refuse rather than pretend.
		sc.Errf("Error: the simulated display does not support a size override\n")
		return 1
	case "density":
		if len(args) == 1 {
			sc.Outf("Physical density: %d\n", c.Density)
			return 0
		}
		if args[1] == "reset" {
			return 0
		}
		sc.Errf("Error: the simulated display does not support a density override\n")
		return 1
	}
	sc.Errf("Error: unknown command '%s'\n", args[0])
	return 1
}

func cmdScreencap(sc *shellCtx, args []string) int {
	_, ops, _ := shell.SplitFlags(args, "dD")
	png, err := sc.p.ScreenshotContext(sc.Ctx)
	if err != nil {
		if sc.Ctx.Err() != nil {
			return 130
		}
		sc.Errf("Error: Capturing failed (%v)\n", err)
		return 1
	}
	if len(ops) == 0 {
		_, _ = sc.Stdout.Write(png)
		return 0
	}
	if err := sc.p.fs.WriteFile(sc.Abs(ops[0]), 0o660, time.Time{}, bytes.NewReader(png)); err != nil {
		sc.Errf("Error opening file: %s (%s)\n", ops[0], shell.ErrText(err))
		return 1
	}
	return 0
}

var logPriorities = "VDIWEFS"

// logFilter implements logcat's TAG:PRIORITY filter specs.
type logFilter struct {
	def  int
	tags map[string]int
}

func (f logFilter) allows(e logEntry) bool {
	min, ok := f.tags[e.Tag]
	if !ok {
		min = f.def
	}
	return strings.IndexByte(logPriorities, e.Level) >= min
}

func cmdLogcat(sc *shellCtx, args []string) int {
	dump, format, tail, maxCount := false, "threadtime", -1, -1
	filter := logFilter{tags: map[string]int{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if v, ok := strings.CutPrefix(a, "--"); ok && strings.Contains(v, "=") {
				return v[strings.Index(v, "=")+1:], true
			}
			if len(a) > 2 && a[0] == '-' && a[1] != '-' {
				return a[2:], true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-d":
			dump = true
		case a == "-c" || a == "--clear":
			sc.p.ClearLogcat()
			return 0
		case a == "-s":
			filter.def = strings.IndexByte(logPriorities, 'S')
		case a == "-g":
			sc.Outf("main: ring buffer is 256 KiB (%d entries max), max entry is 5120 B, max payload is 4068 B\n", sc.p.cfg.LogcatLines)
			return 0
		case strings.HasPrefix(a, "-v") || strings.HasPrefix(a, "--format"):
			v, ok := next()
			if !ok {
				sc.Errf("logcat: option requires an argument -- v\n")
				return 1
			}
			format = v
		case strings.HasPrefix(a, "-t") || strings.HasPrefix(a, "-T") || strings.HasPrefix(a, "-m") || strings.HasPrefix(a, "--max-count"):
			v, ok := next()
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 0 {
				sc.Errf("logcat: invalid count '%s'\n", v)
				return 1
			}
			if strings.HasPrefix(a, "-m") || strings.HasPrefix(a, "--max") {
				maxCount = n
			} else {
				tail = n
				dump = dump || strings.HasPrefix(a, "-t")
			}
		case strings.HasPrefix(a, "-b") || strings.HasPrefix(a, "--buffer") || strings.HasPrefix(a, "--pid"):
			_, _ = next()
		case strings.HasPrefix(a, "-"):
			sc.Errf("logcat: unknown option '%s'\n", a)
			return 1
		default:
			tag, prio, _ := strings.Cut(a, ":")
			lvl := strings.IndexByte(logPriorities, strings.ToUpper(prio + "V")[0])
			if lvl < 0 {
				sc.Errf("logcat: Invalid filter expression '%s'\n", a)
				return 1
			}
			if tag == "*" {
				filter.def = lvl
			} else {
				filter.tags[tag] = lvl
			}
		}
	}
	entries, wake := sc.p.logs.since(0)
	var shown []logEntry
	for _, e := range entries {
		if filter.allows(e) {
			shown = append(shown, e)
		}
	}
	if tail >= 0 && len(shown) > tail {
		shown = shown[len(shown)-tail:]
	}
	printed := 0
	emit := func(e logEntry) bool {
		if maxCount >= 0 && printed >= maxCount {
			return false
		}
		if printed == 0 {
			sc.Outf("--------- beginning of main\n")
		}
		sc.Outf("%s", formatLog(e, format))
		printed++
		return true
	}
	var last uint64
	for _, e := range shown {
		if !emit(e) {
			return 0
		}
	}
	if len(entries) > 0 {
		last = entries[len(entries)-1].Seq
	}
	if dump {
		return 0
	}
	// Without -d logcat follows the buffer until the client goes away.
	for {
		select {
		case <-sc.Ctx.Done():
			return 130
		case <-wake:
		}
		var more []logEntry
		more, wake = sc.p.logs.since(last)
		for _, e := range more {
			last = e.Seq
			if filter.allows(e) && !emit(e) {
				return 0
			}
		}
	}
}

func cmdGetconf(sc *shellCtx, args []string) int {
	if len(args) != 1 {
		sc.Errf("getconf: Needs 1 argument\n")
		return 1
	}
	switch args[0] {
	case "_NPROCESSORS_ONLN", "NPROCESSORS_ONLN", "_NPROCESSORS_CONF", "NPROCESSORS_CONF":
		sc.Outf("%d\n", sc.p.cfg.CPUs)
	case "PAGESIZE", "PAGE_SIZE":
		sc.Outf("4096\n")
	case "CLK_TCK":
		sc.Outf("100\n")
	default:
		sc.Errf("getconf: bad '%s'\n", args[0])
		return 1
	}
	return 0
}

func cmdNproc(sc *shellCtx, _ []string) int { sc.Outf("%d\n", sc.p.cfg.CPUs); return 0 }

// cmdEcho is toybox echo, reached only by path (/system/bin/echo); a bare
// `echo` is the shell builtin.
