package shell

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// Toybox returns the device-independent commands: files, text, and the
// system basics that need only the file system and the clock. Each call
// returns a fresh map, so callers may add their own commands to it.
func Toybox() map[string]Command {
	m := fsCommands()
	for k, v := range map[string]Command{"id": cmdID, "sleep": cmdSleep, "which": cmdWhich, "echo": cmdEcho,
		"uname": cmdUname, "whoami": cmdWhoami, "date": cmdDate} {
		m[k] = v
	}
	return m
}

func cmdID(sc *Proc, _ []string) int {
	sc.Outf("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs) context=u:r:shell:s0\n")
	return 0
}

func cmdWhoami(sc *Proc, _ []string) int { sc.Outf("shell\n"); return 0 }

func cmdSleep(sc *Proc, args []string) int {
	if len(args) == 0 {
		sc.Errf("sleep: Needs 1 argument\n")
		return 1
	}
	var total time.Duration
	for _, a := range args {
		unit := time.Second
		switch {
		case strings.HasSuffix(a, "s"):
			a = strings.TrimSuffix(a, "s")
		case strings.HasSuffix(a, "m"):
			a, unit = strings.TrimSuffix(a, "m"), time.Minute
		case strings.HasSuffix(a, "h"):
			a, unit = strings.TrimSuffix(a, "h"), time.Hour
		}
		v, err := strconv.ParseFloat(a, 64)
		if err != nil || v < 0 {
			sc.Errf("sleep: invalid number '%s'\n", a)
			return 1
		}
		total += time.Duration(v * float64(unit))
	}
	if err := sc.sh.Clock.Sleep(sc.Ctx, total); err != nil {
		return 130
	}
	return 0
}

func cmdWhich(sc *Proc, args []string) int {
	table := sc.sh.Commands
	rc := 0
	for _, a := range args {
		if table[path.Base(a)] != nil {
			sc.Outf("/system/bin/%s\n", path.Base(a))
		} else {
			rc = 1
		}
	}
	return rc
}

func cmdUname(sc *Proc, args []string) int {
	switch {
	case len(args) == 0 || args[0] == "-s":
		sc.Outf("Linux\n")
	case args[0] == "-m":
		sc.Outf("aarch64\n")
	case args[0] == "-r":
		sc.Outf("5.10.198-android13-4-gb6fd9ac0f3ab\n")
	default:
		sc.Outf("Linux localhost 5.10.198-android13-4-gb6fd9ac0f3ab #1 SMP PREEMPT Mon Jan 1 00:00:00 UTC 2024 aarch64 Toybox\n")
	}
	return 0
}

func cmdDate(sc *Proc, args []string) int {
	now := sc.sh.Clock.Now().UTC()
	if len(args) == 1 && args[0] == "+%s" {
		sc.Outf("%d\n", now.Unix())
		return 0
	}
	if len(args) == 1 && args[0] == "+%z" {
		// The phone's zone offset (the simulated phone runs on UTC).
		sc.Outf("%s\n", now.Format("-0700"))
		return 0
	}
	sc.Outf("%s\n", now.Format("Mon Jan 2 15:04:05 MST 2006"))
	return 0
}

func cmdEcho(sc *Proc, args []string) int {
	nl := true
	if len(args) > 0 && args[0] == "-n" {
		nl, args = false, args[1:]
	}
	sc.Outf("%s", strings.Join(args, " "))
	if nl {
		sc.Outf("\n")
	}
	return 0
}
