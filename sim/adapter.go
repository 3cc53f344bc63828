package sim

import (
	"bytes"
	"io/fs"
	"time"

	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// phoneAdapter presents the virtual phone to SoloPi's device side, which
// knows only its own small Phone interface (it never imports sim/android).
type phoneAdapter struct{ p *android.Phone }

var _ core.Phone = phoneAdapter{}

func convRect(r ui.Rect) core.Rect {
	return core.Rect{Left: r.Left, Top: r.Top, Right: r.Right, Bottom: r.Bottom}
}

func convNode(n *ui.Node) *core.Node {
	if n == nil {
		return nil
	}
	out := &core.Node{
		ClassName: n.ClassName, Text: n.Text, Description: n.Description, ResourceID: n.ResourceID,
		PackageName: n.PackageName, SourceID: n.SourceID, Bounds: convRect(n.Bounds),
		Clickable: n.Clickable, LongClickable: n.LongClickable, Editable: n.Editable,
		Scrollable: n.Scrollable, Focused: n.Focused,
	}
	if n.Children != nil {
		out.Children = make([]*core.Node, len(n.Children))
		for i, c := range n.Children {
			out.Children[i] = convNode(c)
		}
	}
	return out
}

func (a phoneAdapter) Windows() []core.Window {
	ws := a.p.Windows()
	out := make([]core.Window, len(ws))
	for i, w := range ws {
		out[i] = core.Window{Package: w.Package, Kind: w.Kind, Root: convNode(w.Root), Bounds: convRect(w.Bounds)}
	}
	return out
}

func (a phoneAdapter) ScreenSize() (int, int)                    { return a.p.ScreenSize() }
func (a phoneAdapter) Foreground() (string, string)              { return a.p.Foreground() }
func (a phoneAdapter) Tap(x, y int) error                        { return a.p.Tap(x, y) }
func (a phoneAdapter) LongPress(x, y int, d time.Duration) error { return a.p.LongPress(x, y, d) }
func (a phoneAdapter) Swipe(x1, y1, x2, y2 int, d time.Duration) error {
	return a.p.Swipe(x1, y1, x2, y2, d)
}
func (a phoneAdapter) KeyEvent(code int) error               { return a.p.KeyEvent(code) }
func (a phoneAdapter) InputText(s string) error              { return a.p.InputText(s) }
func (a phoneAdapter) SetText(id int64, s string) error      { return a.p.SetText(id, s) }
func (a phoneAdapter) IsInstalled(pkg string) bool           { return a.p.IsInstalled(pkg) }
func (a phoneAdapter) LaunchApp(pkg string) error            { return a.p.LaunchApp(pkg) }
func (a phoneAdapter) ForceStop(pkg string) error            { return a.p.ForceStop(pkg) }
func (a phoneAdapter) Screenshot() ([]byte, error)           { return a.p.Screenshot() }
func (a phoneAdapter) Stat(path string) (fs.FileInfo, error) { return a.p.Stat(path) }
func (a phoneAdapter) ReadFile(path string) ([]byte, error)  { return a.p.FS().ReadFile(path) }
func (a phoneAdapter) WriteFile(path string, data []byte) error {
	return a.p.WriteFile(path, 0o644, a.p.Clock().Now(), bytes.NewReader(data))
}
func (a phoneAdapter) AppendFile(path string, data []byte) error {
	return a.p.FS().AppendFile(path, data)
}
func (a phoneAdapter) Remove(path string) error                   { return a.p.FS().Remove(path) }
func (a phoneAdapter) MkdirAll(path string) error                 { return a.p.FS().MkdirAll(path, 0o755) }
func (a phoneAdapter) ReadDir(path string) ([]fs.FileInfo, error) { return a.p.ReadDir(path) }
func (a phoneAdapter) Log(level byte, tag, msg string) {
	a.p.LogApp("com.alipay.hulu", level, tag, msg)
}

func (a phoneAdapter) Apps() []core.AppInfo {
	apps := a.p.Apps()
	out := make([]core.AppInfo, len(apps))
	for i, x := range apps {
		out[i] = core.AppInfo{Package: x.Package, Label: x.Label, VersionName: x.VersionName,
			VersionCode: x.VersionCode, System: x.System, LauncherActivity: x.LauncherActivity}
	}
	return out
}

// Rename lets SoloPi publish a performance folder atomically: it writes a
// temporary folder and renames it (docs/file-formats.md#performance-csv-files).
func (a phoneAdapter) Rename(oldPath, newPath string) error { return a.p.FS().Rename(oldPath, newPath) }
