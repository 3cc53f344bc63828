package cmdutil

import (
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// examples are the command lines a command's help shows under EXAMPLES,
// keyed by command path, for the commands whose own help text shows none.
// A test runs every example through the parser (flags exist, requirements
// met) and checks that every command shows at least one.
var examples = map[string][]string{
	"version":               {"solopi version"},
	"actions":               {"solopi actions --pretty"},
	"completion":            {"source <(solopi completion bash)", "solopi completion zsh > \"${fpath[1]}/_solopi\"", "solopi completion fish > ~/.config/fish/completions/solopi.fish"},
	"sim":                   {"solopi sim serve --devices 2 --time-scale 10"},
	"doctor":                {"solopi doctor --serial emulator-5554"},
	"adb-connect":           {"solopi adb-connect --connect-timeout 30"},
	"config-list":           {"solopi config-list"},
	"config-get":            {"solopi config-get --key KEY_REPLAY_AUTO_START"},
	"config-set":            {"solopi config-set --key KEY_MAX_WAIT_TIME --value 20000"},
	"capabilities":          {"solopi capabilities"},
	"apps":                  {"solopi apps"},
	"app-info":              {"solopi app-info"},
	"app-status":            {"solopi app-status"},
	"inspect":               {"solopi inspect --pretty > page.json", "solopi inspect --serve --record-to ./counter-recorded.json"},
	"screenshot":            {"solopi screenshot --output ./screen.png --overwrite"},
	"logs":                  {"solopi logs --output ./logcat.txt --lines 5000"},
	"startup-time":          {"solopi startup-time --target-package com.example.app --mode cold"},
	"cases":                 {"solopi cases"},
	"case-get":              {"solopi case-get --case login-smoke --output ./login-smoke.json"},
	"case-template":         {"solopi case-template --name login-smoke --target-package com.example.app --output ./login-smoke.json"},
	"case-validate":         {"solopi case-validate --file ./login-smoke.json"},
	"case-import":           {"solopi case-import --file ./login-smoke.json --replace"},
	"case-delete":           {"solopi case-delete --case login-smoke"},
	"case-step-list":        {"solopi case-step-list --file ./login-smoke.json"},
	"case-step-add":         {"solopi case-step-add --file ./login-smoke.json --step-file ./tap-login.json --output ./login-smoke-2.json --at 1", `solopi case-step-add --file ./login-smoke.json --in-place --step '{"operationMethod":{"actionEnum":"BACK"}}'`},
	"case-step-update":      {"solopi case-step-update --file ./login-smoke.json --index 2 --step-file ./assert.json --output ./login-smoke-2.json", `solopi case-step-update --file ./login-smoke.json --index 0 --in-place --step '{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"1000"}}}'`},
	"case-step-delete":      {"solopi case-step-delete --file ./login-smoke.json --index 2 --output ./login-smoke-2.json", "solopi case-step-delete --file ./login-smoke.json --index 2 --in-place"},
	"case-step-move":        {"solopi case-step-move --file ./login-smoke.json --from-index 3 --to-index 1 --output ./login-smoke-2.json", "solopi case-step-move --file ./login-smoke.json --from-index 3 --to-index 1 --in-place"},
	"case-step-copy":        {"solopi case-step-copy --file ./login-smoke.json --index 1 --to-index 2 --output ./login-smoke-2.json", "solopi case-step-copy --file ./login-smoke.json --index 1 --to-index 2 --in-place"},
	"status":                {"solopi status"},
	"result":                {"solopi result --run-id RUN_ID"},
	"cancel":                {"solopi cancel --run-id RUN_ID"},
	"replay-history-list":   {"solopi replay-history-list --limit 20"},
	"replay-history-get":    {"solopi replay-history-get --id replay-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	"replay-history-delete": {"solopi replay-history-delete --id replay-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	"agent-capabilities":    {"solopi agent-capabilities"},
	"agent-session-start":   {"solopi agent-session-start --owner-token-out ./owner.token --max-steps 20"},
	"agent-observe":         {"solopi agent-observe --session-id SESSION_ID --owner-token-file ./owner.token --screenshot-output ./obs.png"},
	"agent-act": {"solopi agent-act --session-id SESSION_ID --owner-token-file ./owner.token --step-id step-1 --observation-id OBSERVATION_ID --action click --node-id NODE_ID",
		"solopi agent-act --session-id SESSION_ID --owner-token-file ./owner.token --step-id step-2 --observation-id OBSERVATION_ID --action scroll --direction down"},
	"agent-receipt":           {"solopi agent-receipt --session-id SESSION_ID --owner-token-file ./owner.token --step-id step-1"},
	"agent-status":            {"solopi agent-status --session-id SESSION_ID --owner-token-file ./owner.token"},
	"agent-timeline":          {"solopi agent-timeline --session-id SESSION_ID --owner-token-file ./owner.token --output ./timeline.jsonl"},
	"agent-pause":             {"solopi agent-pause --session-id SESSION_ID --owner-token-file ./owner.token"},
	"agent-resume":            {"solopi agent-resume --session-id SESSION_ID --owner-token-file ./owner.token"},
	"agent-end":               {"solopi agent-end --session-id SESSION_ID --owner-token-file ./owner.token"},
	"agent-cancel":            {"SOLOPI_AGENT_OWNER_TOKEN=$(cat owner.token) solopi agent-cancel --session-id SESSION_ID"},
	"record-start":            {"solopi record-start --name login-smoke --target-package com.example.app"},
	"record-status":           {"solopi record-status"},
	"record-stop":             {"solopi record-stop --session-id SESSION_ID"},
	"screen-record-start":     {"solopi screen-record-start --resolution 720x480 --duration 60"},
	"screen-record-status":    {"solopi screen-record-status --session-id SESSION_ID"},
	"screen-record-stop":      {"solopi screen-record-stop --session-id SESSION_ID --output ./screen.mp4"},
	"scan-start":              {"solopi scan-start"},
	"scan-status":             {"solopi scan-status --session-id SESSION_ID"},
	"scan-cancel":             {"solopi scan-cancel --session-id SESSION_ID"},
	"video-analysis-start":    {"solopi video-analysis-start --video-path /sdcard/solopi/ScreenCaptures/tap.mp4 --action-offset-ms 1200 --difference-threshold 0.05"},
	"video-analysis-status":   {"solopi video-analysis-status --request-id REQUEST_ID"},
	"perf-list":               {"solopi perf-list"},
	"perf-current":            {"solopi perf-current"},
	"perf-start":              {"solopi perf-start --target-package com.example.app --items CPU,Memory,FPS"},
	"perf-status":             {"solopi perf-status --session-id SESSION_ID"},
	"perf-stop":               {"solopi perf-stop --session-id SESSION_ID --output ./perf"},
	"perf-display-start":      {"solopi perf-display-start --global --items CPU,Memory"},
	"perf-display-status":     {"solopi perf-display-status --session-id SESSION_ID"},
	"perf-display-stop":       {"solopi perf-display-stop --session-id SESSION_ID"},
	"perf-analyze":            {"solopi perf-analyze --input ./perf --output ./perf-charts"},
	"perf-history-list":       {"solopi perf-history-list --limit 20"},
	"perf-history-get":        {"solopi perf-history-get --id performance-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	"perf-history-delete":     {"solopi perf-history-delete --id performance-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	"stress-start":            {"solopi stress-start --cpu-count 2 --cpu-percent 80 --memory 512 --duration 120"},
	"stress-status":           {"solopi stress-status --session-id SESSION_ID"},
	"stress-stop":             {"solopi stress-stop --session-id SESSION_ID"},
	"plugin-list":             {"solopi plugin-list"},
	"plugin-install":          {"solopi plugin-install --file ./hulu_imageCompare.zip"},
	"plugin-remove":           {"solopi plugin-remove --id plugin-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	"planner-parse":           {"solopi planner-parse --coordinate-space relative_0_999 --image-size 1080x2340 < answer.txt"},
	"planner-calibrate":       {"solopi planner-calibrate --display-size 1080x2340 --model-base-url https://llm.example/v1 --model ui-tars"},
	"planner-check":           {"SOLOPI_MODEL_API_KEY=... solopi planner-check --model-base-url https://llm.example/v1 --model ui-tars"},
	"verify-normalize":        {"solopi verify-normalize --file ./requirement.json"},
	"verify-validate":         {"solopi verify-validate --plan ./plan.json"},
	"history":                 {"solopi history --case login-ok --last 20"},
	"managed-init":            {"solopi managed-init --database ./farm.sqlite"},
	"managed-health":          {"solopi managed-health --database ./farm.sqlite"},
	"managed-device-register": {"solopi managed-device-register --device-id pixel-8 --device-serial 1A2B3C --api-level 34 --capability agent --label rack=r1"},
	"managed-device-probe":    {"solopi managed-device-probe --serial emulator-5554 --label rack=r1"},
	"managed-device-list":     {"solopi managed-device-list --database ./farm.sqlite"},
	"managed-status":          {"solopi managed-status --task-id TASK_ID"},
	"managed-events":          {"solopi managed-events --task-id TASK_ID --after-sequence 10"},
	"managed-report":          {"solopi managed-report --task-id TASK_ID --output ./report.json"},
	"managed-cancel":          {"solopi managed-cancel --task-id TASK_ID --owner-token OWNER_TOKEN"},
	"managed-recover":         {"solopi managed-recover --database ./farm.sqlite"},
	"managed-purge":           {"solopi managed-purge --artifacts-root ./evidence"},
	"managed-worker-once":     {"solopi managed-worker-once --worker-id host-a-1 --artifacts-root ./evidence"},
	"model-verify":            {"solopi model-verify --package ./counter-policy"},
	"model-health":            {"solopi model-health"},
	"model-install":           {"solopi model-install --package ./counter-policy"},
	"model-status":            {"solopi model-status --model-id counter-policy"},
	"model-activate":          {"solopi model-activate --model-id counter-policy --model-version 1.0.0"},
	"model-rollback":          {"solopi model-rollback --model-id counter-policy"},
	"model-infer":             {"solopi model-infer --model-id counter-policy --inputs '[[0]]'"},
	"model-benchmark":         {"solopi model-benchmark --package ./counter-policy --model-id counter-policy"},
	"model-release-check":     {"solopi model-release-check --package ./counter-policy --benchmark b.json --evaluation e.json"},
	"managed-serve":           {"SOLOPI_MANAGED_BEARER_TOKEN=$(openssl rand -hex 24) solopi managed-serve --port 8765"},
}

// exampleHeading finds an example section a command's own text holds.
var exampleHeading = regexp.MustCompile(`(?m)^\s*Examples?:\s*$`)

// examplesOf are the command's examples: the table's, else those its own
// help text shows (the indented lines under its "Example:" heading).
func examplesOf(path string, c *cli.Command) []string {
	if ex, ok := examples[path]; ok {
		return ex
	}
	var out []string
	for _, text := range []string{c.UsageText, c.Description} {
		loc := exampleHeading.FindStringIndex(text)
		if loc == nil {
			continue
		}
		for _, line := range strings.Split(text[loc[1]:], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				if len(out) > 0 {
					break
				}
				continue
			}
			out = append(out, line)
		}
	}
	return out
}

// examplesSection is the EXAMPLES part of a command's help: the table's
// examples (a command whose own text shows examples keeps them there).
func examplesSection(path string, c *cli.Command) string {
	ex, ok := examples[path]
	if !ok {
		return ""
	}
	return "\nEXAMPLES:\n   " + strings.Join(ex, "\n   ") + "\n"
}

// globalSection lists the global flags in a command's help.
func globalSection(c *cli.Command) string {
	if c.SkipFlagParsing {
		return ""
	}
	return "\nGLOBAL OPTIONS (before or after the command):\n" + globalFlagsTextOnce()
}

// globalFlagsTextOnce is globalFlagsText, computed for the first command
// that needs it: the same text ends every command's help.
var globalFlagsTextOnce = sync.OnceValue(globalFlagsText)

// globalFlagsText is the global flags, one a line, as urfave/cli prints
// flags.
func globalFlagsText() string {
	var b strings.Builder
	fl := globalFlags()
	width := 0
	lines := make([][2]string, len(fl))
	for i, f := range fl {
		names, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
		lines[i] = [2]string{names, usage}
		width = max(width, len(names))
	}
	for _, l := range lines {
		b.WriteString("   " + l[0] + strings.Repeat(" ", width-len(l[0])+2) + l[1] + "\n")
	}
	return b.String()
}
