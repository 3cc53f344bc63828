package soloapp

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

const (
	counterPkg  = "com.example.counter"
	launcherPkg = "com.android.launcher3"
	solopiPkg   = "com.alipay.hulu"
	screenW     = 1080
	screenH     = 2340
)

// fakePhone is a tiny phone for the tests: a launcher, SoloPi, and a
// counter app with a value, an increment button, a no-op button and a name
// field. It records every input.
type fakePhone struct {
	mu         sync.Mutex
	fg         string
	count      int
	name       string
	imeVisible bool
	taps       []string // labels of the nodes tapped
	tapCount   int
	keys       []int
	swipes     int
	files      map[string][]byte
	dirs       map[string]bool
	logs       []string
	shotErr    error
	launches   []string
	stops      []string
	noStatus   bool
	narrowApp  bool
}

func newFakePhone() *fakePhone {
	return &fakePhone{fg: launcherPkg, files: map[string][]byte{}, dirs: map[string]bool{"/": true}}
}

func fpath(p string) string {
	p = path.Clean("/" + p)
	if p == "/sdcard" || strings.HasPrefix(p, "/sdcard/") {
		p = "/storage/emulated/0" + strings.TrimPrefix(p, "/sdcard")
	}
	return p
}

func (f *fakePhone) counterTree() *core.Node {
	b := core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH}
	if f.narrowApp {
		b = core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: 300}
	}
	n := func(cls, id, text string, sid int64, r core.Rect, click, edit bool) *core.Node {
		rid := ""
		if id != "" {
			rid = counterPkg + ":id/" + id
		}
		return &core.Node{ClassName: cls, ResourceID: rid, Text: text, PackageName: counterPkg, SourceID: sid, Bounds: r, Clickable: click, Editable: edit}
	}
	return &core.Node{ClassName: "android.widget.FrameLayout", PackageName: counterPkg, SourceID: 1, Bounds: b, Children: []*core.Node{
		n("android.widget.TextView", "counter_value", itoa64(int64(f.count)), 2, core.Rect{Left: 340, Top: 640, Right: 740, Bottom: 880}, false, false),
		n("android.widget.Button", "increment", "Increment", 3, core.Rect{Left: 240, Top: 1000, Right: 840, Bottom: 1150}, true, false),
		n("android.widget.Button", "noop", "Nothing", 4, core.Rect{Left: 240, Top: 1200, Right: 840, Bottom: 1350}, true, false),
		n("android.widget.EditText", "name", f.name, 5, core.Rect{Left: 240, Top: 1400, Right: 840, Bottom: 1550}, true, true),
	}}
}

func (f *fakePhone) Windows() []core.Window {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ws []core.Window
	if !f.noStatus {
		ws = append(ws, core.Window{Package: "com.android.systemui", Kind: core.WindowStatusBar, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: 63},
			Root: &core.Node{ClassName: "android.widget.FrameLayout", PackageName: "com.android.systemui", SourceID: 900, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: 63}}})
	}
	switch f.fg {
	case counterPkg:
		ws = append(ws, core.Window{Package: counterPkg, Kind: core.WindowApp, Root: f.counterTree(), Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH}})
	case solopiPkg:
		ws = append(ws, core.Window{Package: solopiPkg, Kind: core.WindowApp, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH},
			Root: &core.Node{ClassName: "android.widget.FrameLayout", PackageName: solopiPkg, SourceID: 700, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH}}})
	case launcherPkg:
		ws = append(ws, core.Window{Package: launcherPkg, Kind: core.WindowApp, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH},
			Root: &core.Node{ClassName: "android.widget.FrameLayout", PackageName: launcherPkg, SourceID: 800, Bounds: core.Rect{Left: 0, Top: 0, Right: screenW, Bottom: screenH}}})
	}
	if f.imeVisible {
		ws = append(ws, core.Window{Package: "com.android.inputmethod.latin", Kind: core.WindowIME, Bounds: core.Rect{Left: 0, Top: 1500, Right: screenW, Bottom: screenH},
			Root: &core.Node{ClassName: "android.widget.FrameLayout", PackageName: "com.android.inputmethod.latin", SourceID: 600, Bounds: core.Rect{Left: 0, Top: 1500, Right: screenW, Bottom: screenH}}})
	}
	return ws
}

func (f *fakePhone) ScreenSize() (int, int) { return screenW, screenH }

func (f *fakePhone) Foreground() (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fg, ".Main"
}

func (f *fakePhone) Tap(x, y int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tapCount++
	if f.fg != counterPkg {
		return nil
	}
	for _, c := range f.counterTree().Children {
		b := c.Bounds
		if x >= b.Left && x < b.Right && y >= b.Top && y < b.Bottom {
			f.taps = append(f.taps, c.Text)
			if strings.HasSuffix(c.ResourceID, "/increment") {
				f.count++
			}
		}
	}
	return nil
}

func (f *fakePhone) LongPress(x, y int, d time.Duration) error { return f.Tap(x, y) }

func (f *fakePhone) Swipe(x1, y1, x2, y2 int, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.swipes++
	return nil
}

func (f *fakePhone) KeyEvent(code int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, code)
	if code == core.KeyCodeBack || code == core.KeyCodeHome {
		f.fg = launcherPkg
	}
	return nil
}

func (f *fakePhone) InputText(s string) error { return nil }

func (f *fakePhone) SetText(id int64, s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != 5 {
		return errors.New("not editable")
	}
	f.name = s
	return nil
}

func (f *fakePhone) Apps() []core.AppInfo {
	return []core.AppInfo{
		{Package: counterPkg, Label: "Counter", VersionName: "1.0", VersionCode: 1, LauncherActivity: ".MainActivity"},
		{Package: solopiPkg, Label: "SoloPi", VersionName: "1.0.2", VersionCode: 37, LauncherActivity: ".SplashActivity"},
		{Package: launcherPkg, Label: "Launcher", System: true, LauncherActivity: ".Launcher"},
		{Package: "com.example.service", Label: "alpha service", VersionName: "2"},
	}
}

func (f *fakePhone) IsInstalled(pkg string) bool {
	return slices.ContainsFunc(f.Apps(), func(a core.AppInfo) bool { return a.Package == pkg })
}

func (f *fakePhone) LaunchApp(pkg string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launches = append(f.launches, pkg)
	f.fg = pkg
	return nil
}

func (f *fakePhone) ForceStop(pkg string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops = append(f.stops, pkg)
	if pkg == counterPkg {
		f.count = 0
		f.name = ""
	}
	if f.fg == pkg {
		f.fg = launcherPkg
	}
	return nil
}

func (f *fakePhone) Screenshot() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shotErr != nil {
		return nil, f.shotErr
	}
	return []byte("\x89PNG\r\n\x1a\nfake-" + f.fg + "-" + itoa64(int64(f.count))), nil
}

func (f *fakePhone) Stat(p string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = fpath(p)
	if d, found := f.files[p]; found {
		return fileInfo(path.Base(p), int64(len(d)), false, time.Time{}), nil
	}
	if f.dirs[p] {
		return fileInfo(path.Base(p), 0, true, time.Time{}), nil
	}
	return nil, fs.ErrNotExist
}

func (f *fakePhone) ReadFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, found := f.files[fpath(p)]
	if !found {
		return nil, fs.ErrNotExist
	}
	return slices.Clone(d), nil
}

func (f *fakePhone) WriteFile(p string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[fpath(p)] = slices.Clone(data)
	return nil
}

func (f *fakePhone) AppendFile(p string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = fpath(p)
	f.files[p] = append(f.files[p], data...)
	return nil
}

func (f *fakePhone) Remove(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = fpath(p)
	if _, found := f.files[p]; !found {
		if !f.dirs[p] {
			return fs.ErrNotExist
		}
		// An empty directory can be removed, as on the real file system.
		for k := range f.files {
			if strings.HasPrefix(k, p+"/") {
				return errors.New("directory not empty")
			}
		}
		for k := range f.dirs {
			if strings.HasPrefix(k, p+"/") {
				return errors.New("directory not empty")
			}
		}
		delete(f.dirs, p)
		return nil
	}
	delete(f.files, p)
	return nil
}

func (f *fakePhone) MkdirAll(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p = fpath(p); p != "/"; p = path.Dir(p) {
		f.dirs[p] = true
	}
	return nil
}

func (f *fakePhone) ReadDir(p string) ([]fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = fpath(p)
	var out []fs.FileInfo
	for k, d := range f.files {
		if path.Dir(k) == p {
			out = append(out, fileInfo(path.Base(k), int64(len(d)), false, time.Time{}))
		}
	}
	for k := range f.dirs {
		if k != p && path.Dir(k) == p {
			out = append(out, fileInfo(path.Base(k), 0, true, time.Time{}))
		}
	}
	if len(out) == 0 && !f.dirs[p] {
		return nil, fs.ErrNotExist
	}
	return out, nil
}

func (f *fakePhone) Log(level byte, tag, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, string(level)+"/"+tag+": "+msg)
}

func (f *fakePhone) set(fn func(f *fakePhone)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakePhone) snapshot() (count, taps int, name, fg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count, f.tapCount, f.name, f.fg
}

// allFiles returns a copy of every file.
func (f *fakePhone) allFiles() map[string][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range f.files {
		out[k] = slices.Clone(v)
	}
	return out
}

// fileInfo describes a file of size bytes, or a directory.
func fileInfo(name string, size int64, dir bool, mtime time.Time) fs.FileInfo {
	return fakeFileInfo{name: name, size: size, dir: dir, mtime: mtime}
}

type fakeFileInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func (i fakeFileInfo) Name() string { return i.name }
func (i fakeFileInfo) Size() int64  { return i.size }
func (i fakeFileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fakeFileInfo) ModTime() time.Time { return i.mtime }
func (i fakeFileInfo) IsDir() bool        { return i.dir }
func (i fakeFileInfo) Sys() any           { return nil }
