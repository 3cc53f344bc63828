package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/solopi-dev/solopi/"

// ranks places every host library package on a layer: a package may import
// only packages of a strictly lower rank, so two packages of one layer (two
// features, say) never import each other. Keys are package paths relative
// to the module; the longest key that is the path or a parent of it wins.
var ranks = map[string]int{
	// The host's JSON (standard library only): the one reader of documents
	// and of decoded trees, under everything that reads JSON, the wire
	// vocabulary's dialect writer included.
	"canonjson": -1,
	// The one rule for a test's missing tool (standard library only),
	// under every test helper.
	"internal/tooltest": -1,

	// Foundations: vocabulary, errors, time, encodings (adb's wire format
	// among them), small helpers.
	"fault": 0, "clock": 0, "redact": 0, "protocol": 0, "adbwire": 0,
	"internal/lazyregexp": 0, "internal/textclip": 0, "internal/recent": 0,
	"internal/realadb": 0, "internal/pgtest": 0, "internal/browsertest": 0,
	"internal/ptytest": 0, "internal/testwait": 0, "internal/layering": 0, "internal/docscheck": 0, "casefile/paramcrypt": 0,
	"oracle/pyre": 0, // Python 3.11 re, under the oracle that judges with it

	// Formats, output contracts and pure parsers built on the foundations;
	// the adb server client and the retrying HTTP of remote services (they
	// wait on the clock).
	"outcome": 1, "progress": 1, "artifacts": 1, "oracle": 1, "casefile": 1, "schemas": 1, "solopi/adb": 1, "internal/retryhttp": 1,
	"perfstats/perfmetric": 1, // SoloPi's performance series by name, under perfstats and report
	"internal/loopguard":   1, // the loopback pages' listener and guard (console, inspector)
	"agentloop/action":     1, "agentloop/chatapi": 1, "agentloop/fakemodel": 1, "solopi/devicelock": 1,

	// The device core, and the engines beside it that need no device.
	"solopi/device": 2, "perfstats": 2, "verify": 2, "report": 2, "suitereport": 2,
	"agentloop/coord": 2, "agentloop/chat": 2,
	"solopi/video":       2, // screenrecord over a small device interface (replay adapts device.Device)
	"schemas/schematest": 2, // the tests' validator over the embedded schemas

	// Feature families over the device core, the planner runtime, the
	// managed store, the device fakes and their conformance suite.
	"solopi/replay": 3, "solopi/agent": 3, "solopi/sessions": 3, "solopi/readiness": 3,
	"solopi/transporttest": 3, "agentloop": 3, "managed": 3, "history": 3,

	// Adapters that join features: the planner's devices, the live
	// console, the managed worker and control plane, test rigs over them.
	"agentloop/adbdevice": 4, "agentloop/agentdevice": 4, "report/console": 4, "inspector": 4,
	"managed/controlplane": 4, "managed/worker": 4, "managed/farmreport": 4,
	"managed/storetest": 4, "internal/counterphone": 4, "solopi/suite": 4,

	// Verification execution over the planner and the phone.
	"verify/execution": 5, "managed/farmbench": 5,
	"verify/onphone": 6,

	// The farm's worker on this host's phones, over verify-run's own path:
	// cmd → managed → verify.
	"managed/devicehost": 7,
}

// simAllowed is what the simulator may import besides itself: it stands in
// for a phone, so it shares the wire vocabulary, adb's wire format, the
// case format, the clock and the JSON reader with the host and nothing else.
var simAllowed = []string{"protocol", "adbwire", "casefile", "clock", "canonjson", "internal/lazyregexp", "internal/recent"}

// TestCommandLineRules holds the command line's rules to examples.
func TestCommandLineRules(t *testing.T) {
	for _, c := range []struct {
		p, imp string
		ok     bool
	}{
		{"cmd/solopi", "cmd/solopi/internal/replaycmd", true},
		{"cmd/solopi", "cmd/solopi/internal/cmdutil", true},
		{"cmd/solopi", "sim", true},
		{"cmd/solopi", "verify/onphone", true},
		{"cmd/solopi/internal/managedcmd", "cmd/solopi/internal/cmdutil", true},
		{"cmd/solopi/internal/managedcmd", "managed/devicehost", true},
		{"cmd/solopi/internal/managedcmd", "cmd/solopi/internal/verifycmd", false},
		{"cmd/solopi/internal/verifycmd", "cmd/solopi/internal/plannercmd", false},
		{"cmd/solopi/internal/replaycmd", "cmd/solopi", false},
		{"cmd/solopi/internal/replaycmd", "sim", false},
		{"cmd/solopi/internal/cmdutil", "cmd/solopi/internal/replaycmd", false},
		{"cmd/solopi/internal/cmdutil", "sim", false},
		{"cmd/solopi/internal/cmdtest", "sim", true},
		{"cmd/solopi/internal/cmdtest", "cmd/solopi/internal/cmdutil", true},
		{"cmd/solopi/internal/helpers", "fault", false},
		{"managed", "cmd/solopi/internal/cmdutil", false},
		{"managed/devicehost", "verify/onphone", true},
		{"verify/onphone", "managed/devicehost", false},
	} {
		if got := violation(c.p, c.imp) == ""; got != c.ok {
			t.Errorf("%s → %s allowed=%v, want %v (%s)", c.p, c.imp, got, c.ok, violation(c.p, c.imp))
		}
	}
}

func TestImportsPointDownward(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	for _, p := range sortedKeys(pkgs) {
		for _, imp := range pkgs[p] {
			if msg := violation(p, imp); msg != "" {
				t.Errorf("%s imports %s: %s", p, imp, msg)
			}
		}
	}
}

// violation says why p must not import imp ("" when it may).
func violation(p, imp string) string {
	switch {
	case isCLI(p):
		return cliViolation(p, imp)
	case isCLI(imp):
		return "the command line is the top; nothing imports it"
	case under(p, "sim"):
		if under(imp, "sim") {
			return ""
		}
		for _, a := range simAllowed {
			if under(imp, a) {
				return ""
			}
		}
		return "the simulator shares only protocol, adbwire, casefile, clock, canonjson and two small helpers with the host"
	case under(imp, "sim"):
		if p == "agentloop/fakemodel" || p == "internal/counterphone" {
			return "" // test rigs draw with the simulator's screens
		}
		return "the host does not import the simulator"
	}
	pr, ok := rank(p)
	if !ok {
		return "package has no layer: place it in the ranks table of internal/layering"
	}
	ir, ok := rank(imp)
	if !ok {
		return "imported package has no layer: place it in the ranks table of internal/layering"
	}
	if ir >= pr {
		return "an import must point to a lower layer"
	}
	return ""
}

// isCLI reports whether p is the command line: the binary and its command
// packages.
func isCLI(p string) bool { return under(p, "cmd") || under(p, "cli") }

// The command line's own packages: the binary lists the command groups;
// every group adapts libraries through cmdutil and nothing else of the
// command line; cmdtest is the groups' test rig.
const (
	cliBinary = "cmd/solopi"
	cliCore   = "cmd/solopi/internal/cmdutil"
	cliRig    = "cmd/solopi/internal/cmdtest"
	cliGroups = "cmd/solopi/internal"
)

// cliViolation says why the command-line package p must not import imp.
func cliViolation(p, imp string) string {
	role := cliRole(p)
	switch {
	case role == "":
		return "package has no role in the command line: the binary, cmdutil, cmdtest or a command group <name>cmd under " + cliGroups
	case under(imp, "sim"):
		if role == cliBinary || role == cliRig {
			return "" // sim serve and demo serve the simulator; the rig drives it
		}
		return "only the binary (sim serve, demo) and the command tests' rig reach the simulator"
	case isCLI(imp):
		switch {
		case role == cliBinary && cliRole(imp) != "" && imp != cliRig:
			return ""
		case imp == cliCore && role != cliCore:
			return ""
		case role == cliRig && cliRole(imp) == "group":
			return "" // the rig runs the groups' commands
		}
		return "a command group imports only cmdutil and libraries, never another group or the binary"
	}
	if _, ok := rank(imp); !ok {
		return "imported package has no layer: place it in the ranks table of internal/layering"
	}
	return ""
}

// cliRole is the role of a command-line package ("" when it has none).
func cliRole(p string) string {
	switch {
	case p == cliBinary || p == cliCore || p == cliRig:
		return p
	case strings.HasPrefix(p, cliGroups+"/") && !strings.Contains(strings.TrimPrefix(p, cliGroups+"/"), "/") && strings.HasSuffix(p, "cmd"):
		return "group"
	}
	return ""
}

func rank(p string) (int, bool) {
	best, r := "", 0
	for k, v := range ranks {
		if under(p, k) && len(k) > len(best) {
			best, r = k, v
		}
	}
	return r, best != ""
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// modulePackages maps each package of the module (relative path) to the
// module packages its production files import (tests are free to reach
// anywhere).
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		var imps []string
		for _, i := range bp.Imports {
			if strings.HasPrefix(i, module) {
				imps = append(imps, strings.TrimPrefix(i, module))
			}
		}
		out[rel] = imps
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
