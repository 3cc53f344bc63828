package cmdutil

import (
	"fmt"
	"slices"
	"strings"
)

// group is one section of `solopi help`, as the README's command table.
type group struct {
	Name, Title string
	Commands    []string
}

// groups are the sections of `solopi help`, in order; every command is in
// exactly one (a test checks it), with the README's table in step.
var groups = []group{
	{"local", "files on this host, no device", []string{"version", "schema", "actions", "case-template", "case-validate",
		"case-step-list", "case-step-add", "case-step-update", "case-step-delete", "case-step-move", "case-step-copy",
		"perf-analyze", "report", "completion"}},
	{"simulator", "a simulated phone to try everything on", []string{"demo", "sim"}},
	{"readiness", "the phone and SoloPi's setup", []string{"doctor", "adb-connect", "capabilities", "apps", "app-info",
		"app-status", "inspect", "screenshot", "logs", "startup-time"}},
	{"settings", "SoloPi's settings", []string{"config-list", "config-get", "config-set"}},
	{"replay", "cases and replay", []string{"cases", "case-get", "case-import", "case-delete", "run", "status", "result",
		"cancel", "run-repeat", "run-batch", "history", "replay-history-list", "replay-history-get", "replay-history-delete"}},
	{"agent", "the dynamic Agent protocol and the pure-vision planner", []string{"agent-capabilities", "agent-session-start",
		"agent-observe", "agent-act", "agent-receipt", "agent-status", "agent-timeline", "agent-pause", "agent-resume",
		"agent-end", "agent-cancel", "agent-run", "planner-parse", "planner-calibrate", "planner-check"}},
	{"sessions", "recording, scans, video analysis, performance, stress, plugins", []string{"record-start", "record-status",
		"record-stop", "screen-record-start", "screen-record-status", "screen-record-stop", "scan-start", "scan-status",
		"scan-cancel", "video-analysis-start", "video-analysis-status", "perf-list", "perf-current", "perf-start",
		"perf-status", "perf-stop", "perf-display-start", "perf-display-status", "perf-display-stop", "perf-history-list",
		"perf-history-get", "perf-history-delete", "stress-start", "stress-status", "stress-stop", "plugin-list",
		"plugin-install", "plugin-remove"}},
	{"verify", "requirements, verification plans and the Result Judge", []string{"verify-init", "verify-normalize",
		"verify-compile", "verify-validate", "verify-run"}},
	{"farm", "a device farm on River (SQLite or PostgreSQL)", []string{"managed-init", "managed-health",
		"managed-device-register", "managed-device-probe", "managed-device-list", "managed-submit", "managed-status",
		"managed-events", "managed-report", "managed-cancel", "managed-recover", "managed-purge", "managed-worker-once",
		"managed-worker-loop", "managed-serve"}},
	{"model", "solopi-ai's on-device model deployment: not supported, each says what to use instead", []string{
		"model-verify", "model-health", "model-install", "model-status", "model-activate", "model-rollback", "model-infer",
		"model-benchmark", "model-release-check"}},
}

func groupNamed(name string) (group, bool) {
	for _, g := range groups {
		if g.Name == name {
			return g, true
		}
	}
	return group{}, false
}

// topName is the command a spec's path starts with.
func topName(path string) string {
	name, _, _ := strings.Cut(path, " ")
	return name
}

// usageOf is each top-level command's one line (a command with
// subcommands: its own).
func usageOf(specs []commandSpec) map[string]string {
	m := map[string]string{}
	for _, s := range specs {
		if top := topName(s.Path); top != s.Path {
			if _, ok := m[top]; !ok {
				m[top] = "subcommands: " + strings.TrimPrefix(s.Path, top+" ")
			} else {
				m[top] += ", " + strings.TrimPrefix(s.Path, top+" ")
			}
			continue
		}
		m[s.Path] = s.Usage
	}
	return m
}

// appHelp is `solopi help`: the commands by group, the global flags.
func appHelp(specs []commandSpec) string {
	usage := usageOf(specs)
	var b strings.Builder
	b.WriteString("solopi drives Android test automation through SoloPi.\n\n" +
		"USAGE:\n   solopi [global options] <command> [command options] [global options]\n\n" +
		"Every command prints exactly one JSON object on stdout. Exit codes: 0 ok, 2 business failure or\n" +
		"not ready, 3 usage or device selection, 4 adb/HTTP/protocol error, 124 timeout, 130 interrupted.\n")
	width := 0
	for name := range usage {
		width = max(width, len(name))
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s (%s):\n", strings.ToUpper(g.Name), g.Title)
		for _, name := range g.Commands {
			if u, ok := usage[name]; ok {
				fmt.Fprintf(&b, "   %-*s  %s\n", width, name, u)
			}
		}
	}
	b.WriteString("\nGLOBAL OPTIONS (before or after the command):\n")
	b.WriteString(globalFlagsText())
	b.WriteString("\nEXAMPLES:\n   solopi demo\n   solopi doctor --serial emulator-5554\n" +
		"   solopi run --case smoke --artifacts ./out\n\n" +
		"Run 'solopi help GROUP' for one group (" + strings.Join(groupNames(), ", ") + "),\n" +
		"'solopi help COMMAND' or 'solopi COMMAND --help' for a command, 'solopi --version' for the version.\n")
	return b.String()
}

// groupHelp is `solopi help GROUP`: its commands with their usage and
// first example.
func groupHelp(g group, specs []commandSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", strings.ToUpper(g.Name), g.Title)
	for _, s := range specs {
		if !slices.Contains(g.Commands, topName(s.Path)) {
			continue
		}
		fmt.Fprintf(&b, "\n   %s\n      %s\n", s.Path, s.Usage)
		if ex := examplesOf(s.Path, s.Command); len(ex) > 0 {
			fmt.Fprintf(&b, "      e.g. %s\n", ex[0])
		}
	}
	b.WriteString("\nRun 'solopi help COMMAND' for a command's flags.\n")
	return b.String()
}

func groupNames() []string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return names
}
