package sessions

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

func writeZip(t *testing.T, dir, name string, entries map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, c := range entries {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(c))
	}
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// simImportDir is where SoloPi looks for plugin archives to import.
const simImportDir = "/storage/emulated/0/solopi/patch"

func stagedFiles(f *simPhone) []string {
	entries, err := f.dev.Phone.ReadDir(simImportDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// demoPlugin writes a plugin archive SoloPi accepts: hulu_demo with one
// jar and its digest.
func demoPlugin(t *testing.T) string {
	jar := "jar-bytes"
	sum := md5.Sum([]byte(jar))
	desc := `{"name":"hulu_demo","version":1,"jar":"test.jar","jarMd5":"` + hex.EncodeToString(sum[:]) + `"}`
	return writeZip(t, t.TempDir(), "demo.zip", map[string]string{"hulu_demo/desc.json": desc, "hulu_demo/test.jar": jar})
}

func TestPluginListAndInstall(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	// The import's background work takes a while: the receipt is in
	// progress first.
	f.dev.App.SetPluginMutationDelay(2 * time.Second)
	list, err := PluginList(context.Background(), f.device())
	ssExpect(t, "plugin-list", list, err, passed)

	res, err := ssOut(InstallPlugin(context.Background(), f.device(), PluginInstallOptions{File: demoPlugin(t), SessionTimings: ssFast}))
	m := ssExpect(t, "plugin-install", res, err, passed)
	cl := m["cleanup"].(map[string]any)
	if m["state"] != "completed_restart_required" || cl["removed"] != true || cl["success"] != true {
		t.Fatalf("install = %v", m)
	}
	if name := m["fileName"].(string); name != stagedPluginName(m["requestId"].(string)) {
		t.Fatalf("staged name %s is not derived from the requestId", name)
	}
	if s := stagedFiles(f); len(s) != 0 {
		t.Fatalf("staged archive left on the device: %v", s)
	}
	if f.mutationCount("action=import", "requestId="+m["requestId"].(string), "sha256="+m["sha256"].(string), "fileId="+m["fileId"].(string)) != 1 {
		t.Fatalf("import mutation = %v", f.dev.Mutations())
	}
	for _, c := range []string{"rm -f -- ", "test ! -e "} {
		if !f.ran(c + simImportDir + "/solopi-plugin-") {
			t.Fatalf("%q was not run on the staged file: %v", c, f.dev.Commands())
		}
	}
}

func TestPluginInstallWrongSHA256FailsAndLeavesNoStagedFile(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	// The staged archive changes after the host checked it, before SoloPi
	// reads it.
	var once sync.Once
	t.Cleanup(f.dev.OnMutation(func(uri string) {
		if !strings.Contains(uri, "action=import") {
			return
		}
		once.Do(func() {
			for _, name := range stagedFiles(f) {
				p := simImportDir + "/" + name
				b, _ := f.dev.Phone.FS().ReadFile(p)
				if err := f.dev.Push(context.Background(), bytes.NewReader(append(b, 'x')), p, 0o644, time.Time{}); err != nil {
					t.Errorf("corrupt: %v", err)
				}
			}
		})
	}))
	res, err := ssOut(InstallPlugin(context.Background(), f.device(), PluginInstallOptions{File: demoPlugin(t), SessionTimings: ssFast}))
	m := ssExpect(t, "plugin-install", res, err, fault.Failed)
	ssWantCode(t, m, "sha256_mismatch")
	if cl := m["cleanup"].(map[string]any); cl["success"] != true || cl["removed"] != true {
		t.Fatalf("cleanup after a failed import = %v", m)
	}
	if s := stagedFiles(f); len(s) != 0 {
		t.Fatalf("staged archive left on the device: %v", s)
	}
}

func TestPluginInstallTimeoutStillCleansUp(t *testing.T) {
	t.Parallel()
	zp := demoPlugin(t)
	// The import never reaches SoloPi: the receipt never appears.
	lost := sim.MutationFault{Action: "plugin", Query: map[string]string{"action": "import"}, Drop: true}
	f := newSimPhone(t)
	if err := f.dev.AddMutationFault(lost); err != nil {
		t.Fatal(err)
	}
	ctx := f.cancelOn("action=import")
	res, err := InstallPlugin(ctx, f.device(), PluginInstallOptions{File: zp, SessionTimings: SessionTimings{Timeout: 5e9, Interval: 5e6}})
	if res != nil {
		t.Fatalf("interrupted install returned a result")
	}
	m := ssExpect(t, "plugin-install", nil, err, fault.Interrupted)
	cl := m["cleanup"].(map[string]any)
	if cl["attempted"] != true || cl["reason"] != "mutation_not_terminal" || len(stagedFiles(f)) != 0 {
		t.Fatalf("interrupted install left the staged file: %v", m)
	}

	// A timeout (no receipt within the budget) also removes the file.
	g := newSimPhone(t)
	if err := g.dev.AddMutationFault(lost); err != nil {
		t.Fatal(err)
	}
	_, err = InstallPlugin(context.Background(), g.device(), PluginInstallOptions{File: zp, SessionTimings: SessionTimings{Timeout: 50e6, Interval: 5e6}})
	m = ssExpect(t, "plugin-install", nil, err, fault.Timeout)
	if m["cleanup"].(map[string]any)["success"] != true || len(stagedFiles(g)) != 0 {
		t.Fatalf("timed-out install left the staged file: %v", m)
	}
}

func TestPluginZipLocalChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeZip(t, dir, "ok.zip", map[string]string{"desc.json": "{}"})
	if z, err := ReadPluginZip(good); err != nil || len(z.SHA256) != 64 {
		t.Fatalf("good zip refused: %v", err)
	}
	bad := map[string]string{}
	bad["not a zip name"] = writeZip(t, dir, "ok.jar", map[string]string{"desc.json": "{}"})
	bad["no manifest"] = writeZip(t, dir, "nomf.zip", map[string]string{"a.txt": "x"})
	bad["no entries"] = writeZip(t, dir, "empty.zip", map[string]string{})
	os.WriteFile(filepath.Join(dir, "zero.zip"), nil, 0o644)
	bad["empty file"] = filepath.Join(dir, "zero.zip")
	os.WriteFile(filepath.Join(dir, "text.zip"), []byte("not a zip"), 0o644)
	bad["invalid zip"] = filepath.Join(dir, "text.zip")
	os.Symlink(good, filepath.Join(dir, "link.zip"))
	bad["symlink"] = filepath.Join(dir, "link.zip")
	bad["deep manifest"] = writeZip(t, dir, "deep.zip", map[string]string{"a/b/desc.json": "{}"})
	for name, p := range bad {
		if _, err := ReadPluginZip(p); err == nil || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestPluginRemove(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	if err := f.dev.App.InstallPlugin("hulu_demo", 1.0); err != nil {
		t.Fatal(err)
	}
	id := plugins.PluginID("hulu_demo")
	res, err := ssOut(RemovePlugin(context.Background(), f.device(), id, ssFast))
	m := ssExpect(t, "plugin-remove", res, err, passed)
	if m["mutation"].(map[string]any)["pluginId"] != id || f.mutationCount("action=remove", "pluginId="+id, "confirmId="+id) != 1 {
		t.Fatalf("remove = %v", m)
	}
	if _, err := RemovePlugin(context.Background(), f.device(), "plugin-XYZ", ssFast); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("a malformed plugin id was sent")
	}
}

func TestPluginListValidator(t *testing.T) {
	t.Parallel()
	ok := `{"success":true,"plugins":[],"total":0,"importDirectory":"patch","importPath":"/storage/emulated/0/solopi/patch","pathAvailable":true,"importFiles":[],"importFilesTruncated":false,"mutationTransport":"adb"}`
	ssValidatorCases(t, validatePluginList, []ssCase{
		{"ok", ok, true},
		{"short import path", strings.Replace(ok, "/storage/emulated/0/solopi/patch", "/x/patch", 1), false},
		{"wrong transport", strings.Replace(ok, `"adb"`, `"http"`, 1), false},
		{"total", strings.Replace(ok, `"total":0`, `"total":1`, 1), false},
		{"bad file id", strings.Replace(ok, `"importFiles":[]`, `"importFiles":[{"fileId":"x","fileName":"a.zip","sizeBytes":3,"sha256Required":true}]`, 1), false},
		{"removable core", strings.Replace(ok, `"plugins":[],"total":0`, `"plugins":[{"id":"plugin-`+strings.Repeat("a", 64)+`","name":"n","version":1.0,"status":"loaded","source":"runtime_registry","core":true,"removable":true,"runtimeLoaded":true,"hasCode":true,"hasNativeLibraries":false,"hasAssets":false,"catalogAvailable":false}],"total":1`, 1), false},
	})
}
