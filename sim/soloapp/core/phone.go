package core

import (
	"errors"
	"io/fs"
	"time"
)

// Node is one accessibility node as the phone exposes it. It mirrors the
// simulator phone's node type with stdlib types only, so this package never
// imports sim/android (the lead wires an adapter in).
type Node struct {
	ClassName, Text, Description, ResourceID, PackageName string
	// SourceID is AccessibilityNodeInfo.getSourceNodeId(); exported as the
	// decimal "id" string.
	SourceID                                                int64
	Bounds                                                  Rect
	Clickable, LongClickable, Editable, Scrollable, Focused bool
	Children                                                []*Node
}

// Rect is a screen rectangle in pixels; Right and Bottom are exclusive.
type Rect struct{ Left, Top, Right, Bottom int }

// Width is Right-Left, never negative.
func (r Rect) Width() int { return max(0, r.Right-r.Left) }

// Height is Bottom-Top, never negative.
func (r Rect) Height() int { return max(0, r.Bottom-r.Top) }

// javaEmpty is android.graphics.Rect.isEmpty(), which the device serializes
// as the "empty" flag of every Rect.
func (r Rect) javaEmpty() bool { return r.Left >= r.Right || r.Top >= r.Bottom }

func (r Rect) Centre() (int, int) { return (r.Left + r.Right) / 2, (r.Top + r.Bottom) / 2 }

// Window kinds reported by Phone.Windows.
const (
	WindowApp       = "app"
	WindowStatusBar = "statusbar"
	WindowIME       = "ime"
	windowOverlay   = "overlay"
)

// Window is one visible window, topmost last or first as the phone reports
// them; the order is preserved in multi-window trees.
type Window struct {
	Package, Kind string
	Root          *Node
	Bounds        Rect
}

// AppInfo describes one installed application.
type AppInfo struct {
	Package, Label, VersionName string
	VersionCode                 int64
	System                      bool
	LauncherActivity            string
}

// Android key codes used by the device side.
const (
	KeyCodeHome = 3
	KeyCodeBack = 4
)

// Phone is everything SoloPi's device side needs from the virtual Android
// phone. Paths are absolute device paths; /sdcard and /storage/emulated/0
// name the same directory.
type Phone interface {
	Windows() []Window
	ScreenSize() (w, h int)
	Foreground() (pkg, activity string)
	Tap(x, y int) error
	LongPress(x, y int, d time.Duration) error
	Swipe(x1, y1, x2, y2 int, d time.Duration) error
	KeyEvent(code int) error
	InputText(s string) error
	SetText(sourceID int64, s string) error
	Apps() []AppInfo
	IsInstalled(pkg string) bool
	LaunchApp(pkg string) error
	ForceStop(pkg string) error
	Screenshot() ([]byte, error)
	Stat(path string) (fs.FileInfo, error)
	ReadFile(path string) ([]byte, error)
	WriteFile(path string, data []byte) error
	AppendFile(path string, data []byte) error
	Remove(path string) error
	MkdirAll(path string) error
	ReadDir(path string) ([]fs.FileInfo, error)
	Log(level byte, tag, msg string)
}

// ErrCaptureServiceUnavailable may be wrapped by Phone.Screenshot to say that
// no screen-capture implementation exists (the real one ships in a plugin);
// observations then report screen_capture_service_unavailable instead of
// screen_capture_failed.
var ErrCaptureServiceUnavailable = errors.New("soloapp: screen capture service unavailable")

// HideIME closes the soft keyboard that focusing a field opened, as SoloPi's
// input operation does (its internal HIDE_INPUT_METHOD step): with the IME
// up the page is a multi-window FakeNodeTree that no observation accepts.
func (a *App) HideIME() error {
	for _, w := range a.Phone.Windows() {
		if w.Kind == WindowIME {
			return a.Phone.KeyEvent(KeyCodeBack)
		}
	}
	return nil
}
