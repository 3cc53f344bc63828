// Package browsertest runs pages in Debian's headless Chromium for tests
// (driven with chromedp): it records every request a page makes, checks
// its images and, when $SOLOPI_TEST_ARTIFACTS names a directory, keeps a
// PNG screenshot of it there for a person to look at.
//
// Chromium is /usr/bin/chromium or $CHROMIUM. Without it a test skips,
// except under CI=true where a missing browser is a failure.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

// path finds the Chromium binary.
func path() (string, bool) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// Start gives the test a browser of its own: a fresh browser context (its
// own cookies, storage and cache, like a new profile) in the process's
// headless Chromium, which starts with the flags of launch on first use
// and stops when no test holds it. A launch costs more CPU than the pages
// most tests open, and parallel tests overlap, so they share one. The
// context and its tabs close when the test ends.
func Start(t testing.TB) context.Context {
	t.Helper()
	if _, ok := path(); !ok {
		tooltest.Missing(t, "chromium is not installed (set CHROMIUM or apt-get install chromium)")
	}
	root, err := shared.acquire()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(func() {
		cancel()
		shared.release()
	})
	// Create the browser context now, on a context without a deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("a browser context in chromium: %v", err)
	}
	return ctx
}

// shared is the process's Chromium while tests use it.
var shared browser

// browser is a headless Chromium started on first use and stopped when
// its last user releases it.
type browser struct {
	mu      sync.Mutex
	users   int
	root    context.Context // the browser's first tab
	stop    func()
	profile string
}

func (b *browser) acquire() (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users == 0 {
		if err := b.launch(); err != nil {
			return nil, err
		}
	}
	b.users++
	return b.root, nil
}

func (b *browser) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users--; b.users > 0 {
		return
	}
	b.stop()
	// Chromium's helpers may still write to the profile for a moment
	// after the browser exits.
	for range 50 {
		if os.RemoveAll(b.profile) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) launch() error {
	bin, _ := path()
	profile, err := os.MkdirTemp("", "solopi-chromium-*")
	if err != nil {
		return err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Every window of Chromium 156 keeps renderers for the omnibox's
		// popups, which a headless browser never shows: they took about
		// half of its CPU in the suite.
		chromedp.Flag("disable-features", "WebUIOmniboxPopup,WebUIOmniboxAimPopup"),
		chromedp.UserDataDir(profile),
	)
	ctx, cancel := chromedp.NewContext(actx)
	stop := func() { cancel(); cancelAlloc() }
	// The browser starts on a context without a deadline (a timeout on the
	// first Run would stop the whole browser).
	if err := chromedp.Do(ctx); err != nil {
		stop()
		_ = os.RemoveAll(profile)
		return err
	}
	b.root, b.stop, b.profile = ctx, stop, profile
	return nil
}

// page is one tab with the requests it made.
type page struct {
	Ctx    context.Context
	mu     sync.Mutex
	urls   []string
	failed []string
}

// Open loads url in a new tab of the browser at the given viewport size
// and waits for the load event.
func Open(t testing.TB, browser context.Context, url string, width, height int64) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	p := &page{Ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.mu.Lock()
			p.urls = append(p.urls, e.Request.URL)
			p.mu.Unlock()
		case *network.EventLoadingFailed:
			p.mu.Lock()
			p.failed = append(p.failed, e.ErrorText+" "+string(e.RequestID))
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return p
}

// Requests lists every URL the page requested so far.
func (p *page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// RequestsOutside lists the requests that are not file:// URLs under dir
// (a report may load its own evidence and nothing else).
func (p *page) RequestsOutside(dir string) []string {
	prefix := "file://" + filepath.ToSlash(dir) + "/"
	var out []string
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, p *page, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %q: %v", expr, err)
	}
	return v
}

// BrokenImages lists the images of the page that did not load (every
// <img> must have a natural width once the page has loaded).
func BrokenImages(t testing.TB, p *page) []string {
	return Eval[[]string](t, p, `Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))`)
}

// Screenshot saves a full-page PNG of the page as name.png in
// $SOLOPI_TEST_ARTIFACTS, for a person to look at, and returns its path.
// Without that directory it takes none: a full-page PNG costs Chromium
// more CPU than loading the page, and nothing reads it (the tests check
// the page through the DOM).
func Screenshot(t testing.TB, p *page, name string) string {
	t.Helper()
	dir := os.Getenv("SOLOPI_TEST_ARTIFACTS")
	if dir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
	return path
}
