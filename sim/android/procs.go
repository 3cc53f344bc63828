package android

// The shell's long-running processes (screenrecord) and the toybox commands
// that find and signal them: ps, pidof, kill, pkill. App processes have pids
// too (apps.go); the shell user may see them but not signal them.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Signal numbers the simulated commands understand.
const (
	sigHUP  = 1
	sigINT  = 2
	sigKILL = 9
	sigTERM = 15
)

var signalNames = map[string]int{"HUP": sigHUP, "INT": sigINT, "KILL": sigKILL, "TERM": sigTERM}

// shellProc is one running shell command that can be signalled.
type shellProc struct {
	pid  int
	name string
	args []string
	sig  chan int // buffered; the first signal wins, later ones are dropped
}

// procTable holds the running shellProcs; its zero value is ready to use.
type procTable struct {
	mu   sync.Mutex
	next int
	m    map[int]*shellProc
}

// start registers a process; the caller must call done when it exits.
func (t *procTable) start(name string, args []string) *shellProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m, t.next = map[int]*shellProc{}, 21000
	}
	t.next += 3
	sp := &shellProc{pid: t.next, name: name, args: slices.Clone(args), sig: make(chan int, 1)}
	t.m[sp.pid] = sp
	return sp
}

func (t *procTable) done(sp *shellProc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, sp.pid)
}

func (t *procTable) list() []*shellProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*shellProc, 0, len(t.m))
	for _, sp := range t.m {
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b *shellProc) int { return a.pid - b.pid })
	return out
}

func (sp *shellProc) cmdline() string {
	return strings.Join(append([]string{sp.name}, sp.args...), " ")
}

func (sp *shellProc) signal(n int) {
	select {
	case sp.sig <- n:
	default:
	}
}

func procCommands() map[string]shellCmd {
	return map[string]shellCmd{"kill": cmdKill, "pkill": cmdPkill, "pidof": cmdPidof, "ps": cmdPs,
		"screenrecord": cmdScreenrecord}
}

// parseSignal reads a signal given as a name (INT, SIGINT) or a number.
func parseSignal(s string) (int, bool) {
	s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if n, ok := signalNames[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n < 65
}

// appPIDs is the pids of the running app processes.
func (p *Phone) appPIDs() map[int]string {
	m := map[int]string{}
	p.view(func() {
		for pkg, a := range p.apps {
			if a.pid != 0 {
				m[a.pid] = pkg
			}
		}
	})
	return m
}

// cmdKill: kill [-s SIG | -SIG | -n NUM] PID...
func cmdKill(sc *shellCtx, args []string) int {
	sig := sigTERM
	if len(args) > 0 && args[0] == "-l" {
		sc.Outf("HUP\nINT\nKILL\nTERM\n")
		return 0
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		name := a[1:]
		if (a == "-s" || a == "-n") && len(args) > 0 {
			name, args = args[0], args[1:]
		}
		n, ok := parseSignal(name)
		if !ok {
			sc.Errf("kill: unknown signal '%s'\n", name)
			return 1
		}
		sig = n
	}
	if len(args) == 0 {
		sc.Errf("usage: kill [-l [SIGNAL...]] [-s SIGNAL|-SIGNAL] PID...\n")
		return 1
	}
	procs := sc.p.procs.list()
	apps := sc.p.appPIDs()
	rc := 0
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil {
			sc.Errf("kill: not a number: %s\n", a)
			rc = 1
			continue
		}
		i := slices.IndexFunc(procs, func(sp *shellProc) bool { return sp.pid == pid })
		switch {
		case i >= 0:
			procs[i].signal(sig)
		case apps[pid] != "":
			sc.Errf("kill: %d: Operation not permitted\n", pid)
			rc = 1
		default:
			sc.Errf("kill: %d: No such process\n", pid)
			rc = 1
		}
	}
	return rc
}

// cmdPkill: pkill [-SIG | -l SIG] [-f] [-x] PATTERN. The pattern is an
// extended regular expression matched against the name (or, with -f, the
// whole command line); -x makes it match the whole of it. Exit 1 when
// nothing matched.
func cmdPkill(sc *shellCtx, args []string) int {
	sig, full, exact := sigTERM, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		switch a {
		case "--":
		case "-f":
			full = true
			continue
		case "-x":
			exact = true
			continue
		case "-l":
			if len(args) == 0 {
				sc.Errf("pkill: -l needs a signal\n")
				return 2
			}
			a, args = "-"+args[0], args[1:]
		}
		if a == "--" {
			break
		}
		n, ok := parseSignal(a[1:])
		if !ok {
			sc.Errf("pkill: unknown signal '%s'\n", a[1:])
			return 2
		}
		sig = n
	}
	if len(args) != 1 {
		sc.Errf("usage: pkill [-l SIGNAL] [-fx] PATTERN\n")
		return 2
	}
	pat := args[0]
	if exact {
		pat = "^(?:" + pat + ")$"
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		sc.Errf("pkill: bad regex '%s'\n", args[0])
		return 2
	}
	hit := false
	for _, sp := range sc.p.procs.list() {
		subject := sp.name
		if full {
			subject = sp.cmdline()
		}
		if re.MatchString(subject) {
			sp.signal(sig)
			hit = true
		}
	}
	if !hit {
		return 1
	}
	return 0
}

func cmdPidof(sc *shellCtx, args []string) int {
	var pids []string
	for _, sp := range sc.p.procs.list() {
		if slices.Contains(args, sp.name) {
			pids = append(pids, strconv.Itoa(sp.pid))
		}
	}
	for pid, pkg := range sc.p.appPIDs() {
		if slices.Contains(args, pkg) {
			pids = append(pids, strconv.Itoa(pid))
		}
	}
	if len(pids) == 0 {
		return 1
	}
	slices.Sort(pids)
	sc.Outf("%s\n", strings.Join(pids, " "))
	return 0
}

// cmdPs lists the app processes and the shell's running commands (-A and
// -f are accepted; the columns are toybox's default ones).
func cmdPs(sc *shellCtx, _ []string) int {
	sc.Outf("USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME\n")
	apps := sc.p.appPIDs()
	pids := make([]int, 0, len(apps))
	for pid := range apps {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		sc.Outf("%-10s %7d %5d %7d %6d %-16s %4d S %s\n", "u0_a100", pid, 1, 0, 0, "0", 0, apps[pid])
	}
	for _, sp := range sc.p.procs.list() {
		sc.Outf("%-10s %7d %5d %7d %6d %-16s %4d S %s\n", "shell", sp.pid, 1, 0, 0, "0", 0, sp.name)
	}
	return 0
}
