package android

import (
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/ui"
)

// overlay is a transient window used for fault injection: a system dialog,
// a toast-like popup or another app's floating window that covers part of
// the screen and swallows touches inside its bounds.
type overlay struct {
	id     int
	pkg    string
	bounds ui.Rect     // screen pixels
	stop   func() bool // cancels the removal
}

// ShowTransientWindow puts an overlay window of package pkg over bounds
// (screen pixels) for d of simulated time. While it is shown the screen is
// multi-window and taps inside it do not reach the app.
func (p *Phone) ShowTransientWindow(pkg string, bounds ui.Rect, d time.Duration) {
	var o *overlay
	_ = p.update(func() error {
		p.nextOvl++
		o = &overlay{id: p.nextOvl, pkg: pkg, bounds: bounds}
		p.overlays = append(p.overlays, o)
		p.touchLocked()
		return nil
	})
	stop := clock.AfterFunc(p.clk, d, func() { p.removeOverlay(o.id) })
	p.view(func() { o.stop = stop })
}

// ClearTransientWindows removes all overlays now.
func (p *Phone) ClearTransientWindows() {
	_ = p.update(func() error {
		for _, o := range p.overlays {
			if o.stop != nil {
				o.stop()
			}
		}
		if len(p.overlays) > 0 {
			p.overlays = nil
			p.touchLocked()
		}
		return nil
	})
}

func (p *Phone) removeOverlay(id int) {
	_ = p.update(func() error {
		for i, o := range p.overlays {
			if o.id == id {
				p.overlays = append(p.overlays[:i:i], p.overlays[i+1:]...)
				p.touchLocked()
				break
			}
		}
		return nil
	})
}

func (p *Phone) overlayWindowLocked(o *overlay) *liveWindow {
	root := &liveNode{spec: &appspec.NodeSpec{Class: "android.widget.FrameLayout"}}
	root.n = ui.Node{ClassName: "android.widget.FrameLayout", PackageName: o.pkg, Text: o.pkg,
		SourceID: hash64("overlay|" + o.pkg + "|" + o.bounds.String()), Bounds: o.bounds, Kind: "overlay"}
	lw := &liveWindow{root: root, ovl: o}
	lw.w = ui.Window{Package: o.pkg, Kind: ui.WindowOverlay, Bounds: o.bounds}
	return lw
}
